// podtopo verify's output: JSON (stable key order), a table, and an HTML picture.
#include <algorithm>
#include <sstream>

#include "fmt/format.h"
#include "verify/verify.h"

namespace podtopo::verify {
namespace {

nlohmann::ordered_json SetOrNull(const std::optional<CpuSet>& s) {
  return s ? nlohmann::ordered_json(s->String()) : nlohmann::ordered_json(nullptr);
}

std::string Show(const std::optional<CpuSet>& s) { return s ? s->String() : "-"; }

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Name(const Observed& o) {
  return fmt::format("{}/{}/{}", o.ref.pod_namespace, o.ref.pod, o.ref.name);
}

std::string FindingWhere(const Finding& f) {
  std::string w = f.pod_namespace.empty() ? f.pod : f.pod_namespace + "/" + f.pod;
  if (!f.container.empty()) w += "/" + f.container;
  return w;
}

}  // namespace

nlohmann::ordered_json ReportJson(const Report& report) {
  nlohmann::ordered_json j;
  j["containers"] = nlohmann::ordered_json::array();
  for (const Observed& o : report.containers) {
    nlohmann::ordered_json c;
    c["namespace"] = o.ref.pod_namespace;
    c["pod"] = o.ref.pod;
    c["container"] = o.ref.name;
    c["containerId"] = o.ref.id;
    c["podUid"] = o.ref.pod_uid;
    c["cgroup"] = o.actual.cgroup;
    c["cgroupVersion"] = o.actual.cgroup_version;
    nlohmann::ordered_json intent;
    intent["cpus"] = SetOrNull(o.intent_cpus);
    intent["mems"] = SetOrNull(o.intent_mems);
    intent["exclusive"] = o.exclusive;
    intent["source"] = o.intent_source.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(o.intent_source);
    c["intent"] = std::move(intent);
    nlohmann::ordered_json actual;
    actual["cpus"] = SetOrNull(o.actual.cpus);
    actual["mems"] = SetOrNull(o.actual.mems);
    actual["tasks"] = nlohmann::ordered_json::array();
    for (const Task& t : o.actual.tasks) {
      actual["tasks"].push_back({{"pid", t.pid},
                                 {"comm", t.comm},
                                 {"cpusAllowed", t.cpus_allowed.String()},
                                 {"memsAllowed", t.mems_allowed.String()}});
    }
    actual["numaBytes"] = nlohmann::ordered_json::object();
    for (const auto& [node, bytes] : o.actual.numa_bytes) {
      actual["numaBytes"][std::to_string(node)] = bytes;
    }
    c["actual"] = std::move(actual);
    j["containers"].push_back(std::move(c));
  }
  j["findings"] = nlohmann::ordered_json::array();
  for (const Finding& f : report.findings) {
    nlohmann::ordered_json x;
    x["kind"] = f.kind;
    x["namespace"] = f.pod_namespace;
    x["pod"] = f.pod;
    x["container"] = f.container;
    x["detail"] = f.detail;
    if (f.pid) x["pid"] = *f.pid;
    if (!f.comm.empty()) x["comm"] = f.comm;
    if (f.bytes) x["bytes"] = *f.bytes;
    if (f.cpu_seconds) x["cpuSeconds"] = *f.cpu_seconds;
    if (!f.cpus.empty()) x["cpus"] = f.cpus;
    j["findings"].push_back(std::move(x));
  }
  j["problems"] = report.problems;
  return j;
}

std::string ReportTable(const Report& report) {
  std::ostringstream out;
  size_t w = 9;
  for (const Observed& o : report.containers) w = std::max(w, Name(o).size());
  out << fmt::format("{:<{}}  {:<14} {:<14} {:<9} {:<9} {:>5}  {}\n", "CONTAINER", w,
                     "INTENT CPUS", "ACTUAL CPUS", "INT MEMS", "ACT MEMS", "TASKS", "INTENT FROM");
  for (const Observed& o : report.containers) {
    std::string from = o.intent_source.empty() ? "-" : o.intent_source;
    if (o.exclusive) from += " (exclusive)";
    out << fmt::format("{:<{}}  {:<14} {:<14} {:<9} {:<9} {:>5}  {}\n", Name(o), w,
                       Show(o.intent_cpus), Show(o.actual.cpus), Show(o.intent_mems),
                       Show(o.actual.mems), o.actual.tasks.size(), from);
  }
  out << "\n";
  if (report.findings.empty()) {
    out << "no findings: every container has what the kubelet intends\n";
  } else {
    out << fmt::format("{} finding(s):\n", report.findings.size());
    for (const Finding& f : report.findings) {
      out << fmt::format("  {:<21} {}: {}\n", f.kind, FindingWhere(f), f.detail);
    }
  }
  if (!report.problems.empty()) {
    out << fmt::format("\n{} problem(s) reading the node (partial report):\n", report.problems.size());
    for (const std::string& p : report.problems) out << "  " << p << "\n";
  }
  return out.str();
}

std::string ReportHtml(const Report& report) {
  CpuSet cpus;
  for (const Observed& o : report.containers) {
    if (o.intent_cpus) cpus.UnionWith(*o.intent_cpus);
    if (o.actual.cpus) cpus.UnionWith(*o.actual.cpus);
  }
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>podtopo verify</title>\n"
         "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}"
         "td.c{width:1.6em;text-align:center}"
         ".ok{background:#7cc47c}.okx{background:#2e8b57;color:#fff}"
         ".missing{background:#fff;outline:2px dashed #888;outline-offset:-3px}"
         ".extra{background:#e05050;color:#fff}.legend span{display:inline-block;width:1.2em;"
         "height:1em;margin:0 4px 0 12px;vertical-align:middle}</style></head><body>\n"
         "<h1>podtopo verify</h1>\n<p class=\"legend\">Each row is a container, each column a "
         "CPU: the intent (the kubelet's checkpoints) is the cell's frame, the reality (the "
         "cgroup's cpuset.cpus) its fill."
         "<span class=\"okx\"></span>exclusive, as intended<span class=\"ok\"></span>shared, as "
         "intended<span class=\"missing\"></span>intended, not there<span class=\"extra\">"
         "</span>there, not intended</p>\n<table><tr><th>container</th>";
  cpus.ForEach([&](int cpu) { out << "<th>" << cpu << "</th>"; });
  out << "<th>mems intent / actual</th><th>NUMA bytes</th></tr>\n";
  for (const Observed& o : report.containers) {
    out << "<tr><td>" << Escape(Name(o)) << "</td>";
    cpus.ForEach([&](int cpu) {
      bool want = o.intent_cpus && o.intent_cpus->Contains(cpu);
      bool have = o.actual.cpus && o.actual.cpus->Contains(cpu);
      const char* cls = want && have ? (o.exclusive ? "okx" : "ok")
                        : want       ? "missing"
                        : have       ? "extra"
                                     : "";
      out << "<td class=\"c " << cls << "\"></td>";
    });
    std::string numa;
    for (const auto& [node, bytes] : o.actual.numa_bytes) {
      numa += fmt::format("{}N{}: {} MiB", numa.empty() ? "" : ", ", node, bytes >> 20);
    }
    out << "<td>" << Show(o.intent_mems) << " / " << Show(o.actual.mems) << "</td><td>"
        << Escape(numa) << "</td></tr>\n";
  }
  out << "</table>\n<h2>" << report.findings.size() << " finding(s)</h2>\n";
  if (!report.findings.empty()) {
    out << "<table><tr><th>kind</th><th>where</th><th>detail</th></tr>\n";
    for (const Finding& f : report.findings) {
      out << "<tr><td>" << Escape(f.kind) << "</td><td>" << Escape(FindingWhere(f)) << "</td><td>"
          << Escape(f.detail) << "</td></tr>\n";
    }
    out << "</table>\n";
  }
  if (!report.problems.empty()) {
    out << "<h2>Problems reading the node (partial report)</h2><ul>\n";
    for (const std::string& p : report.problems) out << "<li>" << Escape(p) << "</li>\n";
    out << "</ul>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace podtopo::verify
