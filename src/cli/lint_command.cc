// podtopo lint --config KUBELET.yaml [POD.yaml...] [--node SPEC] [-o table|json]
// The Pod-Level Resource Managers adoption checklist (src/lint/lint.h, docs/lint.md).
// Exit status: 1 when any finding is an error (or the input cannot be read), else 0;
// warnings and infos alone do not fail.
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "api/pod_yaml.h"
#include "cli/cli.h"
#include "cli/node_flags.h"
#include "config/kubelet_config.h"
#include "fmt/format.h"
#include "lint/lint.h"
#include "topology/node_source.h"

namespace podtopo::cli {
namespace {

// A pod manifest's field that its object does not have (`resource:` for `resources:`).
lint::Finding UnknownFieldFinding(const UnknownField& u) {
  lint::Finding f;
  f.severity = lint::Severity::kWarning;
  f.code = "pod-unknown-field";
  f.file = u.source;
  f.field = u.field;
  f.message = fmt::format("{}: {}: the API server refuses it (strict field validation) and "
                          "podtopo ignores it",
                          u.where, u.Message());
  f.hint = u.suggestion.empty() ? "remove it, or move it where the object has such a field"
                                : fmt::format("write `{}`", u.suggestion);
  return f;
}

}  // namespace

void AddLintCommand(CLI::App& app, Context& ctx) {
  struct LintOpts {
    std::string config;
    std::vector<std::string> pods;
    std::string node = "preset:demo";
    std::string output = "table";
    bool strict = false;
    std::string kubelet_version;
  };
  auto opts = std::make_shared<LintOpts>();
  CLI::App* cmd = app.add_subcommand(
      "lint",
      "Check a kubelet configuration (and pods) for Pod-Level Resource Managers adoption "
      "(exit 1 on any error finding)");
  cmd->add_option("--config", opts->config, "KubeletConfiguration file to check")->required();
  cmd->add_option("pods", opts->pods, "pod manifests (several documents or a List; - = stdin)");
  cmd->add_option("--node", opts->node, "preset:NAME | FILE.json | FILE.xml | sysfs:DIR | local")
      ->capture_default_str();
  AddStrictFlag(cmd, opts->strict);
  AddKubeletVersionFlag(cmd, opts->kubelet_version);
  cmd->add_option("-o,--output", opts->output, "table | json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->callback([opts, &ctx] {
    absl::StatusOr<std::string> version = ResolveKubeletVersion(opts->kubelet_version);
    if (!version.ok()) return ctx.Fail(version.status());
    auto parsed = config::LoadKubeletConfig(opts->config);
    if (!parsed.ok()) return ctx.Fail(parsed.status());
    parsed->config.kubelet_version = *version;
    // A file that is not a YAML mapping at all is bad input, as for every command.
    bool unreadable = false;
    for (const config::Finding& f : parsed->findings) {
      if (lint::IsUnreadable(f)) {
        *ctx.err << "podtopo: " << f.ToString() << "\n";
        unreadable = true;
      }
    }
    if (unreadable) {
      ctx.exit_code = kExitBadInput;
      return;
    }
    std::vector<Pod> pods;
    std::vector<UnknownField> unknown_fields;  // findings here (errors with --strict)
    if (!LoadAllPods(opts->pods, parsed->config, opts->strict, &pods, ctx, {}, &unknown_fields)) {
      return;
    }
    auto node = LoadNode(opts->node);
    if (!node.ok()) return ctx.Fail(node.status());

    lint::LintReport report = lint::Lint(*parsed, *node, pods);
    for (const UnknownField& u : unknown_fields) report.findings.push_back(UnknownFieldFinding(u));
    if (opts->output == "json") {
      *ctx.out << lint::RenderLintJson(report);
    } else {
      *ctx.out << lint::RenderLintTable(report);
    }
    if (report.HasErrors()) ctx.exit_code = kExitBadInput;
  });
}

}  // namespace podtopo::cli
