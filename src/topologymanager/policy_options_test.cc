#include "topologymanager/policy_options.h"

#include "gtest/gtest.h"

namespace podtopo::topologymanager {
namespace {

TEST(PolicyOptionsTest, Defaults) {
  auto opts = NewPolicyOptions({});
  ASSERT_TRUE(opts.ok());
  EXPECT_FALSE(opts->prefer_closest_numa);
  EXPECT_EQ(opts->max_allowable_numa_nodes, 8);
}

TEST(PolicyOptionsTest, ParsesGoBools) {
  for (const char* yes : {"1", "t", "T", "true", "TRUE", "True"}) {
    auto opts = NewPolicyOptions({{"prefer-closest-numa-nodes", yes}});
    ASSERT_TRUE(opts.ok()) << yes;
    EXPECT_TRUE(opts->prefer_closest_numa) << yes;
  }
  for (const char* no : {"0", "f", "F", "false", "FALSE", "False"}) {
    auto opts = NewPolicyOptions({{"prefer-closest-numa-nodes", no}});
    ASSERT_TRUE(opts.ok()) << no;
    EXPECT_FALSE(opts->prefer_closest_numa) << no;
  }
  EXPECT_EQ(NewPolicyOptions({{"prefer-closest-numa-nodes", "yes"}}).status().message(),
            "bad value for option \"prefer-closest-numa-nodes\": strconv.ParseBool: parsing "
            "\"yes\": invalid syntax");
  EXPECT_EQ(NewPolicyOptions({{"prefer-closest-numa-nodes", ""}}).status().message(),
            "bad value for option \"prefer-closest-numa-nodes\": strconv.ParseBool: parsing "
            "\"\": invalid syntax");
}

TEST(PolicyOptionsTest, MaxAllowableNumaNodes) {
  auto opts = NewPolicyOptions({{"max-allowable-numa-nodes", "34"}});
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(opts->max_allowable_numa_nodes, 34);
  EXPECT_EQ(NewPolicyOptions({{"max-allowable-numa-nodes", "+8"}})->max_allowable_numa_nodes, 8);
  EXPECT_EQ(NewPolicyOptions({{"max-allowable-numa-nodes", "7"}}).status().message(),
            "the minimum value of \"max-allowable-numa-nodes\" should not be less than 8");
  EXPECT_EQ(NewPolicyOptions({{"max-allowable-numa-nodes", "-9"}}).status().message(),
            "the minimum value of \"max-allowable-numa-nodes\" should not be less than 8");
  EXPECT_EQ(NewPolicyOptions({{"max-allowable-numa-nodes", "8x"}}).status().message(),
            "unable to convert policy option to integer \"max-allowable-numa-nodes\": "
            "strconv.Atoi: parsing \"8x\": invalid syntax");
  EXPECT_EQ(NewPolicyOptions({{"max-allowable-numa-nodes", "-"}}).status().message(),
            "unable to convert policy option to integer \"max-allowable-numa-nodes\": "
            "strconv.Atoi: parsing \"-\": invalid syntax");
  EXPECT_EQ(NewPolicyOptions({{"max-allowable-numa-nodes", "99999999999999999999"}})
                .status()
                .message(),
            "unable to convert policy option to integer \"max-allowable-numa-nodes\": "
            "strconv.Atoi: parsing \"99999999999999999999\": value out of range");
  EXPECT_EQ(NewPolicyOptions({{"max-allowable-numa-nodes", "9223372036854775807"}})
                ->max_allowable_numa_nodes,
            9223372036854775807LL);
  EXPECT_FALSE(NewPolicyOptions({{"max-allowable-numa-nodes", "9223372036854775808"}}).ok());
  EXPECT_FALSE(NewPolicyOptions({{"max-allowable-numa-nodes", " 8"}}).ok());
  EXPECT_FALSE(NewPolicyOptions({{"max-allowable-numa-nodes", "1_0"}}).ok());
}

TEST(PolicyOptionsTest, UnknownOption) {
  EXPECT_EQ(NewPolicyOptions({{"unknown-option", "true"}}).status().message(),
            "unknown Topology Manager Policy option: \"unknown-option\"");
  EXPECT_EQ(CheckPolicyOptionAvailable("a\"b\n", {}).message(),
            "unknown Topology Manager Policy option: \"a\\\"b\\n\"");
}

TEST(PolicyOptionsTest, GaOptionsIgnoreGates) {
  PolicyOptionGates off{.alpha_options = false, .beta_options = false};
  EXPECT_TRUE(CheckPolicyOptionAvailable(kPreferClosestNUMANodes, off).ok());
  EXPECT_TRUE(CheckPolicyOptionAvailable(kMaxAllowableNUMANodes, off).ok());
}

}  // namespace
}  // namespace podtopo::topologymanager
