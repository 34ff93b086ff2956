#include "podresources/rate_limiter.h"

#include "gtest/gtest.h"

namespace podtopo::podresources {
namespace {

using Clock = std::chrono::steady_clock;

struct FakeClock {
  Clock::time_point now = Clock::time_point() + std::chrono::hours(1);
  RateLimiter::Clock Fn() {
    return [this] { return now; };
  }
};

TEST(RateLimiterTest, BurstThenRefillAtQps) {
  FakeClock clock;
  RateLimiter limiter(100, 10, clock.Fn());
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(limiter.Allow()) << i;
  EXPECT_FALSE(limiter.Allow());
  clock.now += std::chrono::milliseconds(10);  // one token at 100 qps
  EXPECT_TRUE(limiter.Allow());
  EXPECT_FALSE(limiter.Allow());
  clock.now += std::chrono::seconds(10);  // refills up to the burst, not beyond
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(limiter.Allow()) << i;
  EXPECT_FALSE(limiter.Allow());
}

TEST(RateLimiterTest, ZeroQpsDisablesTheLimit) {
  RateLimiter limiter(0, 0);
  EXPECT_FALSE(limiter.enabled());
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.Allow());
}

TEST(RateLimiterTest, ClockGoingBackwardsAddsNoTokens) {
  FakeClock clock;
  RateLimiter limiter(1, 1, clock.Fn());
  EXPECT_TRUE(limiter.Allow());
  clock.now -= std::chrono::seconds(5);
  EXPECT_FALSE(limiter.Allow());
}

}  // namespace
}  // namespace podtopo::podresources
