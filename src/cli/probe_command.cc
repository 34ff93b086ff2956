// podtopo probe and podtopo probe diff (../shared/DESIGN.md "Wave 3: podtopo probe";
// docs/verify.md). The measurements are in probe/; this file reads the flags and prints.
#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "probe/diff.h"
#include "probe/probe.h"

namespace podtopo::cli {

void AddProbeCommand(CLI::App& app, Context& ctx) {
  struct ProbeOpts {
    probe::ProbeFlags flags;
    std::string output = "table";
    std::string before, after;
    std::string diff_output = "table";
    double move_ratio = probe::kDefaultMoveRatio;
  };
  auto o = std::make_shared<ProbeOpts>();
  CLI::App* cmd = app.add_subcommand(
      "probe",
      "Measure what the placement does to a workload on the CPUs this process runs on: memory "
      "access latency to each NUMA node and wake-up latency per CPU (docs/verify.md)");
  cmd->add_option("--cpus", o->flags.cpus,
                  "CPUs to measure on (default: all this process may run on; must be among them)");
  cmd->add_option("--mems", o->flags.mems,
                  "NUMA nodes whose memory latency to measure (default: all this process may "
                  "allocate on)");
  cmd->add_option("--duration", o->flags.duration, "how long the wake-up measurement runs")
      ->capture_default_str();
  cmd->add_option("--interval", o->flags.interval, "wake-up period per CPU (cyclictest -i)")
      ->capture_default_str();
  cmd->add_option("--max-latency", o->flags.max_latency,
                  "exit 3 when a CPU's max wake-up latency is above this (e.g. 50us)");
  cmd->add_option("--priority", o->flags.priority,
                  "SCHED_FIFO priority of the wake-up threads (1-99; 0: SCHED_OTHER)")
      ->capture_default_str();
  cmd->add_option("--buffer", o->flags.buffer,
                  "pointer-chase buffer per NUMA node, e.g. 256M (default: 2 x the last-level "
                  "cache, 16M-1G)");
  cmd->add_flag("--no-memory", o->flags.no_memory, "skip the memory latency measurement");
  cmd->add_flag("--no-wakeup", o->flags.no_wakeup, "skip the wake-up latency measurement");
  cmd->add_option("-o,--output", o->output, "table | json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  CLI::App* diff = cmd->add_subcommand(
      "diff", "Compare two podtopo probe -o json reports (before, after) and say what moved");
  diff->add_option("before", o->before, "the report before the change")->required();
  diff->add_option("after", o->after, "the report after the change")->required();
  diff->add_option("--ratio", o->move_ratio,
                   "a figure moved when after/before is at least this, or at most its inverse")
      ->check(CLI::Range(1.0, 1000.0))
      ->capture_default_str();
  diff->add_option("-o,--output", o->diff_output, "table | json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->require_subcommand(0, 1);

  diff->callback([o, &ctx] {
    auto before = probe::LoadReport(o->before);
    if (!before.ok()) return ctx.Fail(before.status());
    auto after = probe::LoadReport(o->after);
    if (!after.ok()) return ctx.Fail(after.status());
    nlohmann::json d = probe::DiffReports(*before, *after, o->move_ratio);
    d["beforeFile"] = o->before;
    d["afterFile"] = o->after;
    if (o->diff_output == "json") {
      *ctx.out << d.dump(2) << "\n";
    } else {
      *ctx.out << probe::RenderDiff(d);
    }
  });
  cmd->callback([o, diff, &ctx] {
    if (diff->parsed()) return;
    auto opts = probe::ResolveOptions(o->flags, probe::ReadSystem());
    if (!opts.ok()) return ctx.Fail(opts.status());
    probe::ProbeReport report = probe::RunProbe(*opts);
    if (o->output == "json") {
      *ctx.out << probe::ToJson(report).dump(2) << "\n";
    } else {
      *ctx.out << probe::RenderTable(report);
    }
    if (!report.over_max_latency.empty()) ctx.exit_code = kExitRejected;
  });
}

}  // namespace podtopo::cli
