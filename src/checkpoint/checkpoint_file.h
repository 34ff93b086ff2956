// What the CPU and memory checkpoint codecs share (not a public API): the file around the
// format-specific members.
//
// Both kubelet managers keep their state the same way: one JSON file written 0600 by the
// checkpoint file store, read back with a chain that tries the newest format first, and
// restore errors wrapped in one sentence naming the manager and the file. The v1.37 formats
// (CPU V4, memory V3) frame the older format the same way: the legacy members inline, then
// "data" (the JSON text of the state) and "dataChecksum" (FNV-1a-32 of "(string)"+data).
// The codecs describe their members; this file does the rest once:
//   * reading: Unmarshal (json.Unmarshal into a state.<Name> struct), UnmarshalAndVerify and
//     DataFormatFailure (the V4/V3 step of the chain), Verified (a legacy step: decode, then
//     VerifyChecksum);
//   * writing: AppendChecksum / AppendDataChecksum (the checksum members that close a file),
//     CloseData (the end of `data`), WriteCheckpointFile (atomically, 0600);
//   * the file: ReadCheckpointFile / LoadCheckpointFile (a missing file is no checkpoint),
//     RestoreError (the kubelet's wrapped restore error), FileSchema (its top-level members);
//   * inspection (`podtopo state check`): InspectDataChecksumFormat for V4/V3, ReportLoaded
//     and the checksum texts for the legacy formats.
//
// Example (a codec's V4 step):
//   V4Wire v4;  // DataChecksumWire<V2Wire, DataWire>
//   absl::Status err = UnmarshalAndVerify(contents, kNames, v4);
//   if (err.ok()) ...;  // loaded
//   PODTOPO_RETURN_IF_ERROR(DataFormatFailure(kNames, err, v4.data, v4.data_checksum));
//   V3Wire v3;  // not a V4 file: try V3
//   if (Verified(Unmarshal(contents, v3), [&] { return VerifyV3(v3); }).ok()) ...;
#ifndef PODTOPO_CHECKPOINT_CHECKPOINT_FILE_H_
#define PODTOPO_CHECKPOINT_CHECKPOINT_FILE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/cpu_state_file.h"
#include "checkpoint/go_json.h"
#include "checkpoint/kept_fields.h"
#include "util/status_macros.h"

namespace podtopo::checkpoint::internal {

// How the kubelet names one manager's checkpoint.
struct CheckpointNames {
  std::string_view manager;      // "CPU manager": restore errors, ErrorIfUnkept
  std::string_view lower;        // "cpu manager": "failed to deserialize cpu manager checkpoint"
  std::string_view go_struct;    // "CPUManagerCheckpoint": the newest struct; its data is
                                 // <go_struct>Data, its older ones <go_struct>V<n>
  std::string_view inline_part;  // "CPUManagerCheckpointV2": embedded in the newest struct
  int data_version = 0;          // 4: the format with `data` and `dataChecksum`
};

// The newest format as read: the legacy members inline (`inline_part`), `data` and
// `dataChecksum` as in the file, and what `data` decodes to.
template <class InlineWire, class DataWire>
struct DataChecksumWire {
  InlineWire inline_part;
  std::string data;
  uint64_t data_checksum = 0;
  DataWire checkpoint_data;
};

// ---- Reading. ------------------------------------------------------------------------------

// InvalidArgument "<prefix><message of s>" (the kubelet's fmt.Errorf("...: %v", err)).
absl::Status Prefix(std::string_view prefix, const absl::Status& s);
// The kubelet's checksum mismatch error.
absl::Status Corrupted();

// Struct members for DecodeStruct: a string (Go type `go_type`) and an unsigned number.
gojson::FieldSpec StringField(std::string_view name, std::string& target,
                              std::string_view go_type = "string");
gojson::FieldSpec Uint64Field(std::string_view name, uint64_t& target, std::string_view go_type);
// The `checksum` member (Go type checksum.Checksum); `name` is "checksum" or "dataChecksum".
gojson::FieldSpec ChecksumField(std::string_view name, uint64_t& target);

// json.Unmarshal(contents, &state.<go_struct>{...}) with these members.
absl::Status UnmarshalStruct(std::string_view contents, std::string_view go_struct,
                             const std::vector<gojson::FieldSpec>& fields);

// One legacy step of the load chain: `decoded` (the Unmarshal result), then the format's
// VerifyChecksum; Corrupted() when the decoded file does not verify.
absl::Status Verified(const absl::Status& decoded, const std::function<bool()>& verify);

// The newest format's UnmarshalCheckpoint + VerifyChecksum: `contents` as the inline members
// (embedded in names.inline_part) plus data and dataChecksum, then `data` as the data members,
// then the data checksum. Errors as the kubelet's: "failed to deserialize <lower> checkpoint:
// ...", "failed to deserialize <lower> checkpoint data: ...", "checkpoint is corrupted".
absl::Status UnmarshalAndVerifyDataChecksum(std::string_view contents,
                                            const CheckpointNames& names,
                                            std::vector<gojson::FieldSpec> inline_fields,
                                            std::string& data, uint64_t& data_checksum,
                                            const std::vector<gojson::FieldSpec>& data_fields);

// The codecs' wire structs mirror the kubelet's Go structs member for member. A legacy one
// names its Go struct (Wire::kGoStruct = "CPUManagerCheckpointV2"); for each, the codec
// declares the JSON members as Fields(Wire&) beside it, found by argument-dependent lookup.

// json.Unmarshal(contents, &state.<Wire::kGoStruct>{...}).
template <class Wire>
absl::Status Unmarshal(std::string_view contents, Wire& cp) {
  return UnmarshalStruct(contents, Wire::kGoStruct, Fields(cp));
}

// UnmarshalAndVerifyDataChecksum of the newest format.
template <class InlineWire, class DataWire>
absl::Status UnmarshalAndVerify(std::string_view contents, const CheckpointNames& names,
                                DataChecksumWire<InlineWire, DataWire>& cp) {
  return UnmarshalAndVerifyDataChecksum(contents, names, Fields(cp.inline_part), cp.data,
                                        cp.data_checksum, Fields(cp.checkpoint_data));
}

// After a failed newest-format step (`err`): a file with `data` or a dataChecksum is of that
// format and the chain stops with "could not load v<N> checkpoint: <err>"; OK when the file
// is of an older format.
absl::Status DataFormatFailure(const CheckpointNames& names, const absl::Status& err,
                               std::string_view data, uint64_t data_checksum);

// ---- Writing. ------------------------------------------------------------------------------

// Closes a legacy file: ,"checksum":<checksum>}
void AppendChecksum(std::string& out, uint64_t checksum);
// Closes the newest format's file, whose inline members are in `out`:
// ,"checksum":<inline>,"data":"<data>","dataChecksum":<FNV>}, then kept.top's members.
std::string AppendDataChecksum(std::string out, uint64_t inline_checksum, std::string_view data,
                               const KeptFields& kept);
// Closes the `data` object whose members are in `data`, then kept.data's members.
std::string CloseData(std::string data, const KeptFields& kept);

// ---- The file. -----------------------------------------------------------------------------

// The members of the file's top-level object that podtopo models (kept_fields.h): the state's
// members (`data_schema`'s, in the legacy formats the file's own), then checksum, data and
// dataChecksum.
Schema FileSchema(const Schema& data_schema);

// The kubelet's wrapped restore error (FailedPrecondition):
//   could not restore state from checkpoint: <err>, please drain this node and delete the
//   <manager> checkpoint file "<path>" before restarting Kubelet<note>
absl::Status RestoreError(const CheckpointNames& names, std::string_view err,
                          const std::string& path, std::string_view note = {});

// The bytes of `path`; nullopt when it does not exist. A directory or unreadable file is a
// RestoreError with the file store's os error ("read <path>: is a directory").
absl::StatusOr<std::optional<std::string>> ReadCheckpointFile(const CheckpointNames& names,
                                                              const std::string& path);

// ReadCheckpointFile, then `restore(contents)` (an absl::StatusOr<Checkpoint>).
template <class Checkpoint, class Restore>
absl::StatusOr<std::optional<Checkpoint>> LoadCheckpointFile(const CheckpointNames& names,
                                                             const std::string& path,
                                                             Restore&& restore) {
  PODTOPO_ASSIGN_OR_RETURN(std::optional<std::string> contents, ReadCheckpointFile(names, path));
  if (!contents) return std::optional<Checkpoint>();
  PODTOPO_ASSIGN_OR_RETURN(Checkpoint cp, restore(*contents));
  return std::optional<Checkpoint>(std::move(cp));
}

// WriteFileAtomically(path, bytes, 0600) (the kubelet's file store creates its files 0600);
// `bytes`' error as is.
absl::Status WriteCheckpointFile(const std::string& path, const absl::StatusOr<std::string>& bytes);

// ---- Inspection. ---------------------------------------------------------------------------

// The outer step of Inspect*Checkpoint for the newest format. `err` is its load-and-verify
// result, `inline_label` names the legacy inline checksum ("checksum", "V1 checksum"). Fills
// `r` and returns true when the file is of that format, loaded or not; false when it is an
// older format.
bool InspectDataChecksumFormat(const CheckpointNames& names, const absl::Status& err,
                               const std::string& policy_name, std::string_view data,
                               uint64_t data_checksum, std::string_view inline_label,
                               uint64_t inline_checksum, ChecksumReport& r);

// Fills `r` for the format that loads: its version, policy name and how its checksum verified.
ChecksumReport& ReportLoaded(ChecksumReport& r, int version, const std::string& policy_name,
                             std::string algorithm);
// How a legacy checksum verified, for ChecksumReport::algorithm: "<format>: checksum <sum> =
// FNV-1a-32 of the spew dump named <dump_name>", or "<format>: checksum 0, accepted without
// verification".
std::string LegacyChecksumText(std::string_view format, uint64_t checksum,
                               std::string_view dump_name);
std::string ZeroChecksumText(std::string_view format);

// The note of a legacy format that loads while the next format's pod entries do not verify:
// "; its podEntries are not covered by a valid V<version> checksum and are dropped".
std::string DroppedPodEntriesNote(int version);

}  // namespace podtopo::checkpoint::internal

#endif  // PODTOPO_CHECKPOINT_CHECKPOINT_FILE_H_
