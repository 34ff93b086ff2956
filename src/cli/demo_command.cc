// podtopo demo: the seed article's pod and the docs' pod-scope-mixed pod, admitted on the
// default node (preset:demo) with the seed configuration, printed as a table and explained
// (QoS, each container's pool and why, the hints, the merged hint).
// It also writes the picture of the node (podtopo-demo.html, or --html FILE) and says where.
#include <filesystem>
#include <ostream>
#include <system_error>

#include "CLI/CLI.hpp"
#include "api/pod_gates.h"
#include "api/pod_yaml.h"
#include "cli/cli.h"
#include "cli/demo_pods.h"
#include "cli/node_flags.h"
#include "explain/explain.h"
#include "render/node_picture.h"
#include "util/file.h"
#include "util/format.h"

namespace podtopo::cli {
namespace {

// Writes the HTML picture of `node` with `pods` to `path`; returns the absolute path written.
absl::StatusOr<std::string> WritePicture(const Node& node, const std::vector<PodAllocation>& pods,
                                         const std::string& path) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  std::string where = ec ? path : abs.lexically_normal().string();
  absl::Status written = WriteFileAtomically(where, RenderHtml(BuildNodePicture(node, pods)));
  if (!written.ok()) return written;
  return where;
}

}  // namespace

void AddDemoCommand(CLI::App& app, Context& ctx) {
  auto flags = std::make_shared<NodeFlags>();
  auto html = std::make_shared<std::string>("podtopo-demo.html");
  CLI::App* dc = app.add_subcommand(
      "demo", "Admit the seed article's pod and the docs' pod-scope-mixed pod and explain them");
  flags->Add(dc);
  dc->add_option("--html", *html, "where to write the picture of the node (HTML)")
      ->capture_default_str();
  dc->callback([flags, html, &ctx] {
    auto node = flags->CreateNode(StateDirUse::kCreate, ctx);
    if (node == nullptr) return;
    std::vector<Pod> pods;
    for (const auto& [name, yaml] : DemoPods()) {
      auto parsed = ParsePods(yaml, name, {.gates = PodGatesFromConfig(node->config())});
      if (!parsed.ok()) return ctx.Fail(parsed.status());
      for (auto& p : *parsed) pods.push_back(std::move(p));
    }
    std::vector<PodAllocation> results;
    for (const auto& pod : pods) {
      auto r = AdmitPod(*node, pod, ctx);
      if (!r.ok()) return ctx.Fail(r.status());
      results.push_back(std::move(*r));
    }
    auto picture = WritePicture(*node, results, *html);
    if (!picture.ok()) return ctx.Fail(picture.status());
    // Where the picture went: on stdout with the table, on stderr for json/yaml (so stdout
    // stays one document).
    std::string picture_note =
        fmt::format("Picture of the node: {} (open it in a browser)\n", *picture);
    *ctx.out << fmt::format(
        "Node {}: {} CPUs, kubelet configuration: cpuManagerPolicy {}, memoryManagerPolicy "
        "{}, topologyManagerPolicy {}, scope {}\n\n",
        node->topology().source, node->topology().cpus.AllCpus().Size(),
        node->config().cpu_manager_policy, node->config().memory_manager_policy,
        node->config().topology_manager_policy, node->config().topology_manager_scope);
    PrintAllocations(results, *node, flags->output, ctx);
    if (flags->output != "table" && flags->output != "wide") {
      *ctx.err << picture_note;
      return;
    }
    // The explanation of each decision, as `podtopo explain` prints it (without its what-if
    // suggestions: both demo pods are admitted).
    *ctx.out << "\nWhy:\n\n";
    for (const auto& p : results) *ctx.out << explain::RenderText(explain::Explain(p)) << "\n";
    *ctx.out << "\n" << picture_note;
  });
}

}  // namespace podtopo::cli
