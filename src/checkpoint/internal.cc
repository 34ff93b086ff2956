#include "checkpoint/internal.h"

#include <string_view>

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

}  // namespace podtopo::checkpoint::internal
