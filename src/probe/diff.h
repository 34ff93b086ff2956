// podtopo probe diff BEFORE.json AFTER.json: what moved between two `podtopo probe -o json`
// reports, e.g. before and after enabling a kubelet policy.
//
// For every NUMA node in memoryLatencyNs and every CPU in wakeup (p50, p99, p99.9, max) and
// for involuntarySwitches it gives before, after and after/before. A value "moved" when the
// ratio is beyond the threshold (default 1.25: 25% slower is "worse", 25% faster "better");
// wake-up figures below 1us and nodes or CPUs in one report only are said so.
//
//   auto before = probe::LoadReport("before.json");           // errors name the file and key
//   auto after = probe::LoadReport("after.json");
//   nlohmann::json d = probe::DiffReports(*before, *after);    // the -o json document
//   std::string text = probe::RenderDiff(d);                   // the table
//
// Thread safety: free functions.
#ifndef PODTOPO_PROBE_DIFF_H_
#define PODTOPO_PROBE_DIFF_H_

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace podtopo::probe {

inline constexpr double kDefaultMoveRatio = 1.25;

// Reads a probe report. Errors (kInvalidArgument) start with the path: not JSON, or
// memoryLatencyNs / wakeup missing or not objects, or a figure that is not a number.
absl::StatusOr<nlohmann::json> LoadReport(const std::string& path);
absl::Status CheckReport(const std::string& name, const nlohmann::json& report);

nlohmann::json DiffReports(const nlohmann::json& before, const nlohmann::json& after,
                           double move_ratio = kDefaultMoveRatio);

std::string RenderDiff(const nlohmann::json& diff);

}  // namespace podtopo::probe

#endif  // PODTOPO_PROBE_DIFF_H_
