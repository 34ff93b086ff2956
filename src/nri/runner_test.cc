// Runner against a runtime played by the test on a real unix socket: registration, Configure and
// Synchronize reach the plugin, unsolicited updates go out, and the runner reconnects after the
// runtime goes away.
#include "nri/runner.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "gtest/gtest.h"
#include "nri/fake_runtime_test_util.h"
#include "nri/ttrpc/request.pb.h"
#include "testing/testing.h"
#include "topology/node_source.h"

namespace podtopo::nri {
namespace {

namespace tt = ::podtopo::ttrpc;

TEST(Runner, RegistersServesAndReconnects) {
  std::string dir = testing::MakeTempDir("nri-runner");
  std::string sock = dir + "/nri.sock";
  FakeRuntime rt;
  ASSERT_NO_FATAL_FAILURE(rt.Listen(sock));
  auto plugin = Plugin::Create(LoadNode("preset:demo").value(), config::SeedDefault(), {});
  ASSERT_TRUE(plugin.ok());
  Runner runner(plugin->get(), {.socket = sock, .name = "podtopo", .index = "10",
                                .retry = std::chrono::milliseconds(50)});
  std::thread run([&] { (void)runner.Run(); });

  rt.Accept();
  tt::Request reg = rt.Answer("");
  EXPECT_EQ(reg.service(), kRuntimeService);
  EXPECT_EQ(reg.method(), "RegisterPlugin");
  nriapi::RegisterPluginRequest r;
  ASSERT_TRUE(r.ParseFromString(reg.payload()));
  EXPECT_EQ(r.plugin_name(), "podtopo");
  EXPECT_EQ(r.plugin_idx(), "10");
  tt::Response cfg = rt.Call(1, "Configure", nriapi::ConfigureRequest().SerializeAsString());
  nriapi::ConfigureResponse cr;
  ASSERT_TRUE(cr.ParseFromString(cfg.payload()));
  EXPECT_EQ(cr.events(), SubscribedEvents());

  // A best-effort container, then a Guaranteed pod, then the Guaranteed pod stops: the
  // best-effort container gets its CPUs back through an unsolicited UpdateContainers.
  auto create = [](const std::string& pod, int64_t shares, int64_t quota) {
    nriapi::CreateContainerRequest req;
    req.mutable_pod()->set_id("sb-" + pod);
    req.mutable_pod()->set_name(pod);
    req.mutable_pod()->set_namespace_("default");
    req.mutable_pod()->set_uid("uid-" + pod);
    req.mutable_container()->set_id(pod + "-c");
    req.mutable_container()->set_pod_sandbox_id("sb-" + pod);
    req.mutable_container()->set_name("c");
    auto* cpu = req.mutable_container()->mutable_linux()->mutable_resources()->mutable_cpu();
    cpu->mutable_shares()->set_value(shares);
    if (quota > 0) cpu->mutable_quota()->set_value(quota);
    req.mutable_container()->mutable_linux()->mutable_resources()->mutable_memory()
        ->mutable_limit()->set_value(quota > 0 ? 1 << 30 : 0);
    return req;
  };
  EXPECT_EQ(rt.Call(3, "CreateContainer", create("be", 2, 0).SerializeAsString()).status().code(), 0);
  EXPECT_EQ(rt.Call(5, "CreateContainer", create("g", 2048, 200000).SerializeAsString()).status().code(), 0);
  nriapi::StateChangeEvent stop;
  stop.set_event(nriapi::STOP_POD_SANDBOX);
  *stop.mutable_pod() = create("g", 0, 0).pod();
  EXPECT_EQ(rt.Call(7, "StateChange", stop.SerializeAsString()).status().code(), 0);
  tt::Request upd = rt.Answer(nriapi::UpdateContainersResponse().SerializeAsString());
  EXPECT_EQ(upd.method(), "UpdateContainers");
  nriapi::UpdateContainersRequest ur;
  ASSERT_TRUE(ur.ParseFromString(upd.payload()));
  ASSERT_EQ(ur.update_size(), 1);
  EXPECT_EQ(ur.update(0).container_id(), "be-c");
  EXPECT_EQ(ur.update(0).linux().resources().cpu().cpus(), (*plugin)->node().DefaultCpuSet().String());

  // The runtime goes away and comes back: the runner registers again by itself.
  rt.Close();
  rt.Accept();
  EXPECT_EQ(rt.Answer("").method(), "RegisterPlugin");
  for (int i = 0; i < 100 && runner.registrations() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(runner.registrations(), 2);
  runner.Stop();
  run.join();
}

TEST(Runner, ValidateRegistration) {
  EXPECT_TRUE(ValidateRegistration("podtopo", "10").ok());
  EXPECT_FALSE(ValidateRegistration("podtopo", "1").ok());
  EXPECT_FALSE(ValidateRegistration("podtopo", "ab").ok());
  EXPECT_FALSE(ValidateRegistration("", "10").ok());
  EXPECT_FALSE(ValidateRegistration("a/b", "10").ok());
}

}  // namespace
}  // namespace podtopo::nri
