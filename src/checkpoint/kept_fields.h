// What a kubelet checkpoint holds beyond what podtopo models, kept for the next write.
//
// A newer kubelet (or a feature podtopo does not model) may add members to the checkpoint's
// JSON. Go's json.Unmarshal ignores them, so the kubelet itself would drop them at its next
// write; podtopo must not drop what the kubelet wrote (issue 10 item 6). The CPU and memory
// codecs therefore record, when they restore a file:
//   * the members of the top-level object and of the V4/V3 `data` object that no struct
//     field matches (Go's case-insensitive key match), with their JSON text re-marshalled
//     compactly (byte-identical for the compact json.Marshal output the kubelet writes), and
//     the order of all members, so a rewrite puts every member where it was;
//   * the JSON paths of unknown members nested inside modelled values (a new field of a
//     memory block, of a pod entry, ...), which podtopo cannot keep: the codecs then refuse to
//     rewrite the file (ErrorIfUnkept) instead of silently losing them.
//
// Example:
//   KeptFields kept;
//   CollectKeptFields(doc, kCpuDataSchema, /*into_data=*/true, kept);
//   std::string bytes = WriteWithKept(canonical_json, kept.data, kept.data_order);
#ifndef PODTOPO_CHECKPOINT_KEPT_FIELDS_H_
#define PODTOPO_CHECKPOINT_KEPT_FIELDS_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace podtopo::checkpoint {

namespace gojson {
struct Value;
}

struct KeptFields {
  // Unknown members of the top-level object: key as written -> compact JSON text, file order.
  std::vector<std::pair<std::string, std::string>> top;
  // Unknown members of the V4/V3 `data` object.
  std::vector<std::pair<std::string, std::string>> data;
  // The order of every member as read (known members under their canonical name).
  std::vector<std::string> top_order;
  std::vector<std::string> data_order;
  // JSON paths of unknown members inside modelled values ("data.podEntries.<pod>.x").
  std::vector<std::string> unkept;
  // The V4 CPU file's inline `checksum` was the legacy V2 checksum rather than 0.
  bool legacy_inline_checksum = false;

  bool empty() const {
    return top.empty() && data.empty() && unkept.empty() && !legacy_inline_checksum;
  }
  friend bool operator==(const KeptFields&, const KeptFields&) = default;
};

// The shape podtopo models: an object with named members, a map with any keys, an array, or
// a scalar (anything else). Unknown members are only recognised inside objects.
struct Schema {
  enum class Kind { kScalar, kObject, kMap, kArray };
  Kind kind = Kind::kScalar;
  std::vector<std::pair<std::string, const Schema*>> members;  // kObject
  const Schema* element = nullptr;                             // kMap, kArray

  static Schema Scalar() { return Schema{}; }
  static Schema Object(std::vector<std::pair<std::string, const Schema*>> members) {
    return Schema{Kind::kObject, std::move(members), nullptr};
  }
  static Schema Map(const Schema* element) { return Schema{Kind::kMap, {}, element}; }
  static Schema Array(const Schema* element) { return Schema{Kind::kArray, {}, element}; }
};

// Records the unknown members of `object` (an object of shape `schema`) into `members` and
// the member order into `order`; nested unknown members go to `unkept` as paths under
// `path`. A non-object `object` records nothing. The order is recorded only when it is not
// already the schema's (json.Marshal's struct) order, or when there are unknown members.
void CollectKeptMembers(const gojson::Value& object, const Schema& schema, std::string_view path,
                        std::vector<std::pair<std::string, std::string>>& members,
                        std::vector<std::string>& order, std::vector<std::string>& unkept);

// The kept members of a checkpoint file: of its top-level object (`contents`, shape `top`)
// and, for a format with `data` (non-null `data`), of that text (shape `data_schema`; paths
// under "data"). Text that does not parse records nothing (the load chain reported it).
void CollectKeptFields(std::string_view contents, const Schema& top, const std::string* data,
                       const Schema& data_schema, KeptFields& kept);

// A scalar member (string, number, bool), for the codecs' schemas.
extern const Schema kScalarSchema;

// Writes `canonical` (a JSON object as podtopo marshals it) with the kept `members` added and
// every member in `order`; members `order` does not name keep their place after the member
// before them. Returns `canonical` itself when there is nothing to add or reorder.
std::string WriteWithKept(const std::string& canonical,
                          const std::vector<std::pair<std::string, std::string>>& members,
                          const std::vector<std::string>& order);

// FailedPrecondition naming the unkept paths (podtopo refuses to rewrite such a file), else OK.
absl::Status ErrorIfUnkept(const KeptFields& kept, std::string_view what);

}  // namespace podtopo::checkpoint

#endif  // PODTOPO_CHECKPOINT_KEPT_FIELDS_H_
