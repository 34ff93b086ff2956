// podtopo topology --node SPEC [-o table|json|svg|html]
#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "render/node_picture.h"
#include "render/topology_table.h"
#include "topology/node_source.h"
#include "topology/topology_json.h"

namespace podtopo::cli {

void AddTopologyCommands(CLI::App& app, Context& ctx) {
  struct Opts {
    std::string node = "preset:demo";
    std::string output = "table";
  };
  auto opts = std::make_shared<Opts>();
  CLI::App* cmd = app.add_subcommand("topology", "Show a node's topology as the kubelet sees it");
  cmd->add_option("--node", opts->node, "preset:NAME | FILE.json | FILE.xml | sysfs:DIR | local")
      ->capture_default_str();
  cmd->add_option("-o,--output", opts->output, "table | json | svg | html")
      ->check(CLI::IsMember({"table", "wide", "json", "svg", "html"}))
      ->capture_default_str();
  cmd->callback([opts, &ctx] {
    auto node = LoadNode(opts->node);
    if (!node.ok()) return ctx.Fail(node.status());
    if (opts->output == "json") {
      *ctx.out << WriteTopologyJson(*node);
    } else if (opts->output == "svg") {
      *ctx.out << RenderSvg(BuildTopologyPicture(*node));
    } else if (opts->output == "html") {
      *ctx.out << RenderHtml(BuildTopologyPicture(*node));
    } else {
      *ctx.out << RenderTopologyTable(*node);
    }
  });
}

}  // namespace podtopo::cli
