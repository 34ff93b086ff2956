// podtopo extender's request handling: any body to Filter, Prioritize or Bind (and any object
// as a NodeResourceTopology) never crashes, and every answer is valid JSON with status 200, 400
// or 413. The first byte picks the verb; the rest is the body.
#include <memory>
#include <string>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "extender/extender.h"
#include "extender/nrt_model.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"
#include "nlohmann/json.hpp"
#include "topology/presets.h"

namespace {

using podtopo::extender::Extender;
using podtopo::extender::HttpAnswer;

Extender& Shared() {
  static std::unique_ptr<Extender> ext = [] {
    podtopo::extender::ExtenderOptions o;
    o.max_request_bytes = 1 << 16;
    o.max_nodes = 64;
    auto e = Extender::Create(o).value();
    auto cfg = podtopo::config::SeedDefault();
    cfg.kubelet_version = "1.37";
    auto node = podtopo::Node::Create(podtopo::Preset("demo").value(), cfg, {}).value();
    auto pod = podtopo::ParsePods(
                   "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"f\"},"
                   "\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"limits\":"
                   "{\"cpu\":\"6\",\"memory\":\"1Gi\"}}}]}}",
                   "seed")
                   .value()
                   .front();
    (void)node->Admit(pod);
    e->UpsertNrt(podtopo::extender::NrtOfNode("node-a", *node));
    e->UpsertNrt(podtopo::extender::NrtOfNode("node-b", *node));
    return e;
  }();
  return *ext;
}

void CheckAnswer(const HttpAnswer& a, std::string_view body) {
  FUZZ_CHECK(a.status == 200 || a.status == 400 || a.status == 413,
             fmt::format("status {} for body of {} bytes", a.status, body.size()));
  FUZZ_CHECK(nlohmann::json::accept(a.body), fmt::format("answer is not JSON: {}", a.body));
}

}  // namespace

PODTOPO_FUZZ_TARGET(extender_request) {
  if (size == 0) return 0;
  Extender& ext = Shared();
  const std::string_view body = AsText(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      CheckAnswer(ext.Filter(body), body);
      break;
    case 1:
      CheckAnswer(ext.Prioritize(body), body);
      break;
    case 2:
      CheckAnswer(ext.Bind(body, [](const podtopo::extender::BindingArgs&) {
        return absl::OkStatus();
      }), body);
      break;
    default: {
      // The body as a NodeResourceTopology of its own node, then a request naming it.
      auto nrt = nlohmann::json::parse(body, nullptr, false);
      if (nrt.is_discarded()) return 0;
      if (nrt.is_object()) nrt["metadata"]["name"] = "fuzz-node";
      ext.UpsertNrt(nrt);
      std::string req = R"({"pod":{"metadata":{"name":"p","uid":"u"},"spec":{"containers":[)"
                        R"({"name":"c","resources":{"limits":{"cpu":"2","memory":"1Gi"}}}]}},)"
                        R"("nodenames":["fuzz-node","node-a"]})";
      CheckAnswer(ext.Filter(req), req);
      ext.DeleteNrt("fuzz-node");
    }
  }
  return 0;
}
