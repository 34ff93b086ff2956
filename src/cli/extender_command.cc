// podtopo extender: the kube-scheduler's HTTP extender (docs/scheduler.md).
//
// Three parts around one extender::Extender: an informer over the NodeResourceTopology objects
// (the node state), an informer over the bound pods (which release reservations), and the HTTP
// server the scheduler calls (extender/server.h), whose /bind posts the Binding with its own
// API client.
#include <chrono>
#include <memory>
#include <optional>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "cli/daemon_run.h"
#include "config/duration.h"
#include "extender/extender.h"
#include "extender/server.h"
#include "kube/api_client.h"
#include "kube/informer.h"
#include "kube/kubeconfig.h"
#include "metrics/kubelet_metrics.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace podtopo::cli {
namespace {

constexpr char kNrtPath[] = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies";
// Bound pods only (spec.nodeName!=""): the pods that hold resources on a node.
constexpr char kPodsPath[] = "/api/v1/pods?fieldSelector=spec.nodeName%21%3D";

struct ExtenderFlags {
  std::string listen;
  std::string kubeconfig;
  std::string service_account_dir = kube::kServiceAccountDir;
  std::string node_pool;
  std::string reservation_ttl = "60s";
  std::string max_request_bytes = "67108864";
  size_t max_nodes = 20000;
  int threads = 8;
  std::string log_level = "info";
};

// POST /api/v1/namespaces/NS/pods/NAME/binding: what the default binder does.
absl::Status PostBinding(kube::ApiClient& client, const extender::BindingArgs& a) {
  nlohmann::json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", {{"name", a.pod_name}, {"namespace", a.pod_namespace}}},
      {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", a.node}}}};
  if (!a.pod_uid.empty()) binding["metadata"]["uid"] = a.pod_uid;
  auto r = client.Post(fmt::format("/api/v1/namespaces/{}/pods/{}/binding",
                                   kube::EscapePathSegment(a.pod_namespace),
                                   kube::EscapePathSegment(a.pod_name)),
                       binding.dump());
  if (!r.ok()) return r.status();
  if (!r->ok()) return r->Error();
  return absl::OkStatus();
}

extender::SourceStatus StatusOf(const char* name, const kube::Informer& informer) {
  kube::InformerStats s = informer.Stats();
  return {.name = name, .synced = s.synced, .errors = s.errors, .last_error = s.last_error};
}

void RunExtender(const ExtenderFlags& f, Context& ctx) {
  // The address first: a typo in it is reported before anything connects.
  if (auto addr = metrics::ListenAddress(f.listen, "--listen"); !addr.ok()) {
    return ctx.Fail(addr.status());
  }
  extender::ExtenderOptions eo;
  eo.node_pool_file = f.node_pool;
  eo.max_nodes = f.max_nodes;
  auto ttl = config::Duration::Parse(f.reservation_ttl);
  if (!ttl.ok() || ttl->nanos() < config::Duration::kSecond) {
    return ctx.Fail(fmt::format(
        "--reservation-ttl {:?}: expected a duration of at least 1s such as 60s or 2m",
        f.reservation_ttl));
  }
  eo.reservation_ttl = std::chrono::seconds(ttl->nanos() / config::Duration::kSecond);
  {
    size_t used = 0;
    unsigned long long bytes = 0;
    try {
      bytes = std::stoull(f.max_request_bytes, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != f.max_request_bytes.size() || bytes < 1024 || bytes > (1ULL << 32)) {
      return ctx.Fail(fmt::format(
          "--max-request-bytes {:?}: expected a number of bytes from 1024 to 4294967296",
          f.max_request_bytes));
    }
    eo.max_request_bytes = bytes;
  }
  if (f.max_nodes < 1) return ctx.Fail("--max-nodes 0: expected at least 1");
  if (f.threads < 1 || f.threads > 256) {
    return ctx.Fail(fmt::format("--threads {}: expected 1 to 256", f.threads));
  }

  // Credentials: --kubeconfig, else the pod's service account.
  std::optional<kube::Credentials> creds;
  if (!f.kubeconfig.empty()) {
    auto c = kube::LoadKubeconfig(f.kubeconfig);
    if (!c.ok()) return ctx.Fail(fmt::format("--kubeconfig: {}", std::string(c.status().message())));
    creds = std::move(*c);
  } else if (kube::InCluster()) {
    auto c = kube::InClusterCredentials(f.service_account_dir);
    if (!c.ok()) return ctx.Fail(c.status());
    creds = std::move(*c);
  } else {
    return ctx.Fail(
        "--kubeconfig: required outside a pod (the extender reads NodeResourceTopology objects "
        "and pods from the API server)");
  }

  auto ext = extender::Extender::Create(eo);
  if (!ext.ok()) return ctx.Fail(ext.status());
  auto binder = kube::ApiClient::Create(*creds, {.timeout = std::chrono::seconds(10)});
  if (!binder.ok()) return ctx.Fail(binder.status());
  if (!StartLogging(f.log_level, ctx)) return;
  StopSignals stop;  // before any thread starts

  extender::Extender* e = ext->get();
  auto nrts = kube::Informer::Start(*creds, {.path = kNrtPath}, [e](const kube::WatchEvent& ev) {
    if (ev.type == kube::WatchEvent::Type::kDeleted) {
      e->DeleteNrt(ev.object.value("/metadata/name"_json_pointer, std::string()));
    } else {
      e->UpsertNrt(ev.object);
    }
  });
  if (!nrts.ok()) return ctx.Fail(nrts.status());
  auto pods = kube::Informer::Start(*creds, {.path = kPodsPath}, [e](const kube::WatchEvent& ev) {
    e->ObservePod(ev.object, ev.type == kube::WatchEvent::Type::kDeleted);
  });
  if (!pods.ok()) return ctx.Fail(pods.status());

  kube::ApiClient* client = binder->get();
  kube::Informer* nrt_informer = nrts->get();
  kube::Informer* pod_informer = pods->get();
  extender::ServerOptions so;
  so.listen = f.listen;
  so.threads = f.threads;
  so.max_request_bytes = eo.max_request_bytes;
  so.bind = [client](const extender::BindingArgs& a) {
    absl::Status s = PostBinding(*client, a);
    if (s.ok()) {
      spdlog::debug("bound {}/{} to {}", a.pod_namespace, a.pod_name, a.node);
    } else {
      spdlog::warn("binding {}/{} to {}: {}", a.pod_namespace, a.pod_name, a.node,
                   std::string(s.message()));
    }
    return s;
  };
  so.sources = [nrt_informer, pod_informer] {
    return std::vector<extender::SourceStatus>{StatusOf("noderesourcetopologies", *nrt_informer),
                                               StatusOf("pods", *pod_informer)};
  };
  auto server = extender::Server::Start(e, std::move(so));
  if (!server.ok()) {
    (*nrts)->Stop();
    (*pods)->Stop();
    return ctx.Fail(server.status());
  }
  spdlog::info("serving the scheduler extender on http://{} (POST /filter, /prioritize, /bind; "
               "GET /healthz, /readyz, /metrics); reading {} ({})",
               (*server)->address(), creds->server, creds->source);
  if (!(*nrts)->WaitForSync(std::chrono::seconds(10))) {
    spdlog::warn("no NodeResourceTopology list yet after 10s ({}); every node fails /filter "
                 "until one arrives",
                 (*nrts)->Stats().last_error);
  }
  stop.Wait();
  (*server)->Stop();  // first: no request may reach an extender whose informers are gone
  client->Cancel();
  (*nrts)->Stop();
  (*pods)->Stop();
  spdlog::info("stopped");
  spdlog::default_logger()->flush();
}

}  // namespace

void AddExtenderCommand(CLI::App& app, Context& ctx) {
  auto f = std::make_shared<ExtenderFlags>();
  CLI::App* cmd = app.add_subcommand(
      "extender",
      "kube-scheduler extender: filter and score nodes as their kubelets' resource managers "
      "would admit the pod, from the cluster's NodeResourceTopology objects (docs/scheduler.md)");
  cmd->add_option("--listen", f->listen,
                  "serve the extender protocol on HOST:PORT (the scheduler's urlPrefix is "
                  "http://HOST:PORT; :PORT = 127.0.0.1:PORT)")
      ->required();
  cmd->add_option("--kubeconfig", f->kubeconfig,
                  "read NodeResourceTopology objects and pods from, and bind pods through, this "
                  "kubeconfig's API server; in a pod without it: the pod's service account");
  cmd->add_option("--service-account-dir", f->service_account_dir,
                  "in a pod (KUBERNETES_SERVICE_HOST set) without --kubeconfig: the service "
                  "account's token and ca.crt (the token is re-read on every request)")
      ->capture_default_str();
  cmd->add_option("--node-pool", f->node_pool,
                  "kubelet configurations by node pool, for nodes whose NodeResourceTopology does "
                  "not carry podtopo's attributes (docs/scheduler.md)");
  cmd->add_option("--reservation-ttl", f->reservation_ttl,
                  "how long a pod bound through the extender holds its reservation if its node's "
                  "NodeResourceTopology never shows it")
      ->capture_default_str();
  cmd->add_option("--max-request-bytes", f->max_request_bytes,
                  "larger request bodies are refused (HTTP 413) before they are read")
      ->capture_default_str();
  cmd->add_option("--max-nodes", f->max_nodes,
                  "more candidate nodes in one request are refused (HTTP 400)")
      ->capture_default_str();
  cmd->add_option("--threads", f->threads, "HTTP worker threads (concurrent requests)")
      ->capture_default_str();
  cmd->add_option("--log-level", f->log_level, "trace | debug | info | warn | error | off")
      ->capture_default_str();
  cmd->callback([f, &ctx] { RunExtender(*f, ctx); });
}

}  // namespace podtopo::cli
