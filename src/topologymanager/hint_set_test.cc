// HintSet and the structured merge, against the enumerated lists (the kubelet's 2^N walk)
// and the kubelet's permutation walk.
//
// HintSetMergeProperty runs 10^4 random cases of up to 10 NUMA nodes (PODTOPO_PROPERTY_OPS
// overrides the count).
#include "topologymanager/hint_set.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

#include "gtest/gtest.h"
#include "rapidcheck.h"
#include "topologymanager/policy_internal.h"
#include "topologymanager/test_helpers.h"

namespace podtopo::topologymanager {
namespace {

using internal::MergeEnumerated;
using internal::MergeExhaustive;
using internal::MergeFast;

TopologyHint H(uint64_t m, bool preferred) { return TopologyHint{BitMask::FromUint64(m), preferred}; }

TEST(HintSetTest, EnumerateFollowsTheKubeletsOrder) {
  MaskFamily f;
  f.domain = 0b111;
  f.rules = {CoverRule::Of({{0, 4}, {1, 2}, {2, 1}}, 3)};
  HintSet s = HintSet::FromMasks(0b111, f, {}, PreferenceRule{.count = 1});
  EXPECT_EQ(s.Enumerate(), (std::vector<TopologyHint>{H(0b001, true), H(0b011, false),
                                                      H(0b101, false), H(0b110, false),
                                                      H(0b111, false)}));
  EXPECT_EQ(s.MinCount(), 1);
  EXPECT_TRUE(s.Qualifies(0b110));
  EXPECT_FALSE(s.Qualifies(0b010));
  EXPECT_EQ(s.Best(0b010), H(0b011, false));
}

TEST(HintSetTest, RequiredNodesAndExtraMasks) {
  MaskFamily f;
  f.domain = 0b1111;
  f.required = 0b0100;
  f.min_count = 2;
  HintSet s = HintSet::FromMasks(0b1111, f, {0b0001, 0b10000}, PreferenceRule{.count = 2});
  EXPECT_TRUE(s.Qualifies(0b0001));    // extra
  EXPECT_FALSE(s.Qualifies(0b0100));   // below min_count
  EXPECT_TRUE(s.Preferred(0b0101));
  EXPECT_FALSE(s.Qualifies(0b10000));  // outside the nodes: dropped
  EXPECT_EQ(s.MinCount(), 1);
  EXPECT_EQ(s.PreferredMasks(2), (std::vector<BitMask>{BitMask::FromUint64(0b0101),
                                                        BitMask::FromUint64(0b0110)}));
}

TEST(HintSetTest, SearchVisitsAscendingAndPrunes) {
  MaskSearch search;
  search.allowed = 0b11111;
  CoverRule r = CoverRule::Of({{4, 5}}, 5);
  search.rules = {&r};
  std::vector<uint64_t> seen;
  SearchMasks(search, 2, [&](uint64_t m) {
    seen.push_back(m);
    return false;
  });
  EXPECT_EQ(seen, (std::vector<uint64_t>{0b10001, 0b10010, 0b10100, 0b11000}));
}

TEST(HintSetTest, GB200ShapeMergesWithoutTheWalk) {
  // 34 nodes; CPUs on 0-1, a GPU list over all nodes with devices on 0-1, memory everywhere.
  const int n = 34;
  std::vector<int> ids;
  for (int i = 0; i < n; ++i) ids.push_back(i);
  NUMAInfo info(ids, {});
  const uint64_t all = (uint64_t{1} << n) - 1;
  MaskFamily cpu{.domain = 0b11, .rules = {CoverRule::Of({{0, 72}, {1, 72}}, 4)}};
  MaskFamily gpu{.domain = all, .rules = {CoverRule::Of({{1, 2}}, 1)}};
  std::vector<std::pair<int, uint64_t>> mem_w;
  for (int i = 0; i < n; ++i) mem_w.push_back({i, i < 2 ? 480 : 23});
  MaskFamily mem{.domain = all, .min_count = 2, .rules = {CoverRule::Of(mem_w, 100)}};
  std::vector<uint64_t> singles;
  for (int i = 0; i < n; ++i) singles.push_back(uint64_t{1} << i);
  std::vector<uint64_t> mem_extra = {0b01, 0b10};
  ProvidersHints providers = {
      std::map<std::string, HintList>{
          {"gpu", HintSet::FromMasks(all, gpu, {}, PreferenceRule{.count = 1})}},
      std::map<std::string, HintList>{
          {"cpu", HintSet::FromMasks(0b11, cpu, {}, PreferenceRule{.count = 1})}},
      std::map<std::string, HintList>{
          {"memory", HintSet::FromMasks(all, mem, mem_extra, PreferenceRule{.count = 1})}},
  };
  for (const char* policy : {kPolicyBestEffort, kPolicyRestricted, kPolicySingleNumaNode}) {
    MergeResult r = MergeFast(policy, info, {}, providers);
    EXPECT_EQ(r.hint, H(0b10, true)) << policy;  // the GPU is free on NUMA 1 only
    EXPECT_TRUE(r.admit);
  }
}

// ---- Property: structured merge == enumerated lists merge ----

struct Case {
  int n = 1;
  std::string policy;
  bool closest = false;
  std::map<int, std::vector<uint64_t>> distances;
  ProvidersHints providers;
};

rc::Gen<HintSet> GenStructured(int n) {
  return rc::gen::exec([n] {
    const uint64_t all = (uint64_t{1} << n) - 1;
    uint64_t nodes = all & *rc::gen::arbitrary<uint64_t>();
    if (*rc::gen::inRange(0, 3) != 0) nodes = all;
    std::optional<MaskFamily> family;
    if (*rc::gen::inRange(0, 6) != 0) {
      MaskFamily f;
      f.domain = nodes & (*rc::gen::inRange(0, 3) == 0 ? *rc::gen::arbitrary<uint64_t>() : all);
      if (*rc::gen::inRange(0, 3) == 0) {
        f.required = f.domain & *rc::gen::arbitrary<uint64_t>() & *rc::gen::arbitrary<uint64_t>();
      }
      f.min_count = *rc::gen::inRange(1, 3);
      const int rules = *rc::gen::inRange(0, 4);
      for (int r = 0; r < rules; ++r) {
        CoverRule rule;
        for (int i = 0; i < n; ++i) {
          rule.weight[i] = *rc::gen::inRange(0, 3) == 0 ? 0 : *rc::gen::inRange<uint64_t>(0, 9);
        }
        rule.need = *rc::gen::inRange<uint64_t>(0, 4 * static_cast<uint64_t>(n) + 1);
        f.rules.push_back(rule);
      }
      family = f;
    }
    std::vector<uint64_t> extra;
    const int extras = *rc::gen::inRange(0, 4);
    for (int e = 0; e < extras; ++e) {
      uint64_t m = nodes & *rc::gen::arbitrary<uint64_t>();
      if (*rc::gen::inRange(0, 2) == 0 && m != 0) m = m & (~m + 1);  // a single node
      extra.push_back(m);
    }
    PreferenceRule pref;
    pref.count = *rc::gen::inRange(1, n + 1);
    if (*rc::gen::inRange(0, 4) == 0) {
      const int sockets = *rc::gen::inRange(1, 4);
      pref.sockets = *rc::gen::inRange(1, sockets + 1);
      pref.node_sockets.assign(64, {});
      for (int i = 0; i < n; ++i) {
        pref.node_sockets[i] = {uint64_t{1} << *rc::gen::inRange(0, sockets)};
      }
    }
    HintSet s = HintSet::FromMasks(nodes, family, extra, pref);
    // As the providers build them: preferred = the narrowest when asked for.
    if (*rc::gen::inRange(0, 2) == 0 && s.MinCount() > 0) {
      pref.count = s.MinCount();
      s = HintSet::FromMasks(nodes, family, extra, pref);
    }
    return s;
  });
}

rc::Gen<std::vector<TopologyHint>> GenListed(int n) {
  return rc::gen::exec([n] {
    std::vector<TopologyHint> hints;
    const int k = *rc::gen::inRange(0, 5);
    const uint64_t all = (uint64_t{1} << n) - 1;
    for (int i = 0; i < k; ++i) {
      TopologyHint h;
      if (*rc::gen::inRange(0, 6) != 0) h.affinity = BitMask::FromUint64(all & *rc::gen::arbitrary<uint64_t>());
      h.preferred = *rc::gen::arbitrary<bool>();
      hints.push_back(h);
    }
    return hints;
  });
}

rc::Gen<Case> GenCase() {
  return rc::gen::exec([] {
    Case c;
    c.n = *rc::gen::inRange(1, 11);
    c.policy = *rc::gen::element<std::string>(kPolicyBestEffort, kPolicyRestricted,
                                              kPolicySingleNumaNode);
    c.closest = *rc::gen::arbitrary<bool>();
    for (int i = 0; i < c.n; ++i) {
      c.distances[i].assign(c.n, 0);
    }
    for (int i = 0; i < c.n; ++i) {
      for (int j = i; j < c.n; ++j) {
        uint64_t d = i == j ? 10 : *rc::gen::element<uint64_t>(11, 12, 20, 21, 30);
        c.distances[i][j] = c.distances[j][i] = d;
      }
    }
    const int providers = *rc::gen::inRange(1, 5);
    for (int p = 0; p < providers; ++p) {
      const int kind = *rc::gen::inRange(0, 10);
      if (kind == 0) {
        c.providers.push_back(std::nullopt);
        continue;
      }
      std::map<std::string, HintList> resources;
      const int count = *rc::gen::inRange(1, 3);
      for (int r = 0; r < count; ++r) {
        const int what = *rc::gen::inRange(0, 12);
        std::string name = "r" + std::to_string(p) + std::to_string(r);
        if (what == 0) {
          resources[name] = std::nullopt;
        } else if (what == 1) {
          resources[name] = HintSet();
        } else if (what == 2) {
          resources[name] = HintSet(*GenListed(c.n));
        } else {
          resources[name] = *GenStructured(c.n);
        }
      }
      c.providers.push_back(resources);
    }
    return c;
  });
}

int PropertyRuns() {
  if (const char* env = std::getenv("PODTOPO_PROPERTY_OPS")) return std::max(1, std::atoi(env));
  return 10000;
}

TEST(HintSetMergeProperty, SameAsTheEnumeratedLists) {
  test::CheckProperty(
      [] {
        Case c = *GenCase();
        std::vector<int> ids;
        for (int i = 0; i < c.n; ++i) ids.push_back(i);
        NUMAInfo info(ids, c.closest ? c.distances : std::map<int, std::vector<uint64_t>>{});
        PolicyOptions opts;
        opts.prefer_closest_numa = c.closest;
        MergeResult fast = MergeFast(c.policy, info, opts, c.providers);
        MergeResult oracle = MergeEnumerated(c.policy, info, opts, c.providers);
        RC_LOG() << c.policy << (c.closest ? " closest" : "") << " n=" << c.n << " "
                 << test::Describe(c.providers) << "\n";
        RC_ASSERT(fast.hint == oracle.hint);
        RC_ASSERT(fast.admit == oracle.admit);
        // The kubelet's permutation walk where it is small enough.
        double product = 1;
        for (const auto& list : internal::FilterProvidersHints(c.providers)) product *= list.size();
        if (product <= 20000) {
          MergeResult walk = MergeExhaustive(c.policy, info, opts, c.providers);
          RC_ASSERT(walk.hint == oracle.hint);
        }
        // Per list: the searches against the enumerated list.
        for (const auto& p : c.providers) {
          if (!p.has_value()) continue;
          for (const auto& [name, list] : *p) {
            if (!list.has_value() || list->listed()) continue;
            std::vector<TopologyHint> all = list->Enumerate();
            int min_count = 0;
            for (const auto& h : all) {
              RC_ASSERT(list->Qualifies(h.affinity->value()));
              RC_ASSERT(list->Preferred(h.affinity->value()) == h.preferred);
              int k = h.affinity->Count();
              if (min_count == 0 || k < min_count) min_count = k;
            }
            RC_ASSERT(list->MinCount() == min_count);
            // The family's own narrowest member (MaskFamily::MinCount, one-rule shortcut
            // included) against every mask.
            if (const auto& f = list->family(); f.has_value()) {
              std::optional<int> narrowest;
              for (uint64_t m = 1; m < (uint64_t{1} << c.n); ++m) {
                if (f->Contains(m) && (!narrowest || std::popcount(m) < *narrowest)) {
                  narrowest = std::popcount(m);
                }
              }
              RC_ASSERT(f->MinCount() == narrowest);
            }
            RC_ASSERT(list->empty() == all.empty());
            const uint64_t must = *rc::gen::inRange<uint64_t>(0, uint64_t{1} << c.n) &
                                  *rc::gen::arbitrary<uint64_t>();
            HintSet listed(all);
            RC_ASSERT(list->Best(must) == listed.Best(must));
            std::vector<BitMask> preferred;
            for (const auto& h : all) {
              if (h.preferred) preferred.push_back(*h.affinity);
            }
            std::sort(preferred.begin(), preferred.end(),
                      [](BitMask a, BitMask b) { return a.IsNarrowerThan(b); });
            if (preferred.size() > 5) preferred.resize(5);
            RC_ASSERT(list->PreferredMasks(5) == preferred);
          }
        }
      },
      PropertyRuns());
}

}  // namespace
}  // namespace podtopo::topologymanager
