// The pod inputs every command shares (node_flags.h LoadAllPods), driven through cli::Run:
// fields that are no field of their object are warnings, errors with --strict, and `lint`
// findings (issue 22 item 4).
#include <filesystem>
#include <sstream>

#include "cli/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/testing.h"
#include "util/file.h"

namespace podtopo {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int code = 0;
  std::string out, err;
};

Result RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), "podtopo");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  Result r;
  r.code = cli::Run(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A Guaranteed pod whose `resources:` is misspelt: read as BestEffort.
constexpr char kTypo[] = R"(apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  containers:
  - name: main
    image: busybox
    resource: {limits: {cpu: "2", memory: 1Gi}}
)";

class PodInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("podtopo-pod-inputs-" + std::to_string(getpid()) + ".yaml"))
                .string();
    ASSERT_TRUE(WriteFileAtomically(path_, kTypo).ok());
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(PodInputsTest, AdmitWarnsAndStrictRefuses) {
  Result r = RunCli({"admit", path_});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("podtopo: warning: " + path_ +
                               ": document 1: spec.containers[0].resource: unknown field "
                               "\"resource\" (did you mean resources?)"));
  Result strict = RunCli({"admit", path_, "--strict"});
  EXPECT_EQ(strict.code, 1);
  EXPECT_THAT(strict.err, HasSubstr("spec.containers[0].resource: unknown field"));
  EXPECT_EQ(strict.out, "");
}

TEST_F(PodInputsTest, LintReportsAFinding) {
  Result r = RunCli({"lint", "--config", testing::SourceDir() + "/docs/examples/kubelet-config.yaml",
                     path_, "-o", "json"});
  EXPECT_THAT(r.err, Not(HasSubstr("unknown field")));  // a finding, not a stderr line
  nlohmann::json report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.out << r.err;
  bool found = false;
  for (const auto& f : report["findings"]) {
    if (f["code"] != "pod-unknown-field") continue;
    found = true;
    EXPECT_EQ(f["severity"], "warning");
    EXPECT_EQ(f["file"], path_);
    EXPECT_EQ(f["field"], "spec.containers[0].resource");
    EXPECT_EQ(f["hint"], "write `resources`");
  }
  EXPECT_TRUE(found) << r.out;
}

}  // namespace
}  // namespace podtopo
