// Replays, through every fuzz target, the inputs that once crashed a target or broke one of
// its invariants (fuzz/regressions/<target>/*, kept in the repository) and the seed corpus
// generated from the fixtures (build/fuzz/corpus/<target>/*). A crash or a failed invariant
// aborts this program, which fails the test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "testing/testing.h"

namespace podtopo::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Inputs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class FuzzRegressionTest : public ::testing::TestWithParam<std::string> {};

void Replay(const std::string& target, const std::vector<fs::path>& inputs) {
  TargetFn fn = Targets().at(target);
  for (const fs::path& p : inputs) {
    SCOPED_TRACE(p.string());
    std::string bytes = Slurp(p);
    fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
}

TEST_P(FuzzRegressionTest, RegressionInputs) {
  Replay(GetParam(), Inputs(fs::path(testing::SourceDir()) / "fuzz" / "regressions" / GetParam()));
}

TEST_P(FuzzRegressionTest, SeedCorpus) {
  std::vector<fs::path> seeds = Inputs(fs::path(PODTOPO_FUZZ_CORPUS_DIR) / GetParam());
  ASSERT_FALSE(seeds.empty()) << "no seeds for " << GetParam() << " in " << PODTOPO_FUZZ_CORPUS_DIR;
  Replay(GetParam(), seeds);
}

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : Targets()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegressionTest, ::testing::ValuesIn(Names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace podtopo::fuzz
