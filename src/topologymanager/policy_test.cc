#include "topologymanager/policy.h"

#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "testing/testing.h"
#include "topologymanager/policy_internal.h"
#include "topologymanager/test_helpers.h"

namespace podtopo::topologymanager {
namespace {

using internal::HintLists;
using internal::HintMerger;
using nlohmann::json;
using test::HintFromJson;
using test::HintsFromJson;
using test::ProvidersFromJson;

BitMask M(std::initializer_list<int> bits) { return *NewBitMask(bits); }
ProviderHints Provider(std::map<std::string, HintList> resources) { return resources; }
HintList List(std::vector<TopologyHint> hints) { return hints; }

std::vector<json> CasesOfKind(const std::string& kind) {
  static const json all = podtopo::testing::LoadVectors("topology_merge_cases.json");
  std::vector<json> out;
  for (const auto& c : all.at("cases")) {
    if (c.at("kind") == kind) out.push_back(c);
  }
  return out;
}

std::string CaseName(const ::testing::TestParamInfo<json>& info) {
  return podtopo::testing::TestName(
      info.param.at("id").get<std::string>() + "_" + info.param.at("name").get<std::string>(),
      info.index);
}

PolicyOptions OptionsFromJson(const json& c) {
  PolicyOptions opts;
  if (c.contains("policy_options")) {
    const json& o = c.at("policy_options");
    if (o.contains(kPreferClosestNUMANodes)) {
      opts.prefer_closest_numa = o.at(kPreferClosestNUMANodes).get<bool>();
    }
  }
  return opts;
}

std::vector<NUMANode> TopologyFromJson(const json& c) {
  std::vector<NUMANode> topology;
  for (const auto& id : c.at("numa_nodes")) {
    NUMANode node{id.get<int>(), std::nullopt};
    if (c.contains("numa_distances")) {
      node.distances = c.at("numa_distances").at(std::to_string(node.id)).get<std::vector<uint64_t>>();
    }
    topology.push_back(node);
  }
  return topology;
}

// ---------------------------------------------------------------------------------------------
// Vector tables.

class MergeVectorTest : public ::testing::TestWithParam<json> {};

TEST_P(MergeVectorTest, MatchesKubelet) {
  const json& c = GetParam();
  const std::string policy_name = c.at("policy");
  PolicyOptions opts = OptionsFromJson(c);
  std::vector<NUMANode> topology = TopologyFromJson(c);
  auto numa_info = NUMAInfo::Create(topology, opts.prefer_closest_numa);
  ASSERT_TRUE(numa_info.ok()) << numa_info.status();
  ProvidersHints providers = ProvidersFromJson(c.at("providers"));
  TopologyHint want = HintFromJson(c.at("expected"));
  const bool want_admit = c.at("admit").get<bool>();

  MergeResult exhaustive = internal::MergeExhaustive(policy_name, *numa_info, opts, providers);
  EXPECT_EQ(exhaustive.hint, want) << "exhaustive";
  EXPECT_EQ(exhaustive.admit, want_admit) << "exhaustive";

  // The production path: NewPolicy + Merge (fast).
  std::map<std::string, std::string> option_map;
  if (opts.prefer_closest_numa) option_map[kPreferClosestNUMANodes] = "true";
  auto policy = NewPolicy(policy_name, topology, option_map);
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ((*policy)->Name(), policy_name);
  MergeResult fast = (*policy)->Merge(providers);
  EXPECT_EQ(fast.hint, want) << "fast";
  EXPECT_EQ(fast.admit, want_admit) << "fast";
}

INSTANTIATE_TEST_SUITE_P(Vectors, MergeVectorTest, ::testing::ValuesIn(CasesOfKind("merge")),
                         CaseName);

TEST(MergeVectorCount, AllCasesPresent) { EXPECT_EQ(CasesOfKind("merge").size(), 107u); }

class CompareVectorTest : public ::testing::TestWithParam<json> {};

TEST_P(CompareVectorTest, MatchesKubelet) {
  const json& c = GetParam();
  NUMAInfo numa_info({0, 1, 2, 3}, {});
  HintMerger merger(&numa_info, {}, c.at("policy"), OptionsFromJson(c));
  merger.set_best_non_preferred_affinity_count(c.at("best_non_preferred_affinity_count"));
  std::optional<TopologyHint> current;
  if (!c.at("current").is_null()) current = HintFromJson(c.at("current"));
  TopologyHint candidate = HintFromJson(c.at("candidate"));
  const TopologyHint* winner = merger.Compare(current ? &*current : nullptr, &candidate);
  const std::string want = c.at("expected_winner");
  if (want == "current") {
    EXPECT_EQ(winner, current ? &*current : nullptr);
  } else {
    ASSERT_EQ(want, "candidate");
    EXPECT_EQ(winner, &candidate);
  }
}

INSTANTIATE_TEST_SUITE_P(Vectors, CompareVectorTest, ::testing::ValuesIn(CasesOfKind("compare")),
                         CaseName);

class MaxOfMinVectorTest : public ::testing::TestWithParam<json> {};

TEST_P(MaxOfMinVectorTest, MatchesKubelet) {
  const json& c = GetParam();
  HintLists lists;
  for (const auto& l : c.at("filtered_hints")) lists.push_back(HintsFromJson(l));
  EXPECT_EQ(internal::MaxOfMinAffinityCounts(lists), c.at("expected").get<int>());
}

INSTANTIATE_TEST_SUITE_P(Vectors, MaxOfMinVectorTest,
                         ::testing::ValuesIn(CasesOfKind("max_of_min_affinity_counts")), CaseName);

class FilterSingleNumaVectorTest : public ::testing::TestWithParam<json> {};

TEST_P(FilterSingleNumaVectorTest, MatchesKubelet) {
  const json& c = GetParam();
  HintLists input;
  for (const auto& l : c.at("input")) input.push_back(HintsFromJson(l));
  HintLists got = internal::FilterSingleNumaHints(input);
  const json& want = c.at("expected");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    // null = Go nil slice: no surviving hint.
    std::vector<TopologyHint> expected = want[i].is_null() ? std::vector<TopologyHint>{}
                                                           : HintsFromJson(want[i]);
    EXPECT_EQ(got[i], expected) << "list " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Vectors, FilterSingleNumaVectorTest,
                         ::testing::ValuesIn(CasesOfKind("filter_single_numa_hints")), CaseName);

TEST(VectorCounts, KindsHaveTheDocumentedSizes) {
  EXPECT_EQ(CasesOfKind("compare").size(), 25u);
  EXPECT_EQ(CasesOfKind("max_of_min_affinity_counts").size(), 7u);
  EXPECT_EQ(CasesOfKind("filter_single_numa_hints").size(), 5u);
}

// ---------------------------------------------------------------------------------------------
// Hand-written cases.

TEST(PolicyTest, NoProviders) {
  NUMAInfo info({0, 1}, {});
  EXPECT_EQ(internal::MergeFast(kPolicyBestEffort, info, {}, {}).hint,
            (TopologyHint{M({0, 1}), true}));
  MergeResult single = internal::MergeFast(kPolicySingleNumaNode, info, {}, {});
  EXPECT_EQ(single.hint, (TopologyHint{std::nullopt, true}));
  EXPECT_TRUE(single.admit);
  // No NUMA nodes at all: the only merged mask is empty, so nothing survives.
  NUMAInfo none({}, {});
  EXPECT_EQ(internal::MergeFast(kPolicyBestEffort, none, {}, {}).hint,
            (TopologyHint{M({}), false}));
  EXPECT_EQ(internal::MergeExhaustive(kPolicyBestEffort, none, {}, {}).hint,
            (TopologyHint{M({}), false}));
}

TEST(PolicyTest, NonePolicy) {
  auto policy = NewPolicy("none", {}, {{"bogus", "x"}});
  ASSERT_TRUE(policy.ok());  // options are not looked at
  MergeResult r = (*policy)->Merge({Provider({{"cpu", List({})}})});
  EXPECT_EQ(r.hint, TopologyHint{});
  EXPECT_TRUE(r.admit);
  EXPECT_FALSE(IsAlignmentGuaranteed(**policy));
}

TEST(PolicyTest, NewPolicyErrors) {
  std::vector<NUMANode> two = {{0, std::nullopt}, {1, std::nullopt}};
  EXPECT_EQ(NewPolicy("bogus", two, {}).status().message(), "unknown policy: \"bogus\"");
  EXPECT_EQ(NewPolicy("best-effort", two, {{"x", "1"}}).status().message(),
            "unknown Topology Manager Policy option: \"x\"");
  EXPECT_EQ(NewPolicy("restricted", two, {{kPreferClosestNUMANodes, "true"}}).status().message(),
            "cannot discover NUMA topology: error getting NUMA distances from cadvisor");
  std::vector<NUMANode> nine;
  for (int i = 0; i < 9; ++i) nine.push_back({i, std::nullopt});
  EXPECT_EQ(NewPolicy("best-effort", nine, {}).status().message(),
            "unsupported on machines with more than 8 NUMA Nodes");
  // The node-count check comes before the policy name check.
  EXPECT_EQ(NewPolicy("bogus", nine, {}).status().message(),
            "unsupported on machines with more than 8 NUMA Nodes");
  EXPECT_TRUE(NewPolicy("best-effort", nine, {{kMaxAllowableNUMANodes, "9"}}).ok());
  auto single = NewPolicy("single-numa-node", two, {});
  ASSERT_TRUE(single.ok());
  EXPECT_TRUE(IsAlignmentGuaranteed(**single));
}

TEST(PolicyTest, ResourceOrderIsByName) {
  ProvidersHints providers = {
      Provider({{"b", List({{M({1}), true}})}, {"a", std::nullopt}, {"c", List({})}}),
      std::nullopt, Provider({})};
  HintLists lists = internal::FilterProvidersHints(providers);
  ASSERT_EQ(lists.size(), 5u);
  EXPECT_EQ(lists[0], (std::vector<TopologyHint>{{std::nullopt, true}}));   // a: nil list
  EXPECT_EQ(lists[1], (std::vector<TopologyHint>{{M({1}), true}}));         // b
  EXPECT_EQ(lists[2], (std::vector<TopologyHint>{{std::nullopt, false}}));  // c: empty list
  EXPECT_EQ(lists[3], (std::vector<TopologyHint>{{std::nullopt, true}}));   // nil map
  EXPECT_EQ(lists[4], (std::vector<TopologyHint>{{std::nullopt, true}}));   // empty map
}

TEST(PolicyTest, MergePermutation) {
  TopologyHint a{M({0}), true}, b{M({0, 1}), true}, nil{std::nullopt, true};
  EXPECT_EQ(internal::MergePermutation(M({0, 1}), {&a, &b}), (TopologyHint{M({0}), false}));
  EXPECT_EQ(internal::MergePermutation(M({0, 1}), {&a, &nil, &a}), (TopologyHint{M({0}), true}));
  EXPECT_EQ(internal::MergePermutation(M({0, 1}), {&nil}), (TopologyHint{M({0, 1}), true}));
  TopologyHint np{std::nullopt, false};
  EXPECT_EQ(internal::MergePermutation(M({0, 1}), {&nil, &np}), (TopologyHint{M({0, 1}), false}));
}

// ---------------------------------------------------------------------------------------------
// Fast merge == exhaustive merge.

struct MergeCase {
  std::string policy;
  std::vector<int> nodes;
  PolicyOptions opts;
  std::map<int, std::vector<uint64_t>> distances;
  ProvidersHints providers;
};

void PrintCase(const MergeCase& c, std::ostream& os) {
  os << "policy=" << c.policy << " closest=" << c.opts.prefer_closest_numa << " nodes=[";
  for (int n : c.nodes) os << n << " ";
  os << "] distances={";
  for (const auto& [id, row] : c.distances) {
    os << id << ":[";
    for (auto d : row) os << d << " ";
    os << "] ";
  }
  os << "} providers=" << test::Describe(c.providers);
}

// Random inputs: 1..max_nodes nodes (ids possibly non-contiguous), at most max_lists hint lists,
// hints drawn from a small pool so duplicates are common, nil and empty affinities, masks that
// name nodes outside the machine, nil / empty maps and lists, all policies, prefer-closest
// with random (possibly asymmetric) distances that often tie.
rc::Gen<MergeCase> GenMergeCase(int max_nodes, int max_lists, int max_hints) {
  return rc::gen::exec([=] {
    MergeCase c;
    c.policy = *rc::gen::element<std::string>(kPolicyBestEffort, kPolicyRestricted,
                                              kPolicySingleNumaNode, kPolicyNone);
    const int n = *rc::gen::inRange(1, max_nodes + 1);
    const int first = *rc::gen::inRange(0, 3);
    const int step = *rc::gen::inRange(1, 3);
    for (int i = 0; i < n; ++i) c.nodes.push_back(first + i * step);
    const int width = c.nodes.back() + 2;  // masks may name one node past the machine
    c.opts.prefer_closest_numa = *rc::gen::arbitrary<bool>();
    for (int id : c.nodes) {
      std::vector<uint64_t> row;
      for (int j = 0; j < width; ++j) {
        row.push_back(j == id ? 10 : *rc::gen::element<uint64_t>(11, 12, 12, 20, 21));
      }
      c.distances[id] = row;
    }
    BitMask def;
    for (int id : c.nodes) def.Or(BitMask::FromUint64(uint64_t{1} << id));
    // A pool of masks shared by all lists.
    std::vector<uint64_t> pool;
    const int pool_size = *rc::gen::inRange(1, 9);
    for (int i = 0; i < pool_size; ++i) {
      uint64_t m = *rc::gen::inRange<uint64_t>(0, uint64_t{1} << width);
      if (*rc::gen::inRange(0, 5) != 0) m &= def.value();
      pool.push_back(m);
    }
    auto gen_hint = [&] {
      TopologyHint h;
      int kind = *rc::gen::inRange(0, 10);
      if (kind >= 2) h.affinity = BitMask::FromUint64(*rc::gen::elementOf(pool));
      h.preferred = *rc::gen::arbitrary<bool>();
      return h;
    };
    int budget = *rc::gen::inRange(0, max_lists + 1);
    int index = 0;
    while (budget > 0) {
      int kind = *rc::gen::inRange(0, 10);
      if (kind == 0) {
        c.providers.push_back(std::nullopt);
        --budget;
        continue;
      }
      std::map<std::string, HintList> resources;
      if (kind != 1) {
        int count = std::min(budget, *rc::gen::inRange(1, 3));
        for (int r = 0; r < count; ++r) {
          std::string name = "r" + std::to_string(index++);
          int list_kind = *rc::gen::inRange(0, 12);
          if (list_kind == 0) {
            resources[name] = std::nullopt;
          } else if (list_kind == 1) {
            resources[name] = std::vector<TopologyHint>{};
          } else {
            std::vector<TopologyHint> hints;
            int hint_count = *rc::gen::inRange(1, max_hints + 1);
            for (int h = 0; h < hint_count; ++h) hints.push_back(gen_hint());
            resources[name] = hints;
          }
        }
        budget -= count;
      } else {
        --budget;
      }
      c.providers.push_back(std::move(resources));
    }
    return c;
  });
}

void ExpectFastEqualsExhaustive(const MergeCase& c) {
  NUMAInfo info(c.nodes, c.distances);
  MergeResult fast = internal::MergeFast(c.policy, info, c.opts, c.providers);
  MergeResult slow = internal::MergeExhaustive(c.policy, info, c.opts, c.providers);
  if (!(fast.hint == slow.hint) || fast.admit != slow.admit) {
    std::ostringstream os;
    PrintCase(c, os);
    RC_FAIL(os.str() + "\nfast " + ::testing::PrintToString(fast.hint) + " admit " +
            std::to_string(fast.admit) + "\nslow " + ::testing::PrintToString(slow.hint) +
            " admit " + std::to_string(slow.admit));
  }
}

TEST(FastMergeProperty, EqualsExhaustiveSmall) {
  test::CheckProperty([] { ExpectFastEqualsExhaustive(*GenMergeCase(4, 5, 6)); }, 5000);
}

TEST(FastMergeProperty, EqualsExhaustiveWide) {
  // Fewer, longer lists over more nodes: exercises the dense closure paths.
  test::CheckProperty([] { ExpectFastEqualsExhaustive(*GenMergeCase(7, 3, 24)); }, 1500);
}

// The argument in policy.cc says the kubelet's fold depends only on the set of merged masks;
// so shuffling the lists (Go's map order) and the hints inside them never changes the result.
TEST(FastMergeProperty, ExhaustiveIsOrderIndependent) {
  test::CheckProperty(
      [] {
        MergeCase c = *GenMergeCase(4, 5, 5);
        NUMAInfo info(c.nodes, c.distances);
        HintLists lists = internal::FilterProvidersHints(c.providers);
        if (c.policy == kPolicySingleNumaNode) lists = internal::FilterSingleNumaHints(lists);
        HintMerger merger(&info, lists, c.policy, c.opts);
        const TopologyHint want = merger.MergeExhaustive();
        std::mt19937 rng(*rc::gen::arbitrary<uint32_t>());
        for (auto& l : lists) std::shuffle(l.begin(), l.end(), rng);
        std::shuffle(lists.begin(), lists.end(), rng);
        HintMerger shuffled(&info, lists, c.policy, c.opts);
        RC_ASSERT(shuffled.MergeExhaustive() == want);
        RC_ASSERT(shuffled.Merge() == want);
      },
      2000);
}

TEST(AchievableMergesProperty, StrategiesAgreeWithBruteForce) {
  test::CheckProperty(
      [] {
        const int n = *rc::gen::inRange(1, 9);
        const int shift = *rc::gen::inRange(0, 3);
        const bool gapped = *rc::gen::arbitrary<bool>();
        uint64_t def = 0;
        for (int i = 0; i < n; ++i) def |= uint64_t{1} << (shift + i * (gapped ? 2 : 1));
        std::vector<std::vector<uint64_t>> lists(*rc::gen::inRange(1, 5));
        for (auto& l : lists) {
          int size = *rc::gen::inRange(1, 40);
          for (int i = 0; i < size; ++i) l.push_back(*rc::gen::arbitrary<uint64_t>() & def);
        }
        std::set<uint64_t> brute = {def};
        for (const auto& l : lists) {
          std::set<uint64_t> next;
          for (uint64_t s : brute) {
            for (uint64_t a : l) next.insert(s & a);
          }
          brute = next;
        }
        brute.erase(0);
        std::vector<uint64_t> want(brute.begin(), brute.end());
        using internal::ClosureStrategy;
        for (auto strategy : {ClosureStrategy::kAuto, ClosureStrategy::kSparse,
                              ClosureStrategy::kDensePairwise, ClosureStrategy::kDenseTransform}) {
          RC_ASSERT(internal::AchievableMerges(def, lists, strategy) == want);
        }
      },
      1000);
}

// The kubelet-perf rows at a size the exhaustive walk can still do (N = 4, 50,625 permutations).
ProvidersHints PerfProviders(int n, bool disjoint) {
  ProvidersHints providers;
  for (int i = 0; i < 4; ++i) {
    std::vector<TopologyHint> hints;
    for (uint64_t m = 1; m < (uint64_t{1} << n); ++m) {
      bool preferred = disjoint ? m == (uint64_t{1} << i) : std::popcount(m) == 1;
      hints.push_back({BitMask::FromUint64(m), preferred});
    }
    providers.push_back(Provider({{"resource-" + std::to_string(i), List(hints)}}));
  }
  return providers;
}

TEST(PolicyTest, KubeletPerfRowsAtFourNodes) {
  NUMAInfo info({0, 1, 2, 3}, {});
  for (const char* policy : {kPolicyBestEffort, kPolicyRestricted}) {
    MergeResult singles = internal::MergeFast(policy, info, {}, PerfProviders(4, false));
    EXPECT_EQ(singles.hint, (TopologyHint{M({0}), true}));
    EXPECT_EQ(singles.hint, internal::MergeExhaustive(policy, info, {}, PerfProviders(4, false)).hint);
    MergeResult disjoint = internal::MergeFast(policy, info, {}, PerfProviders(4, true));
    EXPECT_EQ(disjoint.hint, (TopologyHint{M({0}), false}));
    EXPECT_EQ(disjoint.hint, internal::MergeExhaustive(policy, info, {}, PerfProviders(4, true)).hint);
    EXPECT_EQ(disjoint.admit, std::string(policy) == kPolicyBestEffort);
  }
}

TEST(PolicyTest, EightNodesFast) {
  NUMAInfo info({0, 1, 2, 3, 4, 5, 6, 7}, {});
  EXPECT_EQ(internal::MergeFast(kPolicyBestEffort, info, {}, PerfProviders(8, false)).hint,
            (TopologyHint{M({0}), true}));
  EXPECT_EQ(internal::MergeFast(kPolicyBestEffort, info, {}, PerfProviders(8, true)).hint,
            (TopologyHint{M({0}), false}));
}

}  // namespace
}  // namespace podtopo::topologymanager
