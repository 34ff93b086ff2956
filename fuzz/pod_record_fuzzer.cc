// podtopo's own record of admitted pods (<state-dir>/podtopo_pods.json): a record either reads
// or fails with an error naming the file; a record that reads survives writing
// (ParsePodRecord(MarshalPodRecord(x)) == x, compared through the written text).
#include <string>

#include "admission/pod_record.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"

PODTOPO_FUZZ_TARGET(pod_record) {
  const std::string text(AsText(data, size));
  absl::StatusOr<std::vector<PodRecordEntry>> entries = ParsePodRecord(text, kPodRecordFile);
  if (!entries.ok()) {
    FUZZ_CHECK(entries.status().message().find(kPodRecordFile) != std::string_view::npos,
               fmt::format("the error does not name the file: {}", entries.status().ToString()));
    return 0;
  }
  std::string written = MarshalPodRecord(*entries);
  absl::StatusOr<std::vector<PodRecordEntry>> back = ParsePodRecord(written, "written");
  FUZZ_CHECK(back.ok(), fmt::format("the written record does not read back: {}\n{}",
                                    back.status().ToString(), written));
  FUZZ_CHECK(back->size() == entries->size(), "pods lost or added by the round trip");
  std::string again = MarshalPodRecord(*back);
  FUZZ_CHECK(again == written, fmt::format("record round trip:\n{}\n{}", written, again));
  return 0;
}
