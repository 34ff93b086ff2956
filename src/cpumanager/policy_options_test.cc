#include "cpumanager/policy_options.h"

#include <map>
#include <string>

#include "gtest/gtest.h"
#include "testing/testing.h"
#include "testing/topologies.h"

namespace podtopo::cpumanager {
namespace {

// ---- policy_static_cases.json -> option_parse_cases (TestStaticPolicyOptions) ----

struct OptionParseCase {
  std::string name;
  nlohmann::json json;
};

std::vector<OptionParseCase> LoadOptionParseCases() {
  std::vector<OptionParseCase> out;
  nlohmann::json all = testing::LoadVectors("policy_static_cases.json");
  for (const auto& c : all["option_parse_cases"]) {
    out.push_back({c["name"].get<std::string>(), c});
  }
  return out;
}

class OptionParseVectorTest : public ::testing::TestWithParam<OptionParseCase> {};

TEST_P(OptionParseVectorTest, MatchesKubelet) {
  const nlohmann::json& c = GetParam().json;
  std::map<std::string, std::string> options;
  if (!c["options"].is_null()) {
    for (const auto& [k, v] : c["options"].items()) options[k] = v.get<std::string>();
  }
  // The upstream test enables the alpha and beta option gates.
  absl::StatusOr<StaticPolicyOptions> got =
      NewStaticPolicyOptions(options, OptionGates::AllEnabled());
  if (c["expect_error"].get<bool>()) {
    EXPECT_FALSE(got.ok());
    return;
  }
  ASSERT_TRUE(got.ok()) << got.status();
  StaticPolicyOptions want;
  if (c.contains("expect")) {
    for (const auto& [k, v] : c["expect"].items()) {
      ASSERT_EQ(k, "FullPhysicalCPUsOnly") << "unhandled expectation field";
      want.full_physical_cpus_only = v.get<bool>();
    }
  }
  EXPECT_EQ(*got, want);
}

INSTANTIATE_TEST_SUITE_P(
    Vectors, OptionParseVectorTest, ::testing::ValuesIn(LoadOptionParseCases()),
    [](const ::testing::TestParamInfo<OptionParseCase>& info) {
      return testing::TestName(info.param.name, info.index);
    });

// ---- error texts and semantics (spec cpumanager.md §3.6-3.8) ----

TEST(PolicyOptionsTest, UnknownOptionText) {
  auto got = NewStaticPolicyOptions({{"badValue1", ""}}, OptionGates{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "unknown CPU Manager Policy option: \"badValue1\"");
}

TEST(PolicyOptionsTest, BadBoolText) {
  auto got = NewStaticPolicyOptions({{"full-pcpus-only", "enabled!"}}, OptionGates{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(),
            "bad value for option \"full-pcpus-only\": strconv.ParseBool: parsing \"enabled!\": "
            "invalid syntax");
}

TEST(PolicyOptionsTest, GatesDecideAlphaAndBetaOptions) {
  OptionGates defaults;  // alpha off, beta on
  EXPECT_TRUE(NewStaticPolicyOptions({{"strict-cpu-reservation", "true"}}, defaults).ok());
  EXPECT_TRUE(NewStaticPolicyOptions({{"full-pcpus-only", "true"}}, {false, false}).ok());
  auto alpha = NewStaticPolicyOptions({{"align-by-socket", "true"}}, defaults);
  ASSERT_FALSE(alpha.ok());
  EXPECT_EQ(alpha.status().message(),
            "CPU Manager Policy Alpha-level Options not enabled, but option \"align-by-socket\" "
            "provided");
  auto beta = NewStaticPolicyOptions({{"distribute-cpus-across-numa", "true"}}, {true, false});
  ASSERT_FALSE(beta.ok());
  EXPECT_EQ(beta.status().message(),
            "CPU Manager Policy Beta-level Options not enabled, but option "
            "\"distribute-cpus-across-numa\" provided");
  // The gate applies whatever the value: even "false" needs the gate.
  EXPECT_FALSE(NewStaticPolicyOptions({{"distribute-cpus-across-cores", "false"}}, defaults).ok());
}

TEST(PolicyOptionsTest, AllOptionsParse) {
  auto got = NewStaticPolicyOptions({{"full-pcpus-only", "true"},
                                     {"align-by-socket", "1"},
                                     {"strict-cpu-reservation", "T"},
                                     {"distribute-cpus-across-numa", "false"}},
                                    OptionGates::AllEnabled());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->full_physical_cpus_only);
  EXPECT_TRUE(got->align_by_socket);
  EXPECT_TRUE(got->strict_cpu_reservation);
  EXPECT_FALSE(got->distribute_cpus_across_numa);
  EXPECT_FALSE(got->distribute_cpus_across_cores);
  EXPECT_FALSE(got->prefer_align_by_uncore_cache);
}

TEST(PolicyOptionsTest, MutuallyExclusivePairs) {
  struct Case {
    std::map<std::string, std::string> options;
    std::string want;
  } cases[] = {
      {{{"full-pcpus-only", "true"}, {"distribute-cpus-across-cores", "true"}},
       "static policy options full-pcpus-only and distribute-cpus-across-cores can not be used "
       "at the same time"},
      {{{"distribute-cpus-across-numa", "true"}, {"distribute-cpus-across-cores", "true"}},
       "static policy options distribute-cpus-across-numa and distribute-cpus-across-cores can "
       "not be used at the same time"},
      {{{"prefer-align-cpus-by-uncorecache", "true"}, {"distribute-cpus-across-cores", "true"}},
       "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-cores "
       "can not be used at the same time"},
      {{{"prefer-align-cpus-by-uncorecache", "true"}, {"distribute-cpus-across-numa", "true"}},
       "static policy options prefer-align-cpus-by-uncorecache and distribute-cpus-across-numa "
       "can not be used at the same time"},
  };
  for (const Case& c : cases) {
    auto got = NewStaticPolicyOptions(c.options, OptionGates::AllEnabled());
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().message(), c.want);
  }
  // Turned off, the pair is fine.
  EXPECT_TRUE(NewStaticPolicyOptions(
                  {{"full-pcpus-only", "true"}, {"distribute-cpus-across-cores", "false"}},
                  OptionGates::AllEnabled())
                  .ok());
}

TEST(PolicyOptionsTest, SeveralBadOptionsReportTheFirstByName) {
  // Documented determinism: sorted by name, "badValue1" < "badvalue2" < "full-pcpus-only".
  auto got = NewStaticPolicyOptions(
      {{"full-pcpus-only", "nope"}, {"badvalue2", "aaaa"}, {"badValue1", ""}}, OptionGates{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), "unknown CPU Manager Policy option: \"badValue1\"");
  auto got2 = NewStaticPolicyOptions({{"full-pcpus-only", "nope"}, {"zzz", "1"}}, OptionGates{});
  ASSERT_FALSE(got2.ok());
  EXPECT_EQ(got2.status().message(),
            "bad value for option \"full-pcpus-only\": strconv.ParseBool: parsing \"nope\": "
            "invalid syntax");
}

TEST(PolicyOptionsTest, AlignBySocketValidation) {
  StaticPolicyOptions opts;
  opts.align_by_socket = true;
  const CpuTopology& multi = testing::FakeTopology("topoDualSocketMultiNumaPerSocketHT");
  EXPECT_TRUE(ValidateStaticPolicyOptions(opts, multi, "best-effort").ok());
  absl::Status snn = ValidateStaticPolicyOptions(opts, multi, "single-numa-node");
  EXPECT_EQ(snn.message(),
            "Topolgy manager single-numa-node policy is incompatible with CPUManager "
            "align-by-socket policy option");
  // topoUncoreDualSocketNoSMT: 2 sockets, every CPU on NUMA 0.
  const CpuTopology& more_sockets = testing::FakeTopology("topoUncoreDualSocketNoSMT");
  ASSERT_GT(more_sockets.num_sockets, more_sockets.num_numa_nodes);
  EXPECT_EQ(ValidateStaticPolicyOptions(opts, more_sockets, "none").message(),
            "Align by socket is not compatible with hardware where number of sockets are more "
            "than number of NUMA");
  opts.align_by_socket = false;
  EXPECT_TRUE(ValidateStaticPolicyOptions(opts, more_sockets, "single-numa-node").ok());
}

}  // namespace
}  // namespace podtopo::cpumanager
