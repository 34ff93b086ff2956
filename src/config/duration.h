// Duration: a Go time.Duration as KubeletConfiguration writes it ("10s", "1m30s", "300ms").
//
// Parse is time.ParseDuration (the parser behind metav1.Duration), String is
// time.Duration.String, both including their error texts and corner cases:
//   Duration::Parse("1m30s")->String()   // "1m30s"
//   Duration::Parse("90s")->String()     // "1m30s"
//   Duration::Parse("1.5h")->String()    // "1h30m0s"
//   Duration::Parse("5").status()        // time: missing unit in duration "5"
//
// Thread safety: a value type.
#ifndef PODTOPO_CONFIG_DURATION_H_
#define PODTOPO_CONFIG_DURATION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace podtopo::config {

class Duration {
 public:
  static constexpr int64_t kNanosecond = 1;
  static constexpr int64_t kMicrosecond = 1000;
  static constexpr int64_t kMillisecond = 1000 * kMicrosecond;
  static constexpr int64_t kSecond = 1000 * kMillisecond;
  static constexpr int64_t kMinute = 60 * kSecond;
  static constexpr int64_t kHour = 60 * kMinute;

  constexpr Duration() = default;
  constexpr explicit Duration(int64_t nanos) : nanos_(nanos) {}
  static constexpr Duration Seconds(int64_t s) { return Duration(s * kSecond); }

  // time.ParseDuration. Errors (kInvalidArgument) are Go's texts:
  //   time: invalid duration "x"
  //   time: missing unit in duration "5"
  //   time: unknown unit "d" in duration "1d"
  static absl::StatusOr<Duration> Parse(std::string_view text);

  int64_t nanos() const { return nanos_; }
  // time.Duration.String: "0s", "1.5s", "300ms", "1m30s", "2h0m0s", "-5s".
  std::string String() const;

  friend bool operator==(Duration a, Duration b) { return a.nanos_ == b.nanos_; }
  friend bool operator!=(Duration a, Duration b) { return a.nanos_ != b.nanos_; }

 private:
  int64_t nanos_ = 0;
};

}  // namespace podtopo::config

#endif  // PODTOPO_CONFIG_DURATION_H_
