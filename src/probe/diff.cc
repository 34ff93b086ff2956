#include "probe/diff.h"

#include <cmath>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "util/file.h"

namespace podtopo::probe {
namespace {

constexpr const char* kWakeupMetrics[] = {"p50Us", "p99Us", "p999Us", "maxUs"};

// "worse" / "better" / "" for a figure where larger is worse.
std::string Moved(double before, double after, double ratio_limit, double floor) {
  if (before < floor && after < floor) return "";
  if (before <= 0) return after > 0 ? "worse" : "";
  double ratio = after / before;
  if (ratio >= ratio_limit) return "worse";
  if (ratio <= 1 / ratio_limit) return "better";
  return "";
}

nlohmann::json Row(double before, double after, double ratio_limit, double floor) {
  nlohmann::json row = {{"before", before}, {"after", after}};
  if (before > 0) row["ratio"] = std::round(after / before * 100) / 100;
  row["moved"] = Moved(before, after, ratio_limit, floor);
  return row;
}

std::string Ratio(const nlohmann::json& row) {
  return row.contains("ratio") ? fmt::format("{:.2f}x", row["ratio"].get<double>()) : "-";
}

}  // namespace

absl::Status CheckReport(const std::string& name, const nlohmann::json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError(name + ": not a JSON object");
  for (const char* key : {"memoryLatencyNs", "wakeup"}) {
    if (!j.contains(key) || !j[key].is_object()) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: \"{}\" missing or not an object: not a podtopo probe -o json report", name, key));
    }
  }
  for (const auto& [node, ns] : j["memoryLatencyNs"].items()) {
    if (!ns.is_number()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: memoryLatencyNs.{} is not a number", name, node));
    }
  }
  for (const auto& [cpu, w] : j["wakeup"].items()) {
    if (!w.is_object()) {
      return absl::InvalidArgumentError(fmt::format("{}: wakeup.{} is not an object", name, cpu));
    }
    for (const char* m : kWakeupMetrics) {
      if (w.contains(m) && !w[m].is_number()) {
        return absl::InvalidArgumentError(
            fmt::format("{}: wakeup.{}.{} is not a number", name, cpu, m));
      }
    }
  }
  if (j.contains("involuntarySwitches") && !j["involuntarySwitches"].is_number()) {
    return absl::InvalidArgumentError(fmt::format("{}: involuntarySwitches is not a number", name));
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> LoadReport(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError(path + ": not JSON (podtopo probe -o json writes it)");
  }
  if (absl::Status s = CheckReport(path, j); !s.ok()) return s;
  return j;
}

nlohmann::json DiffReports(const nlohmann::json& before, const nlohmann::json& after,
                           double limit) {
  nlohmann::json d;
  d["moveRatio"] = limit;
  for (const char* key : {"cpus", "mems", "schedFifo", "bufferBytes", "interval", "duration"}) {
    if (before.contains(key) || after.contains(key)) {
      d["settings"][key] = {{"before", before.value(key, nlohmann::json())},
                            {"after", after.value(key, nlohmann::json())}};
    }
  }
  nlohmann::json memory = nlohmann::json::array();
  std::set<std::string> nodes;
  for (const auto& [k, v] : before["memoryLatencyNs"].items()) nodes.insert(k);
  for (const auto& [k, v] : after["memoryLatencyNs"].items()) nodes.insert(k);
  for (const std::string& node : nodes) {
    const auto& b = before["memoryLatencyNs"];
    const auto& a = after["memoryLatencyNs"];
    nlohmann::json row;
    if (!b.contains(node)) {
      row = {{"onlyIn", "after"}, {"after", a[node]}};
    } else if (!a.contains(node)) {
      row = {{"onlyIn", "before"}, {"before", b[node]}};
    } else {
      row = Row(b[node].get<double>(), a[node].get<double>(), limit, 0);
    }
    row["node"] = node;
    memory.push_back(std::move(row));
  }
  d["memoryLatencyNs"] = std::move(memory);

  nlohmann::json wakeup = nlohmann::json::array();
  std::set<int> cpus;
  for (const auto& [k, v] : before["wakeup"].items()) cpus.insert(std::atoi(k.c_str()));
  for (const auto& [k, v] : after["wakeup"].items()) cpus.insert(std::atoi(k.c_str()));
  for (int cpu : cpus) {
    std::string key = std::to_string(cpu);
    const auto& b = before["wakeup"];
    const auto& a = after["wakeup"];
    nlohmann::json row = {{"cpu", key}};
    if (!b.contains(key) || !a.contains(key)) {
      row["onlyIn"] = b.contains(key) ? "before" : "after";
    } else {
      for (const char* m : kWakeupMetrics) {
        if (b[key].contains(m) && a[key].contains(m)) {
          // Below 1us either way, a ratio says nothing.
          row[m] = Row(b[key][m].get<double>(), a[key][m].get<double>(), limit, 1.0);
        }
      }
    }
    wakeup.push_back(std::move(row));
  }
  d["wakeup"] = std::move(wakeup);
  if (before.contains("involuntarySwitches") && after.contains("involuntarySwitches")) {
    // Counts: a handful either way is noise; moved from 10 up.
    d["involuntarySwitches"] = Row(before["involuntarySwitches"].get<double>(),
                                   after["involuntarySwitches"].get<double>(), limit, 10);
  }
  int moved = 0;
  for (const auto& row : d["memoryLatencyNs"]) moved += row.value("moved", "") != "";
  for (const auto& row : d["wakeup"]) {
    for (const char* m : kWakeupMetrics) {
      if (row.contains(m)) moved += row[m]["moved"] != "";
    }
  }
  if (d.contains("involuntarySwitches")) moved += d["involuntarySwitches"]["moved"] != "";
  d["moved"] = moved;
  return d;
}

std::string RenderDiff(const nlohmann::json& d) {
  std::string out;
  auto line = [&out](std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out += s + "\n";
  };
  line(fmt::format("podtopo probe diff: after / before; \"worse\" or \"better\" beyond {:.2f}x",
                   d["moveRatio"].get<double>()));
  if (d.contains("settings")) {
    for (const auto& [key, v] : d["settings"].items()) {
      if (v["before"] != v["after"]) {
        line(fmt::format("note: {} differs: {} before, {} after", key, v["before"].dump(),
                         v["after"].dump()));
      }
    }
  }
  line("");
  line("MEMORY LATENCY (ns per load)");
  line(fmt::format("{:<6}{:>10}{:>10}{:>8}  {}", "NODE", "BEFORE", "AFTER", "RATIO", "MOVED"));
  for (const auto& row : d["memoryLatencyNs"]) {
    std::string node = row["node"];
    if (row.contains("onlyIn")) {
      line(fmt::format("{:<6}only in the {} report", node, row["onlyIn"].get<std::string>()));
      continue;
    }
    line(fmt::format("{:<6}{:>10.1f}{:>10.1f}{:>8}  {}", node, row["before"].get<double>(),
                     row["after"].get<double>(), Ratio(row), row["moved"].get<std::string>()));
  }
  line("");
  line("WAKE-UP LATENCY (us)");
  line(fmt::format("{:<5}{:<8}{:>10}{:>10}{:>8}  {}", "CPU", "", "BEFORE", "AFTER", "RATIO",
                   "MOVED"));
  for (const auto& row : d["wakeup"]) {
    std::string cpu = row["cpu"];
    if (row.contains("onlyIn")) {
      line(fmt::format("{:<5}only in the {} report", cpu, row["onlyIn"].get<std::string>()));
      continue;
    }
    for (const char* m : kWakeupMetrics) {
      if (!row.contains(m)) continue;
      const auto& r = row[m];
      std::string name = std::string(m).substr(0, std::string(m).size() - 2);
      line(fmt::format("{:<5}{:<8}{:>10.1f}{:>10.1f}{:>8}  {}", cpu, name,
                       r["before"].get<double>(), r["after"].get<double>(), Ratio(r),
                       r["moved"].get<std::string>()));
      cpu = "";
    }
  }
  if (d.contains("involuntarySwitches")) {
    const auto& r = d["involuntarySwitches"];
    line("");
    line(fmt::format("involuntary context switches: {} before, {} after ({}) {}",
                     r["before"].get<double>(), r["after"].get<double>(), Ratio(r),
                     r["moved"].get<std::string>()));
  }
  line("");
  line(fmt::format("{} figure{} moved", d["moved"].get<int>(), d["moved"] == 1 ? "" : "s"));
  return out;
}

}  // namespace podtopo::probe
