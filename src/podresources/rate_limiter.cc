#include "podresources/rate_limiter.h"

#include <algorithm>

namespace podtopo::podresources {

RateLimiter::RateLimiter(double qps, int burst, Clock clock)
    : qps_(qps), burst_(burst), clock_(std::move(clock)), tokens_(burst) {
  if (!clock_) clock_ = [] { return std::chrono::steady_clock::now(); };
  last_ = clock_();
}

bool RateLimiter::Allow() {
  if (qps_ <= 0) return true;
  std::lock_guard<std::mutex> lock(mu_);
  auto now = clock_();
  if (now > last_) {
    double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

}  // namespace podtopo::podresources
