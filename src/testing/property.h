// Property tests: rapidcheck properties reported through GoogleTest, run for one seed or many.
//
//   PODTOPO_PROPERTY(CpuSetProperty, StringRoundTrips, (const std::vector<int>& cpus)) {
//     RC_ASSERT(...);
//   }                                            // as RC_GTEST_PROP, 100 cases by default
//   TEST(FastMergeProperty, EqualsExhaustiveSmall) {
//     testing::CheckProperty([] { ... }, 5000);  // a property of 5000 cases
//   }
//
// Seeds. Without PODTOPO_PROPERTY_SEEDS, a property runs once, with rapidcheck's seed (random,
// or RC_PARAMS="seed=S"). With PODTOPO_PROPERTY_SEEDS="FIRST-LAST" (or one number), it runs once
// per seed in that range, in this process, and a failure names its seed: scripts/property_seeds.sh
// runs every property over 1,000 seeds that way (issue 26: a property, or a coverage check over a
// random generator, must hold for every seed). RC_PARAMS="max_success=K" replaces the cases of
// every property, CheckProperty's counts included, so that many seeds stay quick.
//
// Tests that draw from std::mt19937 instead of rapidcheck (NodePropertyTest) take their seeds
// from PropertySeeds(fixed): {fixed} by default, fixed ^ S for each S of PODTOPO_PROPERTY_SEEDS.
#ifndef PODTOPO_TESTING_PROPERTY_H_
#define PODTOPO_TESTING_PROPERTY_H_

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "rapidcheck.h"

namespace podtopo::testing {

// The seeds of PODTOPO_PROPERTY_SEEDS ("FIRST-LAST" or "S"), or nullopt when it is unset. A
// malformed value is a test failure (reported by the caller), not a silent single run.
std::optional<std::vector<uint64_t>> PropertySeedsFromEnv(std::string* error);

// Seeds for a test that draws from its own generator seeded `fixed`: {fixed}, or fixed ^ S for
// each S of PODTOPO_PROPERTY_SEEDS.
std::vector<uint32_t> PropertySeeds(uint32_t fixed);

// True when RC_PARAMS sets max_success (which then wins over a property's own case count).
bool MaxSuccessFromRcParams();

// Runs `testable` as a rapidcheck property with `runs` cases (0: rapidcheck's default, 100),
// once per seed, and reports the first failure through GoogleTest with its seed.
template <typename Testable>
void CheckProperty(Testable&& testable, int runs = 0) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  if (runs > 0 && !MaxSuccessFromRcParams()) params.maxSuccess = runs;
  std::string error;
  const std::optional<std::vector<uint64_t>> seeds = PropertySeedsFromEnv(&error);
  if (!error.empty()) FAIL() << error;
  for (uint64_t seed : seeds.value_or(std::vector<uint64_t>{params.seed})) {
    params.seed = seed;
    const auto result = rc::detail::checkTestable(testable, metadata, params);
    if (!result.template is<rc::detail::SuccessResult>()) {
      std::ostringstream ss;
      rc::detail::printResultMessage(result, ss);
      FAIL() << "seed " << seed << " (RC_PARAMS=\"seed=" << seed << "\" reproduces it)\n"
             << ss.str();
    }
    // As RC_GTEST_PROP: the tags' distribution (RC_TAG, RC_CLASSIFY) of a single run.
    if (!seeds.has_value() &&
        !result.template get<rc::detail::SuccessResult>().distribution.empty()) {
      rc::detail::printResultMessage(result, std::cout);
      std::cout << std::endl;
    }
  }
}

}  // namespace podtopo::testing

// A rapidcheck property as a GoogleTest test, as RC_GTEST_PROP defines one, run through
// CheckProperty (so PODTOPO_PROPERTY_SEEDS applies).
#define PODTOPO_PROPERTY(TestSuite, Name, ArgList)                         \
  void PodtopoProperty_##TestSuite##_##Name ArgList;                       \
  TEST(TestSuite, Name) {                                                  \
    ::podtopo::testing::CheckProperty(&PodtopoProperty_##TestSuite##_##Name); \
  }                                                                        \
  void PodtopoProperty_##TestSuite##_##Name ArgList

#endif  // PODTOPO_TESTING_PROPERTY_H_
