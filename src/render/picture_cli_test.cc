// The pictures through the command line: -o svg|html on topology, admit and show, the demo's
// podtopo-demo.html, and the existing formats unchanged.
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "admission/node.h"
#include "api/pod_yaml.h"
#include "cli/cli_testing.h"
#include "config/kubelet_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "render/admission_render.h"
#include "render/node_picture.h"
#include "render/topology_table.h"
#include "testing/testing.h"
#include "topology/presets.h"
#include "topology/topology_json.h"
#include "util/file.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using Result = cli::CliResult;
using cli::RunCli;

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

std::string Mixed() { return testing::SourceDir() + "/docs/examples/pod-scope-mixed.yaml"; }

TEST(PictureCli, TopologySvgAndHtml) {
  Result svg = RunCli({"topology", "--node", "preset:demo", "-o", "svg"});
  ASSERT_EQ(svg.code, 0) << svg.err;
  EXPECT_THAT(svg.out, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_EQ(Count(svg.out, "data-cpu=\""), 64u);
  EXPECT_EQ(Count(svg.out, "class=\"cpu unassigned\""), 64u);
  Result html = RunCli({"topology", "--node", "preset:demo", "-o", "html"});
  ASSERT_EQ(html.code, 0) << html.err;
  EXPECT_THAT(html.out, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(html.out, HasSubstr(svg.out));  // the same SVG, inline
}

TEST(PictureCli, TopologyTableAndJsonUnchanged) {
  auto node = Preset("demo");
  ASSERT_TRUE(node.ok());
  Result table = RunCli({"topology", "--node", "preset:demo"});
  EXPECT_EQ(table.out, RenderTopologyTable(*node));
  Result wide = RunCli({"topology", "--node", "preset:demo", "-o", "wide"});
  EXPECT_EQ(wide.out, RenderTopologyTable(*node));
  Result json = RunCli({"topology", "--node", "preset:demo", "-o", "json"});
  EXPECT_EQ(json.out, WriteTopologyJson(*node));
}

TEST(PictureCli, AdmitSvgHtmlAndUnchangedTable) {
  Result svg = RunCli({"admit", "-o", "svg", Mixed()});
  ASSERT_EQ(svg.code, 0) << svg.err;
  EXPECT_THAT(svg.out, StartsWith("<svg "));
  EXPECT_THAT(svg.out, HasSubstr("<pattern id=\"hatch-0\""));
  EXPECT_EQ(Count(svg.out, "class=\"cpu pod-exclusive\""), 2u);  // main-app's 2 CPUs
  EXPECT_EQ(Count(svg.out, "class=\"cpu pod-shared\""), 2u);     // the sidecars' pool
  Result html = RunCli({"admit", "-o", "html", Mixed()});
  ASSERT_EQ(html.code, 0) << html.err;
  EXPECT_THAT(html.out, HasSubstr("<td>default/pod-scope-mixed</td>"));

  // The table and json are what the renderers print for the same admission.
  auto topo = Preset("demo");
  ASSERT_TRUE(topo.ok());
  // The CLI predicts the newest released kubelet by default.
  config::KubeletConfig cfg = config::SeedDefault();
  cfg.kubelet_version = std::string(kubelet::DefaultKubeletVersion().name);
  auto node = Node::Create(*topo, cfg, {});
  ASSERT_TRUE(node.ok());
  auto pods = LoadPods(Mixed());
  ASSERT_TRUE(pods.ok());
  std::vector<PodAllocation> results;
  for (const auto& p : *pods) results.push_back((*node)->Admit(p).value());
  NodePools pools{(*node)->DefaultCpuSet(), (*node)->ReservedCpus(), cfg.kubelet_version};
  EXPECT_EQ(RunCli({"admit", Mixed()}).out, RenderAdmissionTable(results, pools));
  EXPECT_EQ(RunCli({"admit", "-o", "json", Mixed()}).out, RenderAdmissionJson(results, pools));
  EXPECT_EQ(RunCli({"admit", "-o", "svg", Mixed()}).out,
            RenderSvg(BuildNodePicture(**node, results)));
}

TEST(PictureCli, AdmitRejectedPodStillDrawnWithExit3) {
  std::string dir = testing::MakeTempDir("podtopo-picture-cli");
  std::string big = dir + "/big.yaml";
  ASSERT_TRUE(WriteFileAtomically(big, R"(apiVersion: v1
kind: Pod
metadata: {name: too-big}
spec:
  containers:
  - name: app
    image: busybox
    resources:
      requests: {cpu: "40", memory: 1Gi}
      limits: {cpu: "40", memory: 1Gi}
)").ok());
  Result r = RunCli({"admit", "-o", "html", Mixed(), big});
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.out, HasSubstr("default/too-big: rejected ("));
  EXPECT_THAT(r.out, HasSubstr("<td>default/pod-scope-mixed</td>"));
  std::filesystem::remove_all(dir);
}

TEST(PictureCli, ShowDrawsTheStateDir) {
  std::string dir = testing::MakeTempDir("podtopo-picture-cli");
  ASSERT_EQ(RunCli({"admit", "--state-dir", dir, Mixed()}).code, 0);
  Result show = RunCli({"show", "--state-dir", dir, "-o", "svg"});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("default/pod-scope-mixed"));
  EXPECT_EQ(Count(show.out, "class=\"cpu pod-shared\""), 2u);
  // admit -o svg draws the pods the state dir already held too.
  std::string seed = testing::SourceDir() + "/docs/examples/pod-level-resource-demo.yaml";
  Result more = RunCli({"admit", "--state-dir", dir, "-o", "svg", seed});
  ASSERT_EQ(more.code, 0) << more.err;
  EXPECT_THAT(more.out, HasSubstr("<title>Pod default/pod-scope-mixed"));
  EXPECT_THAT(more.out, HasSubstr("<title>Pod default/pod-level-resource-demo"));
  EXPECT_EQ(Count(more.out, "class=\"cpu pod-exclusive\""), 2u);
  EXPECT_EQ(Count(more.out, "class=\"cpu pod-shared\""), 4u);
  EXPECT_EQ(Count(more.out, "class=\"cpu unassigned\""), 0u);
  Result bad = RunCli({"show", "--state-dir", dir, "-o", "png"});
  EXPECT_EQ(bad.code, 1);
  std::filesystem::remove_all(dir);
}

TEST(PictureCli, DemoWritesItsPicture) {
  std::string dir = testing::MakeTempDir("podtopo-picture-cli");
  // Default: podtopo-demo.html in the current directory.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  Result r = RunCli({"demo"});
  ASSERT_EQ(chdir(cwd), 0);
  ASSERT_EQ(r.code, 0) << r.err;
  std::string path = std::filesystem::canonical(dir).string() + "/podtopo-demo.html";
  EXPECT_THAT(r.out, HasSubstr("Picture of the node: " + path));
  auto html = ReadFile(path);
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_THAT(*html, StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(*html, HasSubstr("<td>default/pod-level-resource-demo</td>"));
  EXPECT_THAT(*html, HasSubstr("<td>default/pod-scope-mixed</td>"));
  // --html chooses the file; with -o json the note goes to stderr, stdout stays JSON.
  Result json = RunCli({"demo", "-o", "json", "--html", dir + "/other.html"});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_THAT(json.err, HasSubstr("other.html"));
  EXPECT_THAT(json.out, ::testing::Not(HasSubstr("Picture of the node")));
  EXPECT_TRUE(FileExists(dir + "/other.html"));
  // A place it cannot write is an error naming it.
  Result bad = RunCli({"demo", "--html", dir + "/no/such/dir/x.html"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("no/such/dir"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace podtopo
