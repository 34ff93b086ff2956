// The kubelet's checkpoint checksums: FNV-1a 32 over a go-spew "%#v" dump.
//
// checksum.New(obj) in the kubelet is FNV-1a-32 (offset 2166136261, prime 16777619) over
// spew.ConfigState{Indent:" ", SortKeys, DisableMethods, SpewKeys, DisablePointerAddresses,
// DisableCapacities}.Sprintf("%#v", obj), stored zero-extended as a uint64 JSON number.
// The legacy checksums of the CPU/memory manager hash a pointer to the checkpoint struct with
// Checksum=0 and the first occurrence of the versioned type name replaced by the un-versioned
// one (CPUManagerCheckpointV2 -> CPUManagerCheckpoint). The V4/V3 `dataChecksum` is
// checksum.New(data string) = FNV over "(string)" + data.
//
// SpewWriter produces the %#v text piece by piece with go-spew's rules:
//   * a value whose static type is known prints "(<type>)" first: the top-level value and
//     every struct field (`Name:(string)none`); map keys, map values and slice elements don't;
//   * structs `{A:(int)1 B:(string)x}`, maps `map[k:v k:v]` (keys sorted: strings bytewise,
//     ints numerically), slices `[a b]`, single spaces between items;
//   * strings raw (no quotes, no escaping), integers in decimal;
//   * nil map/slice/pointer `<nil>` (after the type prefix for a field), empty `map[]`/`[]`;
//   * a non-nil pointer without a type prefix (a map value) prints `<*>` then the pointee;
//     the top-level pointer prints `(*state.X)` then the pointee.
//
// Example (the upstream CPU V2 fixture, checksum 3610638499):
//   std::string dump;
//   SpewWriter w(&dump);
//   w.Type("*state.CPUManagerCheckpoint").OpenStruct();
//   w.FieldName("PolicyName").Type("string").String("none");
//   ...
//   w.CloseStruct();
//   uint32_t sum = Fnv1a32(dump);
#ifndef PODTOPO_CHECKPOINT_CHECKSUM_H_
#define PODTOPO_CHECKPOINT_CHECKSUM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace podtopo::checkpoint {

// FNV-1a 32-bit over `bytes`.
uint32_t Fnv1a32(std::string_view bytes);

// checksum.New(data) for a Go string: FNV-1a 32 over "(string)" + data.
uint64_t DataChecksum(std::string_view data);

// strings.Replace(s, from, to, 1): replaces the first occurrence only.
std::string ReplaceFirst(std::string_view s, std::string_view from, std::string_view to);

// FNV-1a 32 of `dump` after ReplaceFirst(dump, versioned_name, legacy_name); pass an empty
// versioned_name to hash the dump as is.
uint64_t LegacyChecksum(std::string_view dump, std::string_view versioned_name,
                        std::string_view legacy_name);

// Appends go-spew "%#v" text to a string. Containers track their own separators: every
// FieldName/Key/Elem after the first in a container is preceded by one space.
class SpewWriter {
 public:
  // REQUIRES: out != nullptr and outlives the writer.
  explicit SpewWriter(std::string* out) : out_(out) {}

  SpewWriter& Type(std::string_view go_type);  // "(go_type)"
  SpewWriter& String(std::string_view s);      // raw bytes
  SpewWriter& Int(int64_t v);
  SpewWriter& Uint(uint64_t v);
  SpewWriter& Nil();            // "<nil>"
  SpewWriter& PointerMarker();  // "<*>"

  SpewWriter& OpenStruct();  // "{"
  SpewWriter& FieldName(std::string_view name);  // [" "] "Name:"
  SpewWriter& CloseStruct();  // "}"

  SpewWriter& OpenMap();  // "map["
  SpewWriter& Key();      // [" "] before a key; write the key, then Colon(), then the value
  SpewWriter& Colon();    // ":"
  SpewWriter& CloseMap();  // "]"

  SpewWriter& OpenSlice();  // "["
  SpewWriter& Elem();       // [" "] before an element
  SpewWriter& CloseSlice();  // "]"

 private:
  void Separator();
  std::string* out_;
  std::vector<bool> first_;  // per open container: no item written yet
};

// The start of a checkpoint struct's dump, `(*state.<type_name>){PolicyName:(string)<policy>`,
// and its end with the checksum zeroed as VerifyChecksum hashes it,
// ` Checksum:(checksum.Checksum)0}`.
void SpewCheckpointHead(SpewWriter& w, std::string_view type_name, std::string_view policy_name);
void SpewZeroChecksumTail(SpewWriter& w);

// A map body (after its type prefix, if any): `<nil>` for a nil map, else `map[k:v k:v]` in
// std::map order, which is spew's SortKeys order for string keys and for integer keys.
// spew_value(w, value) writes each value.
template <class Map, class SpewValue>
void SpewMap(SpewWriter& w, const std::optional<Map>& m, SpewValue&& spew_value) {
  if (!m) {
    w.Nil();
    return;
  }
  w.OpenMap();
  for (const auto& [key, value] : *m) {
    w.Key();
    if constexpr (std::is_integral_v<std::decay_t<decltype(key)>>) {
      w.Int(key);
    } else {
      w.String(key);
    }
    w.Colon();
    spew_value(w, value);
  }
  w.CloseMap();
}

// A slice body: `<nil>` for a nil slice, else `[a b]`; spew_elem(w, elem) writes each element.
template <class T, class SpewElem>
void SpewSlice(SpewWriter& w, const std::optional<std::vector<T>>& v, SpewElem&& spew_elem) {
  if (!v) {
    w.Nil();
    return;
  }
  w.OpenSlice();
  for (const T& elem : *v) {
    w.Elem();
    spew_elem(w, elem);
  }
  w.CloseSlice();
}

// Spew of a cpuset.CPUSet value as a map value / field body (no type prefix):
// `{elems:(map[int]struct {})map[2:{} 8:{}]}`. `ids` must be ascending.
void SpewCpuSetBody(SpewWriter& w, const std::vector<int>& ids);

}  // namespace podtopo::checkpoint

#endif  // PODTOPO_CHECKPOINT_CHECKSUM_H_
