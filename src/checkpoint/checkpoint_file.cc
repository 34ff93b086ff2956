#include "checkpoint/checkpoint_file.h"

#include <iterator>

#include "checkpoint/checksum.h"
#include "fmt/format.h"
#include "util/file.h"
#include "util/go_strconv.h"

namespace podtopo::checkpoint::internal {
namespace {

using gojson::Decoder;
using gojson::FieldSpec;
using gojson::Value;

// The error text the kubelet's file store reports for a failed read of `path`, in Go's
// os.PathError form: "read <path>: is a directory", "open <path>: permission denied".
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

}  // namespace

absl::Status Prefix(std::string_view prefix, const absl::Status& s) {
  return absl::InvalidArgumentError(fmt::format("{}{}", prefix, std::string(s.message())));
}

absl::Status Corrupted() { return absl::DataLossError("checkpoint is corrupted"); }

FieldSpec StringField(std::string_view name, std::string& target, std::string_view go_type) {
  return FieldSpec{name, {}, [&target, go_type](Decoder& d, const Value& v) {
                     gojson::DecodeString(d, v, target, go_type);
                     return absl::OkStatus();
                   }};
}

FieldSpec Uint64Field(std::string_view name, uint64_t& target, std::string_view go_type) {
  return FieldSpec{name, {}, [&target, go_type](Decoder& d, const Value& v) {
                     gojson::DecodeUint64(d, v, target, go_type);
                     return absl::OkStatus();
                   }};
}

FieldSpec ChecksumField(std::string_view name, uint64_t& target) {
  return Uint64Field(name, target, "checksum.Checksum");
}

absl::Status UnmarshalStruct(std::string_view contents, std::string_view go_struct,
                             const std::vector<FieldSpec>& fields) {
  const std::string go_type = fmt::format("state.{}", go_struct);
  return gojson::Unmarshal(contents, [&](Decoder& d, const Value& v) {
    return gojson::DecodeStruct(d, v, go_struct, go_type, fields);
  });
}

absl::Status Verified(const absl::Status& decoded, const std::function<bool()>& verify) {
  if (decoded.ok() && !verify()) return Corrupted();
  return decoded;
}

absl::Status UnmarshalAndVerifyDataChecksum(std::string_view contents,
                                            const CheckpointNames& names,
                                            std::vector<FieldSpec> inline_fields,
                                            std::string& data, uint64_t& data_checksum,
                                            const std::vector<FieldSpec>& data_fields) {
  for (FieldSpec& field : inline_fields) field.embedded_path = {names.inline_part};
  inline_fields.push_back(StringField("data", data));
  inline_fields.push_back(ChecksumField("dataChecksum", data_checksum));
  absl::Status s = UnmarshalStruct(contents, names.go_struct, inline_fields);
  if (!s.ok()) {
    return Prefix(fmt::format("failed to deserialize {} checkpoint: ", names.lower), s);
  }
  s = UnmarshalStruct(data, fmt::format("{}Data", names.go_struct), data_fields);
  if (!s.ok()) {
    return Prefix(fmt::format("failed to deserialize {} checkpoint data: ", names.lower), s);
  }
  if (data_checksum != DataChecksum(data)) return Corrupted();
  return absl::OkStatus();
}

absl::Status DataFormatFailure(const CheckpointNames& names, const absl::Status& err,
                               std::string_view data, uint64_t data_checksum) {
  if (err.ok() || (data.empty() && data_checksum == 0)) return absl::OkStatus();
  return Prefix(fmt::format("could not load v{} checkpoint: ", names.data_version), err);
}

void AppendChecksum(std::string& out, uint64_t checksum) {
  fmt::format_to(std::back_inserter(out), ",\"checksum\":{}}}", checksum);
}

std::string AppendDataChecksum(std::string out, uint64_t inline_checksum, std::string_view data,
                               const KeptFields& kept) {
  fmt::format_to(std::back_inserter(out), ",\"checksum\":{},\"data\":", inline_checksum);
  gojson::AppendQuoted(out, data);
  fmt::format_to(std::back_inserter(out), ",\"dataChecksum\":{}}}", DataChecksum(data));
  return WriteWithKept(out, kept.top, kept.top_order);
}

std::string CloseData(std::string data, const KeptFields& kept) {
  data += '}';
  return WriteWithKept(data, kept.data, kept.data_order);
}

Schema FileSchema(const Schema& data_schema) {
  Schema top = data_schema;
  for (const char* member : {"checksum", "data", "dataChecksum"}) {
    top.members.emplace_back(member, &kScalarSchema);
  }
  return top;
}

absl::Status RestoreError(const CheckpointNames& names, std::string_view err,
                          const std::string& path, std::string_view note) {
  return absl::FailedPreconditionError(fmt::format(
      "could not restore state from checkpoint: {}, please drain this node and delete the {} "
      "checkpoint file {} before restarting Kubelet{}",
      err, names.manager, GoQuote(path), note));
}

absl::StatusOr<std::optional<std::string>> ReadCheckpointFile(const CheckpointNames& names,
                                                              const std::string& path) {
  absl::StatusOr<std::string> contents = ReadFile(path);
  if (contents.ok()) return std::optional<std::string>(std::move(*contents));
  if (absl::IsNotFound(contents.status())) return std::optional<std::string>();
  // The kubelet's file store returns the os error, e.g. "read <path>: is a directory".
  return RestoreError(names, GoReadErrorText(contents.status(), path), path);
}

absl::Status WriteCheckpointFile(const std::string& path,
                                 const absl::StatusOr<std::string>& bytes) {
  if (!bytes.ok()) return bytes.status();
  return WriteFileAtomically(path, *bytes, 0600);
}

bool InspectDataChecksumFormat(const CheckpointNames& names, const absl::Status& err,
                               const std::string& policy_name, std::string_view data,
                               uint64_t data_checksum, std::string_view inline_label,
                               uint64_t inline_checksum, ChecksumReport& r) {
  const int version = names.data_version;
  if (err.ok()) {
    ReportLoaded(r, version, policy_name,
                 fmt::format("V{} (kubelet 1.37): dataChecksum {} = FNV-1a-32 of "
                             "\"(string)\"+data; the inline {} {} is not verified by 1.37",
                             version, data_checksum, inline_label, inline_checksum));
    return true;
  }
  r.error = DataFormatFailure(names, err, data, data_checksum);
  if (r.error.ok()) return false;
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

ChecksumReport& ReportLoaded(ChecksumReport& r, int version, const std::string& policy_name,
                             std::string algorithm) {
  r.version = version;
  r.policy_name = policy_name;
  r.algorithm = std::move(algorithm);
  return r;
}

std::string LegacyChecksumText(std::string_view format, uint64_t checksum,
                               std::string_view dump_name) {
  return fmt::format("{}: checksum {} = FNV-1a-32 of the spew dump named {}", format, checksum,
                     dump_name);
}

std::string ZeroChecksumText(std::string_view format) {
  return fmt::format("{}: checksum 0, accepted without verification", format);
}

std::string DroppedPodEntriesNote(int version) {
  return fmt::format("; its podEntries are not covered by a valid V{} checksum and are dropped",
                     version);
}

}  // namespace podtopo::checkpoint::internal
