// RateLimiter: the kubelet's PodResources rate limit, one global token bucket
// (golang.org/x/time/rate semantics: `burst` tokens, refilled at `qps` per second; Allow()
// takes one token or fails). The kubelet's defaults are 100 qps, burst 10.
//
// Example:
//   RateLimiter limiter(100, 10);
//   if (!limiter.Allow()) return grpc::Status(RESOURCE_EXHAUSTED, "rejected by rate limit");
//
// Thread-safe.
#ifndef PODTOPO_PODRESOURCES_RATE_LIMITER_H_
#define PODTOPO_PODRESOURCES_RATE_LIMITER_H_

#include <chrono>
#include <functional>
#include <mutex>

namespace podtopo::podresources {

inline constexpr double kDefaultQps = 100;
inline constexpr int kDefaultBurst = 10;

class RateLimiter {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // qps <= 0 disables the limit (Allow() is always true). REQUIRES: burst >= 1 when qps > 0.
  // `clock` is for tests (default: steady_clock::now).
  RateLimiter(double qps, int burst, Clock clock = nullptr);

  // Takes one token if one is available.
  bool Allow();

  bool enabled() const { return qps_ > 0; }

 private:
  const double qps_;
  const double burst_;
  Clock clock_;
  std::mutex mu_;
  double tokens_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace podtopo::podresources

#endif  // PODTOPO_PODRESOURCES_RATE_LIMITER_H_
