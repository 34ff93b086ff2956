#include "topologymanager/merge_json.h"

#include "gtest/gtest.h"

namespace podtopo::topologymanager {
namespace {

std::string Merge(const std::string& text, const MergeOverrides& overrides = {}) {
  absl::StatusOr<std::string> out = MergeHintsJson(text, overrides);
  if (!out.ok()) return "error: " + std::string(out.status().message());
  return *out;
}

constexpr char kDesignExample[] = R"({"policy": "restricted",
 "options": {"prefer-closest-numa-nodes": "true"},
 "numaNodes": [0, 1, 2, 3],
 "distances": [[10,20,20,20],[20,10,20,20],[20,20,10,20],[20,20,20,10]],
 "providers": [ {"cpu": [{"affinity": [0], "preferred": true}, {"affinity": [0,1], "preferred": false}]},
                {"memory": null}, {}, null ]})";

TEST(MergeJsonTest, DesignExample) {
  EXPECT_EQ(Merge(kDesignExample), R"({"affinity":[0],"preferred":true,"admit":true})");
}

TEST(MergeJsonTest, SmokeTest) {
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],"providers":[{"cpu":[{"affinity":[0],"preferred":true},{"affinity":[0,1],"preferred":false}]},{"memory":null}]})"),
            R"({"affinity":[0],"preferred":true,"admit":true})");
}

TEST(MergeJsonTest, NilAffinityAndRejection) {
  // single-numa-node: nothing preferred survives -> {nil, false}, rejected.
  EXPECT_EQ(Merge(R"({"policy":"single-numa-node","numaNodes":[0,1],
                    "providers":[{"cpu":[{"affinity":[0,1],"preferred":true}]}]})"),
            R"({"affinity":null,"preferred":false,"admit":false})");
  // No providers: single-numa-node reports the all-node result as nil, preferred.
  EXPECT_EQ(Merge(R"({"policy":"single-numa-node","numaNodes":[0,1]})"),
            R"({"affinity":null,"preferred":true,"admit":true})");
  EXPECT_EQ(Merge(R"({"policy":"none","numaNodes":[0,1],"providers":[]})"),
            R"({"affinity":null,"preferred":false,"admit":true})");
  // An empty list: no possible placement.
  EXPECT_EQ(Merge(R"({"policy":"restricted","numaNodes":[0,1],"providers":[{"gpu":[]}]})"),
            R"({"affinity":[0,1],"preferred":false,"admit":false})");
  // Missing hint fields take Go's zero values; an empty affinity is a non-nil empty mask.
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],"providers":[{"gpu":[{}]}]})"),
            R"({"affinity":[0,1],"preferred":false,"admit":true})");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],
                    "providers":[{"gpu":[{"affinity":[],"preferred":true}]}]})"),
            R"({"affinity":[0,1],"preferred":false,"admit":true})");
}

TEST(MergeJsonTest, FlagsOverrideStdin) {
  const std::string text = R"({"policy":"best-effort","numaNodes":[0,1],
      "providers":[{"cpu":[{"affinity":[0,1],"preferred":false}]}]})";
  EXPECT_EQ(Merge(text), R"({"affinity":[0,1],"preferred":false,"admit":true})");
  EXPECT_EQ(Merge(text, {.policy = "restricted"}),
            R"({"affinity":[0,1],"preferred":false,"admit":false})");
  // Without a policy anywhere: an error naming the field.
  EXPECT_EQ(Merge(R"({"numaNodes":[0]})"),
            "error: policy: missing (set \"policy\" in the input or pass --policy)");
  EXPECT_EQ(Merge(R"({"numaNodes":[0]})", {.policy = "best-effort"}),
            R"({"affinity":[0],"preferred":true,"admit":true})");
  // An option flag replaces the stdin value of the same key.
  EXPECT_EQ(Merge(kDesignExample, {.options = {{"prefer-closest-numa-nodes", "maybe"}}}),
            "error: bad value for option \"prefer-closest-numa-nodes\": strconv.ParseBool: "
            "parsing \"maybe\": invalid syntax");
}

TEST(MergeJsonTest, OptionsAcceptBooleansAndIntegers) {
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1,2,3,4,5,6,7,8],
                    "options":{"max-allowable-numa-nodes":9,"prefer-closest-numa-nodes":false}})"),
            R"({"affinity":[0,1,2,3,4,5,6,7,8],"preferred":true,"admit":true})");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1,2,3,4,5,6,7,8]})"),
            "error: unsupported on machines with more than 8 NUMA Nodes");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0],"options":{"x":1.5}})"),
            "error: options[\"x\"]: expected a string, boolean or integer, got number");
}

TEST(MergeJsonTest, ClosestUsesDistancesByPosition) {
  // numaNodes listed out of order: row i belongs to numaNodes[i].
  // Nodes 0 and 2 are close (11), 0-1 and 1-2 far (30).
  const std::string text = R"({"policy":"best-effort","options":{"prefer-closest-numa-nodes":true},
      "numaNodes":[2,0,1],
      "distances":[[10,11,30],[11,10,30],[30,30,10]],
      "providers":[{"cpu":[{"affinity":[0,1],"preferred":false},{"affinity":[0,2],"preferred":false}]},
                   {"mem":[{"affinity":[0,1],"preferred":false},{"affinity":[0,2],"preferred":false}]}]})";
  EXPECT_EQ(Merge(text), R"({"affinity":[0,2],"preferred":false,"admit":true})");
  // Without prefer-closest the numerically smaller mask {0,1} wins.
  EXPECT_EQ(Merge(text, {.options = {{"prefer-closest-numa-nodes", "false"}}}),
            R"({"affinity":[0,1],"preferred":false,"admit":true})");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","options":{"prefer-closest-numa-nodes":true},"numaNodes":[0]})"),
            "error: cannot discover NUMA topology: error getting NUMA distances from cadvisor "
            "(prefer-closest-numa-nodes needs \"distances\" in the input)");
}

TEST(MergeJsonTest, BadInputNamesThePath) {
  EXPECT_EQ(Merge("[1]"), "error: merge-hints input: expected a JSON object, got array");
  EXPECT_EQ(Merge("{").rfind("error: merge-hints input: invalid JSON: ", 0), 0u);
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numa_nodes":[0]})"),
            "error: merge-hints input: unknown field \"numa_nodes\" (expected policy, options, "
            "numaNodes, distances, providers)");
  EXPECT_EQ(Merge(R"({"policy":"best-effort"})"),
            "error: numaNodes: missing (the machine's NUMA node ids, e.g. [0, 1])");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,64]})"),
            "error: numaNodes[1]: NUMA node id 64 is out of range 0-63");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[-1]})"),
            "error: numaNodes[0]: NUMA node id -1 is out of range 0-63");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,"1"]})"),
            "error: numaNodes[1]: expected a NUMA node id (integer), got string");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[1,0,1]})"),
            "error: numaNodes[2]: NUMA node 1 is listed twice");
  EXPECT_EQ(Merge(R"({"policy":7,"numaNodes":[0]})"), "error: policy: expected a string, got integer");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],"distances":[[10,11]]})"),
            "error: distances: expected 2 rows (one per numaNodes entry), got 1");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],"distances":[[10,11],[11]]})"),
            "error: distances[1]: expected an array of 2 distances, got 1 entries");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],"distances":[[10,11],[11,-10]]})"),
            "error: distances[1][1]: expected a non-negative integer, got -10");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],"providers":{}})"),
            "error: providers: expected an array of providers, got object");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],"providers":[[]]})"),
            "error: providers[0]: expected an object mapping resource names to hint lists, or "
            "null; got array");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],"providers":[{"cpu":{}}]})"),
            "error: providers[0][\"cpu\"]: expected an array of hints or null, got object");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0,1],
                    "providers":[null,{"example.com/gpu":[{"affinity":[0],"preferred":true},
                                                         {"affinity":[1,5],"preferred":true}]}]})"),
            "error: providers[1][\"example.com/gpu\"][1].affinity[1]: NUMA node 5 is not in "
            "numaNodes [0, 1]");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0],"providers":[{"cpu":[{"preferred":1}]}]})"),
            "error: providers[0][\"cpu\"][0].preferred: expected true or false, got integer");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0],"providers":[{"cpu":[{"affinity":0}]}]})"),
            "error: providers[0][\"cpu\"][0].affinity: expected an array of NUMA node ids or null, "
            "got integer");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0],"providers":[{"cpu":[{"affinty":[0]}]}]})"),
            "error: providers[0][\"cpu\"][0]: unknown field \"affinty\" (a hint has \"affinity\" "
            "and \"preferred\")");
  EXPECT_EQ(Merge(R"({"policy":"best-effort","numaNodes":[0],"providers":[{"cpu":[3]}]})"),
            "error: providers[0][\"cpu\"][0]: expected a hint object {\"affinity\": [...], "
            "\"preferred\": bool}, got integer");
  EXPECT_EQ(Merge(R"({"policy":"bogus","numaNodes":[0]})"), "error: unknown policy: \"bogus\"");
}

TEST(MergeJsonTest, ParsedRequestKeepsNilAndEmptyDistinctions) {
  auto request = ParseMergeRequest(
      R"({"numaNodes":[0],"providers":[null,{},{"a":null,"b":[]}]})");
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_EQ(request->providers.size(), 3u);
  EXPECT_FALSE(request->providers[0].has_value());
  ASSERT_TRUE(request->providers[1].has_value());
  EXPECT_TRUE(request->providers[1]->empty());
  EXPECT_FALSE(request->providers[2]->at("a").has_value());
  ASSERT_TRUE(request->providers[2]->at("b").has_value());
  EXPECT_TRUE(request->providers[2]->at("b")->empty());
  EXPECT_FALSE(request->policy.has_value());
}

}  // namespace
}  // namespace podtopo::topologymanager
