#include "checkpoint/internal.h"

#include <string_view>

#include "checkpoint/checksum.h"
#include "fmt/format.h"

namespace podtopo::checkpoint::internal {

std::string GoReadErrorText(const absl::Status& read_status, const std::string& path) {
  std::string message_str(read_status.message());
  std::string_view message = message_str;
  auto ends_with = [&](std::string_view suffix) {
    return message.size() >= suffix.size() &&
           message.substr(message.size() - suffix.size()) == suffix;
  };
  if (ends_with("is a directory") || ends_with("Is a directory")) {
    return fmt::format("read {}: is a directory", path);
  }
  if (absl::IsPermissionDenied(read_status)) return fmt::format("open {}: permission denied", path);
  return std::string(message);
}

absl::Status Prefix(std::string_view prefix, const absl::Status& s) {
  return absl::InvalidArgumentError(fmt::format("{}{}", prefix, std::string(s.message())));
}

absl::Status Corrupted() { return absl::DataLossError("checkpoint is corrupted"); }

bool InspectDataChecksumFormat(int version, const absl::Status& err, const std::string& policy_name,
                               std::string_view data, uint64_t data_checksum,
                               std::string_view inline_label, uint64_t inline_checksum,
                               ChecksumReport& r) {
  if (err.ok()) {
    r.version = version;
    r.policy_name = policy_name;
    r.algorithm = fmt::format(
        "V{} (kubelet 1.37): dataChecksum {} = FNV-1a-32 of \"(string)\"+data; the inline "
        "{} {} is not verified by 1.37",
        version, data_checksum, inline_label, inline_checksum);
    return true;
  }
  if (data.empty() && data_checksum == 0) return false;
  r.error = Prefix(fmt::format("could not load v{} checkpoint: ", version), err);
  if (err.message() == "checkpoint is corrupted") {
    r.algorithm = fmt::format(
        "V{} (kubelet 1.37): dataChecksum {} in the file, but FNV-1a-32 of \"(string)\"+data "
        "is {}",
        version, data_checksum, DataChecksum(data));
  } else {
    r.algorithm =
        fmt::format("V{} (kubelet 1.37): the file or its data field does not decode", version);
  }
  return true;
}

}  // namespace podtopo::checkpoint::internal
