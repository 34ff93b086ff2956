// podtopo client list | get NAMESPACE/NAME | allocatable: a PodResources v1 client that counts a
// pod's pod-level and container-level resources once (docs/client.md).
#include <memory>
#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "client/client_render.h"
#include "client/pod_view.h"
#include "client/podresources_client.h"
#include "topology/node_source.h"
#include "util/format.h"
#include "util/unix_socket.h"

namespace podtopo::cli {
namespace {

struct ClientFlags {
  std::string socket = client::kDefaultSocket;
  std::string output = "table";
  std::string node = "local";
  double timeout_seconds = 10;

  void Add(CLI::App* cmd) {
    cmd->add_option("--socket", socket,
                    "the kubelet's PodResources socket (a path, relative or absolute, or "
                    "unix:PATH)")
        ->capture_default_str();
    cmd->add_option("-o,--output", output, "table | wide | json")
        ->check(CLI::IsMember({"table", "wide", "json"}))
        ->capture_default_str();
    cmd->add_option("--node", node,
                    "the node's topology, to total CPUs per NUMA node (preset:NAME | FILE.json | "
                    "FILE.xml | sysfs:DIR | local); the API does not say where a CPU is")
        ->capture_default_str();
    cmd->add_option("--timeout", timeout_seconds, "seconds to wait for the server, per call")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
  }

  std::unique_ptr<client::PodResourcesClient> Connect(Context& ctx) const {
    absl::StatusOr<std::string> path = UnixSocketPath("--socket", socket);
    if (!path.ok()) {
      ctx.Fail(path.status());
      return nullptr;
    }
    client::ClientOptions options{
        .socket = *path,
        .timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000))};
    auto c = client::PodResourcesClient::Connect(options);
    if (!c.ok()) {
      ctx.Fail(c.status());
      return nullptr;
    }
    return std::move(*c);
  }

  // The CPU -> NUMA map. An explicit --node must load; the default (this machine) is best
  // effort. Returns false after reporting an error.
  bool NumaMap(client::NumaMap* map, bool* explicit_node, CLI::App* cmd, Context& ctx) const {
    *explicit_node = cmd->count("--node") > 0;
    auto topology = LoadNode(node);
    if (!topology.ok()) {
      if (*explicit_node) {
        ctx.Fail(topology.status());
        return false;
      }
      return true;  // no map: CPUs are totalled as "?"
    }
    for (int id : topology->cpus.NumaNodes()) (*map)[id] = topology->cpus.CpusInNuma(id);
    return true;
  }
};

bool MapsElsewhere(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) {
    if (w.find("on no NUMA node") != std::string::npos) return true;
  }
  return false;
}

void NoteOtherNode(const ClientFlags& flags, Context& ctx) {
  *ctx.err << fmt::format(
      "podtopo: note: the server reports CPUs this machine ({}) does not have; per-NUMA CPU "
      "totals are shown as \"?\": pass --node with the server's node topology\n",
      flags.node);
}

void PrintWarnings(const std::vector<std::string>& warnings, const std::string& what,
                   Context& ctx) {
  for (const auto& w : warnings) *ctx.err << "podtopo: warning: " << what << w << "\n";
}

// Builds the views of `pods` with `map`; when the map is this machine's (no --node) and does not
// hold the server's CPUs, rebuilds them without a map and says so once.
bool BuildViews(const google::protobuf::RepeatedPtrField<v1::PodResources>& pods,
                client::NumaMap* map, bool explicit_node, const ClientFlags& flags,
                std::vector<client::PodView>* views, Context& ctx) {
  for (int pass = 0; pass < 2; ++pass) {
    views->clear();
    bool elsewhere = false;
    for (const auto& p : pods) {
      auto v = client::BuildPodView(p, *map);
      if (!v.ok()) {
        ctx.Fail(fmt::format("{}: {}", flags.socket, v.status().message()));
        return false;
      }
      elsewhere |= MapsElsewhere(v->warnings);
      views->push_back(std::move(*v));
    }
    if (!elsewhere || explicit_node || map->empty()) return true;
    map->clear();
    NoteOtherNode(flags, ctx);
  }
  return true;
}

void Print(const nlohmann::ordered_json& json, Context& ctx) { *ctx.out << json.dump(2) << "\n"; }

}  // namespace

void AddClientCommands(CLI::App& app, Context& ctx) {
  CLI::App* client_cmd = app.add_subcommand(
      "client",
      "Read a kubelet's (or podtopo serve's) PodResources v1 API: pod-level and container-level "
      "CPUs and memory, counted once");
  client_cmd->require_subcommand(1);

  auto list = std::make_shared<ClientFlags>();
  CLI::App* lc = client_cmd->add_subcommand(
      "list",
      "Every pod with its CPUs, derived pod shared pool, exclusive containers and NUMA "
      "totals; then the node");
  list->Add(lc);
  lc->callback([list, lc, &ctx] {
    client::NumaMap map;
    bool explicit_node = false;
    if (!list->NumaMap(&map, &explicit_node, lc, ctx)) return;
    auto c = list->Connect(ctx);
    if (c == nullptr) return;
    auto response = c->List();
    if (!response.ok()) return ctx.Fail(response.status());
    std::vector<client::PodView> views;
    if (!BuildViews(response->pod_resources(), &map, explicit_node, *list, &views, ctx)) return;
    // The allocatable CPUs for the node line; a server without the call just omits it.
    std::optional<client::AllocatableView> allocatable;
    auto alloc = c->GetAllocatableResources();
    if (alloc.ok()) {
      auto view = client::BuildAllocatableView(*alloc, map);
      if (view.ok()) allocatable = std::move(*view);
    } else if (alloc.status().code() != absl::StatusCode::kUnimplemented) {
      *ctx.err << "podtopo: note: " << alloc.status().message() << "\n";
    }
    client::NodeUsage usage = client::SumUsage(views, map);
    for (const auto& v : views) {
      PrintWarnings(v.warnings, fmt::format("pod {}/{}: ", v.namespace_, v.name), ctx);
    }
    PrintWarnings(usage.warnings, "", ctx);
    const client::AllocatableView* a = allocatable ? &*allocatable : nullptr;
    if (list->output == "json") return Print(client::ListJson(views, usage, a), ctx);
    *ctx.out << client::RenderPodsTable(views, usage, a, list->output == "wide");
  });

  struct GetOpts {
    ClientFlags flags;
    std::string pod;
  };
  auto get = std::make_shared<GetOpts>();
  CLI::App* gc =
      client_cmd->add_subcommand("get", "One pod in detail: every container's pool and CPUs (Get)");
  gc->add_option("pod", get->pod, "NAMESPACE/NAME (a bare NAME means namespace default)")
      ->required();
  get->flags.Add(gc);
  gc->callback([get, gc, &ctx] {
    std::string ns = "default", name = get->pod;
    if (auto slash = get->pod.find('/'); slash != std::string::npos) {
      ns = get->pod.substr(0, slash);
      name = get->pod.substr(slash + 1);
    }
    if (ns.empty() || name.empty() || name.find('/') != std::string::npos) {
      return ctx.Fail(fmt::format("client get: \"{}\" is not NAMESPACE/NAME", get->pod));
    }
    client::NumaMap map;
    bool explicit_node = false;
    if (!get->flags.NumaMap(&map, &explicit_node, gc, ctx)) return;
    auto c = get->flags.Connect(ctx);
    if (c == nullptr) return;
    auto pod = c->Get(ns, name);
    if (!pod.ok()) return ctx.Fail(pod.status());
    google::protobuf::RepeatedPtrField<v1::PodResources> one;
    *one.Add() = *pod;
    std::vector<client::PodView> views;
    if (!BuildViews(one, &map, explicit_node, get->flags, &views, ctx)) return;
    PrintWarnings(views[0].warnings, "", ctx);
    if (get->flags.output == "json") return Print(client::PodJson(views[0]), ctx);
    *ctx.out << client::RenderPodDetail(views[0]);
  });

  auto alloc = std::make_shared<ClientFlags>();
  CLI::App* ac = client_cmd->add_subcommand(
      "allocatable", "The node's allocatable CPUs, memory and devices, per NUMA node");
  alloc->Add(ac);
  ac->callback([alloc, ac, &ctx] {
    client::NumaMap map;
    bool explicit_node = false;
    if (!alloc->NumaMap(&map, &explicit_node, ac, ctx)) return;
    auto c = alloc->Connect(ctx);
    if (c == nullptr) return;
    auto response = c->GetAllocatableResources();
    if (!response.ok()) return ctx.Fail(response.status());
    auto view = client::BuildAllocatableView(*response, map);
    if (view.ok() && !explicit_node && !map.empty() && MapsElsewhere(view->warnings)) {
      map.clear();
      NoteOtherNode(*alloc, ctx);
      view = client::BuildAllocatableView(*response, map);
    }
    if (!view.ok()) return ctx.Fail(fmt::format("{}: {}", alloc->socket, view.status().message()));
    PrintWarnings(view->warnings, "", ctx);
    if (alloc->output == "json") return Print(client::AllocatableJson(*view), ctx);
    *ctx.out << client::RenderAllocatableTable(*view);
  });
}

}  // namespace podtopo::cli
