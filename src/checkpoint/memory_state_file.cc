#include "checkpoint/memory_state_file.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "checkpoint/checksum.h"
#include "checkpoint/go_json.h"
#include "checkpoint/checkpoint_file.h"
#include "fmt/format.h"
#include "util/go_strconv.h"
#include "util/status_macros.h"

namespace podtopo::checkpoint {
namespace {

using internal::ChecksumField;
using internal::Corrupted;
using internal::StringField;
using internal::Uint64Field;

using gojson::Decoder;
using gojson::FieldSpec;
using gojson::Value;

// ---------------------------------------------------------------------------------------
// Go-faithful models (nullopt = nil). Defaults equal the kubelet's constructors.

struct TableWire {
  uint64_t total = 0, system_reserved = 0, allocatable = 0, reserved = 0, free = 0;
};
using MemoryMapWire = std::optional<std::map<std::string, std::optional<TableWire>>>;

struct NodeWire {
  int64_t number_of_assignments = 0;
  MemoryMapWire memory_map;
  std::optional<std::vector<int64_t>> cells;
};
using MachineWire = std::optional<std::map<int64_t, std::optional<NodeWire>>>;

struct BlockWire {
  std::optional<std::vector<int64_t>> numa_affinity;
  std::string type;
  uint64_t size = 0;
};
using BlocksWire = std::optional<std::vector<BlockWire>>;
using EntriesWire =
    std::optional<std::map<std::string, std::optional<std::map<std::string, BlocksWire>>>>;

struct PodEntryWire {
  BlocksWire memory_blocks;
};
using PodEntriesWire = std::optional<std::map<std::string, PodEntryWire>>;

struct V1Wire {
  static constexpr char kGoStruct[] = "MemoryManagerCheckpointV1";
  std::string policy_name;
  MachineWire machine_state = MachineWire::value_type{};
  EntriesWire entries = EntriesWire::value_type{};
  uint64_t checksum = 0;
};

struct V2Wire {
  static constexpr char kGoStruct[] = "MemoryManagerCheckpointV2";
  std::string policy_name;
  MachineWire machine_state = MachineWire::value_type{};
  EntriesWire entries = EntriesWire::value_type{};
  PodEntriesWire pod_entries = PodEntriesWire::value_type{};
  uint64_t checksum = 0;
};

struct DataWire {
  std::string policy_name;
  MachineWire machine_state = MachineWire::value_type{};
  EntriesWire entries = EntriesWire::value_type{};
  PodEntriesWire pod_entries = PodEntriesWire::value_type{};
};

// MemoryManagerCheckpoint (V3): embedded V1 + data + dataChecksum.
using V3Wire = internal::DataChecksumWire<V1Wire, DataWire>;

constexpr internal::CheckpointNames kNames{
    .manager = "memory manager", .lower = "memory manager", .go_struct = "MemoryManagerCheckpoint",
    .inline_part = "MemoryManagerCheckpointV1", .data_version = 3};
constexpr char kLegacyName[] = "MemoryManagerCheckpoint";

// ---------------------------------------------------------------------------------------
// Spew.

void SpewInts(SpewWriter& w, const std::optional<std::vector<int64_t>>& v) {
  w.Type("[]int");
  SpewSlice(w, v, [](SpewWriter& ww, int64_t x) { ww.Int(x); });
}

void SpewTable(SpewWriter& w, const std::optional<TableWire>& table) {
  if (!table) {
    w.Nil();
    return;
  }
  w.PointerMarker().OpenStruct();
  w.FieldName("TotalMemSize").Type("uint64").Uint(table->total);
  w.FieldName("SystemReserved").Type("uint64").Uint(table->system_reserved);
  w.FieldName("Allocatable").Type("uint64").Uint(table->allocatable);
  w.FieldName("Reserved").Type("uint64").Uint(table->reserved);
  w.FieldName("Free").Type("uint64").Uint(table->free);
  w.CloseStruct();
}

void SpewNode(SpewWriter& w, const std::optional<NodeWire>& node) {
  if (!node) {
    w.Nil();
    return;
  }
  w.PointerMarker().OpenStruct();
  w.FieldName("NumberOfAssignments").Type("int").Int(node->number_of_assignments);
  w.FieldName("MemoryMap").Type("map[v1.ResourceName]*state.MemoryTable");
  SpewMap(w, node->memory_map, SpewTable);
  w.FieldName("Cells");
  SpewInts(w, node->cells);
  w.CloseStruct();
}

// An untyped []Block (a map value or a typed field body once the prefix is written).
void SpewBlocksBody(SpewWriter& w, const BlocksWire& blocks) {
  SpewSlice(w, blocks, [](SpewWriter& ww, const BlockWire& b) {
    ww.OpenStruct();
    ww.FieldName("NUMAAffinity");
    SpewInts(ww, b.numa_affinity);
    ww.FieldName("Type").Type("v1.ResourceName").String(b.type);
    ww.FieldName("Size").Type("uint64").Uint(b.size);
    ww.CloseStruct();
  });
}

// The dump of a legacy struct (V1, V2) with Checksum 0: PolicyName, MachineState, Entries,
// then PodEntries when `pod_entries` is given.
std::string SpewLegacy(std::string_view type_name, std::string_view policy_name,
                       const MachineWire& machine, const EntriesWire& entries,
                       const PodEntriesWire* pod_entries) {
  std::string out;
  SpewWriter w(&out);
  SpewCheckpointHead(w, type_name, policy_name);
  w.FieldName("MachineState").Type("state.NUMANodeMap");
  SpewMap(w, machine, SpewNode);
  w.FieldName("Entries").Type("state.ContainerMemoryAssignments");
  SpewMap(w, entries, [](SpewWriter& ww, const auto& containers) {
    SpewMap(ww, containers, SpewBlocksBody);
  });
  if (pod_entries != nullptr) {
    w.FieldName("PodEntries").Type("state.PodMemoryAssignments");
    SpewMap(w, *pod_entries, [](SpewWriter& ww, const PodEntryWire& entry) {
      ww.OpenStruct().FieldName("MemoryBlocks").Type("[]state.Block");
      SpewBlocksBody(ww, entry.memory_blocks);
      ww.CloseStruct();
    });
  }
  SpewZeroChecksumTail(w);
  return out;
}

std::string SpewV1Wire(std::string_view type_name, const V1Wire& cp) {
  return SpewLegacy(type_name, cp.policy_name, cp.machine_state, cp.entries, nullptr);
}

std::string SpewV2Wire(std::string_view type_name, const V2Wire& cp) {
  return SpewLegacy(type_name, cp.policy_name, cp.machine_state, cp.entries, &cp.pod_entries);
}

uint64_t V1LegacyChecksum(const V1Wire& cp) {
  return LegacyChecksum(SpewV1Wire("MemoryManagerCheckpointV1", cp), "MemoryManagerCheckpointV1",
                        kLegacyName);
}

uint64_t V2LegacyChecksum(const V2Wire& cp) {
  return LegacyChecksum(SpewV2Wire("MemoryManagerCheckpointV2", cp), "MemoryManagerCheckpointV2",
                        kLegacyName);
}

// V1 accepts 0 ("compatibility with old file backend"); V2 does not (post-review #139626).
bool VerifyV1(const V1Wire& cp) { return cp.checksum == 0 || cp.checksum == V1LegacyChecksum(cp); }
bool VerifyV2(const V2Wire& cp) { return cp.checksum == V2LegacyChecksum(cp); }

// ---------------------------------------------------------------------------------------
// Decoding.

absl::Status DecodeInts(Decoder& d, const Value& v, std::optional<std::vector<int64_t>>& out) {
  return gojson::DecodeSlice(d, v, out, "[]int", [](Decoder& dd, const Value& m, int64_t& x) {
    gojson::DecodeInt64(dd, m, x, "int");
    return absl::OkStatus();
  });
}

absl::Status DecodeTable(Decoder& d, const Value& v, std::optional<TableWire>& out) {
  if (v.IsNull()) return absl::OkStatus();  // map element starts nil and stays nil
  out.emplace();  // indirect() allocates before the kind check
  TableWire& t = *out;
  std::vector<FieldSpec> fields = {Uint64Field("total", t.total, "uint64"),
                                   Uint64Field("systemReserved", t.system_reserved, "uint64"),
                                   Uint64Field("allocatable", t.allocatable, "uint64"),
                                   Uint64Field("reserved", t.reserved, "uint64"),
                                   Uint64Field("free", t.free, "uint64")};
  return gojson::DecodeStruct(d, v, "MemoryTable", "state.MemoryTable", fields);
}

absl::Status DecodeNode(Decoder& d, const Value& v, std::optional<NodeWire>& out) {
  if (v.IsNull()) return absl::OkStatus();
  out.emplace();
  NodeWire& n = *out;
  std::vector<FieldSpec> fields = {
      FieldSpec{"numberOfAssignments", {},
                [&n](Decoder& dd, const Value& m) {
                  gojson::DecodeInt64(dd, m, n.number_of_assignments, "int");
                  return absl::OkStatus();
                }},
      FieldSpec{"memoryMap", {},
                [&n](Decoder& dd, const Value& m) {
                  return gojson::DecodeStringMap(dd, m, n.memory_map,
                                                 "map[v1.ResourceName]*state.MemoryTable",
                                                 DecodeTable);
                }},
      FieldSpec{"cells", {},
                [&n](Decoder& dd, const Value& m) { return DecodeInts(dd, m, n.cells); }}};
  return gojson::DecodeStruct(d, v, "NUMANodeState", "state.NUMANodeState", fields);
}

absl::Status DecodeMachine(Decoder& d, const Value& v, MachineWire& out) {
  return gojson::DecodeIntMap(d, v, out, "state.NUMANodeMap", DecodeNode);
}

absl::Status DecodeBlock(Decoder& d, const Value& v, BlockWire& b) {
  std::vector<FieldSpec> fields = {
      FieldSpec{"numaAffinity", {},
                [&b](Decoder& dd, const Value& m) { return DecodeInts(dd, m, b.numa_affinity); }},
      StringField("type", b.type, "v1.ResourceName"), Uint64Field("size", b.size, "uint64")};
  return gojson::DecodeStruct(d, v, "Block", "state.Block", fields);
}

absl::Status DecodeBlocks(Decoder& d, const Value& v, BlocksWire& out) {
  return gojson::DecodeSlice(d, v, out, "[]state.Block", DecodeBlock);
}

absl::Status DecodeEntries(Decoder& d, const Value& v, EntriesWire& out) {
  return gojson::DecodeStringMap(
      d, v, out, "state.ContainerMemoryAssignments",
      [](Decoder& dd, const Value& m, std::optional<std::map<std::string, BlocksWire>>& inner) {
        return gojson::DecodeStringMap(dd, m, inner, "map[string][]state.Block", DecodeBlocks);
      });
}

absl::Status DecodePodEntries(Decoder& d, const Value& v, PodEntriesWire& out) {
  return gojson::DecodeStringMap(
      d, v, out, "state.PodMemoryAssignments", [](Decoder& dd, const Value& m, PodEntryWire& e) {
        std::vector<FieldSpec> fields = {
            FieldSpec{"memoryBlocks", {}, [&e](Decoder& d2, const Value& m2) {
                        return DecodeBlocks(d2, m2, e.memory_blocks);
                      }}};
        return gojson::DecodeStruct(dd, m, "PodEntry", "state.PodEntry", fields);
      });
}

// The members of V1, V2, V3's inline V1 part and V3's data, in the kubelet's struct order:
// policyName, machineState, entries, then podEntries (V2, data) and checksum (not data).
template <class Wire>
std::vector<FieldSpec> Fields(Wire& cp) {
  std::vector<FieldSpec> fields = {
      StringField("policyName", cp.policy_name),
      FieldSpec{"machineState", {},
                [&cp](Decoder& d, const Value& v) {
                  return DecodeMachine(d, v, cp.machine_state);
                }},
      FieldSpec{"entries", {},
                [&cp](Decoder& d, const Value& v) { return DecodeEntries(d, v, cp.entries); }}};
  if constexpr (requires { cp.pod_entries; }) {
    fields.push_back(FieldSpec{"podEntries", {}, [&cp](Decoder& d, const Value& v) {
                                 return DecodePodEntries(d, v, cp.pod_entries);
                               }});
  }
  if constexpr (requires { cp.checksum; }) fields.push_back(ChecksumField("checksum", cp.checksum));
  return fields;
}

struct Loaded {
  DataWire data;
  int version = 0;
  std::string data_text;  // V3: the `data` string
};

// loadAndMigrateCheckpointV3 (unwrapped errors). Migration clones; the clone details do not
// matter here because Restore applies the state's clone semantics afterwards.
// A chain starting at `newest_format` skips the newer formats (an older kubelet's chain).
absl::StatusOr<Loaded> LoadChain(std::string_view contents, int newest_format) {
  if (newest_format >= 3) {
    V3Wire v3;
    absl::Status err = internal::UnmarshalAndVerify(contents, kNames, v3);
    if (err.ok()) return Loaded{std::move(v3.checkpoint_data), 3, std::move(v3.data)};
    PODTOPO_RETURN_IF_ERROR(internal::DataFormatFailure(kNames, err, v3.data, v3.data_checksum));
  }

  V2Wire v2;
  if (newest_format >= 2 &&
      internal::Verified(internal::Unmarshal(contents, v2), [&] { return VerifyV2(v2); }).ok()) {
    Loaded out;
    out.version = 2;
    out.data.policy_name = v2.policy_name;
    out.data.machine_state = v2.machine_state;
    out.data.entries = v2.entries;
    out.data.pod_entries = v2.pod_entries;
    return out;
  }

  V1Wire v1;
  PODTOPO_RETURN_IF_ERROR(
      internal::Verified(internal::Unmarshal(contents, v1), [&] { return VerifyV1(v1); }));
  Loaded out;
  out.version = 1;
  out.data.policy_name = v1.policy_name;
  out.data.machine_state = v1.machine_state;
  out.data.entries = v1.entries;
  return out;
}

// What podtopo models of the file, for KeptFields (kept_fields.h).
const Schema& kScalar = kScalarSchema;
const Schema kInts = Schema::Array(&kScalar);
const Schema kTable = Schema::Object({{"total", &kScalar},
                                      {"systemReserved", &kScalar},
                                      {"allocatable", &kScalar},
                                      {"reserved", &kScalar},
                                      {"free", &kScalar}});
const Schema kMemoryMap = Schema::Map(&kTable);
const Schema kNode = Schema::Object(
    {{"numberOfAssignments", &kScalar}, {"memoryMap", &kMemoryMap}, {"cells", &kInts}});
const Schema kMachine = Schema::Map(&kNode);
const Schema kBlock =
    Schema::Object({{"numaAffinity", &kInts}, {"type", &kScalar}, {"size", &kScalar}});
const Schema kBlocks = Schema::Array(&kBlock);
const Schema kContainerBlocks = Schema::Map(&kBlocks);
const Schema kEntries = Schema::Map(&kContainerBlocks);
const Schema kPodEntry = Schema::Object({{"memoryBlocks", &kBlocks}});
const Schema kPodEntries = Schema::Map(&kPodEntry);
const Schema kDataSchema = Schema::Object({{"policyName", &kScalar},
                                           {"machineState", &kMachine},
                                           {"entries", &kEntries},
                                           {"podEntries", &kPodEntries}});
const Schema kTopSchema = internal::FileSchema(kDataSchema);

absl::StatusOr<int> ToInt(int64_t v, std::string_view what) {
  if (v < INT_MIN || v > INT_MAX) {
    return absl::InvalidArgumentError(
        fmt::format("{} {} is outside the supported range", what, v));
  }
  return static_cast<int>(v);
}

absl::StatusOr<std::optional<std::vector<int>>> ToInts(
    const std::optional<std::vector<int64_t>>& v, std::string_view what) {
  if (!v) return std::optional<std::vector<int>>();
  std::vector<int> out;
  out.reserve(v->size());
  for (int64_t x : *v) {
    PODTOPO_ASSIGN_OR_RETURN(int i, ToInt(x, what));
    out.push_back(i);
  }
  return std::optional<std::vector<int>>(std::move(out));
}

absl::StatusOr<std::vector<MemoryBlock>> ToBlocks(const BlocksWire& blocks, std::string_view where) {
  std::vector<MemoryBlock> out;  // the state's clone makes nil lists empty
  if (!blocks) return out;
  for (const BlockWire& b : *blocks) {
    MemoryBlock mb;
    PODTOPO_ASSIGN_OR_RETURN(mb.numa_affinity,
                             ToInts(b.numa_affinity, fmt::format("NUMA affinity of {}", where)));
    mb.type = b.type;
    mb.size = b.size;
    out.push_back(std::move(mb));
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Writing: JSON text and the reader's view of it.

void AppendInts(std::string& out, const std::optional<std::vector<int>>& v) {
  if (!v) {
    out += "null";
    return;
  }
  out += '[';
  for (size_t i = 0; i < v->size(); ++i) {
    if (i > 0) out += ',';
    fmt::format_to(std::back_inserter(out), "{}", (*v)[i]);
  }
  out += ']';
}

void AppendMachineJson(std::string& out, const std::map<int, NumaNodeState>& machine) {
  // encoding/json sorts map keys by their string form.
  std::vector<std::pair<std::string, const NumaNodeState*>> nodes;
  for (const auto& [id, node] : machine) nodes.emplace_back(std::to_string(id), &node);
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  gojson::AppendObject(out, nodes, [](std::string& o, const NumaNodeState* node) {
    fmt::format_to(std::back_inserter(o), "{{\"numberOfAssignments\":{},\"memoryMap\":",
                   node->number_of_assignments);
    gojson::AppendObject(o, node->memory_map, [](std::string& o2, const MemoryTable& t) {
      fmt::format_to(std::back_inserter(o2),
                     "{{\"total\":{},\"systemReserved\":{},\"allocatable\":{},\"reserved\":{},"
                     "\"free\":{}}}",
                     t.total, t.system_reserved, t.allocatable, t.reserved, t.free);
    });
    o += ",\"cells\":";
    AppendInts(o, node->cells);
    o += '}';
  });
}

void AppendBlocksJson(std::string& out, const std::vector<MemoryBlock>& blocks) {
  out += '[';
  bool first = true;
  for (const MemoryBlock& b : blocks) {
    if (!first) out += ',';
    first = false;
    out += "{\"numaAffinity\":";
    AppendInts(out, b.numa_affinity);
    out += ",\"type\":";
    gojson::AppendQuoted(out, b.type);
    fmt::format_to(std::back_inserter(out), ",\"size\":{}}}", b.size);
  }
  out += ']';
}

void AppendEntriesJson(std::string& out, const MemoryCheckpoint& cp) {
  gojson::AppendOmitEmptyObject(
      out, "entries", cp.entries,
      [](std::string& o, const std::map<std::string, std::vector<MemoryBlock>>& containers) {
        gojson::AppendObject(o, containers, AppendBlocksJson);
      });
}

void AppendPodEntriesJson(std::string& out, const MemoryCheckpoint& cp) {
  gojson::AppendOmitEmptyObject(out, "podEntries", cp.pod_entries,
                                [](std::string& o, const std::vector<MemoryBlock>& blocks) {
                                  if (blocks.empty()) {
                                    o += "{}";  // memoryBlocks is omitempty
                                  } else {
                                    o += "{\"memoryBlocks\":";
                                    AppendBlocksJson(o, blocks);
                                    o += '}';
                                  }
                                });
}

void AppendV1Head(std::string& out, const MemoryCheckpoint& cp) {
  out += "{\"policyName\":";
  gojson::AppendQuoted(out, cp.policy_name);
  out += ",\"machineState\":";
  AppendMachineJson(out, cp.machine_state);
  AppendEntriesJson(out, cp);
}

std::optional<std::vector<int64_t>> ToWireInts(const std::optional<std::vector<int>>& v) {
  if (!v) return std::nullopt;
  return std::vector<int64_t>(v->begin(), v->end());
}

BlocksWire ToWireBlocks(const std::vector<MemoryBlock>& blocks) {
  std::vector<BlockWire> out;
  for (const MemoryBlock& b : blocks) out.push_back({ToWireInts(b.numa_affinity), b.type, b.size});
  return out;
}

// What a reader decodes from the JSON we write.
MachineWire ToWireMachine(const std::map<int, NumaNodeState>& machine) {
  MachineWire out = MachineWire::value_type{};
  for (const auto& [id, node] : machine) {
    NodeWire n;
    n.number_of_assignments = node.number_of_assignments;
    n.memory_map.emplace();
    for (const auto& [name, t] : node.memory_map) {
      (*n.memory_map)[name] =
          TableWire{t.total, t.system_reserved, t.allocatable, t.reserved, t.free};
    }
    n.cells = ToWireInts(node.cells);
    (*out)[id] = std::move(n);
  }
  return out;
}

EntriesWire ToWireEntries(const MemoryCheckpoint& cp) {
  EntriesWire out = EntriesWire::value_type{};
  for (const auto& [pod, containers] : cp.entries) {
    auto& dst = (*out)[pod];
    dst.emplace();
    for (const auto& [name, blocks] : containers) (*dst)[name] = ToWireBlocks(blocks);
  }
  return out;
}

// What a reader decodes from the V1 or V2 file (pod entries: V2 only) Marshal writes for `cp`.
template <class Wire>
Wire ToWire(const MemoryCheckpoint& cp) {
  Wire w;
  w.policy_name = cp.policy_name;
  w.machine_state = ToWireMachine(cp.machine_state);
  w.entries = ToWireEntries(cp);
  if constexpr (requires { w.pod_entries; }) {
    for (const auto& [pod, blocks] : cp.pod_entries) {
      // An empty list is omitted (omitempty) and decodes as nil.
      (*w.pod_entries)[pod] =
          PodEntryWire{blocks.empty() ? BlocksWire() : ToWireBlocks(blocks)};
    }
  }
  return w;
}

}  // namespace

std::string SpewMemoryV1(std::string_view type_name, const MemoryCheckpoint& cp) {
  return SpewV1Wire(type_name, ToWire<V1Wire>(cp));
}

std::string SpewMemoryV2(std::string_view type_name, const MemoryCheckpoint& cp) {
  return SpewV2Wire(type_name, ToWire<V2Wire>(cp));
}

absl::StatusOr<MemoryCheckpoint> RestoreMemoryCheckpoint(std::string_view contents,
                                                         const std::string& path,
                                                         const MemoryLoadOptions& options) {
  auto fail = [&](std::string_view err) { return internal::RestoreError(kNames, err, path); };
  absl::StatusOr<Loaded> loaded = LoadChain(contents, options.newest_format);
  if (!loaded.ok()) return fail(std::string(loaded.status().message()));
  const DataWire& data = loaded->data;
  if (options.configured_policy != data.policy_name) {
    return fail(fmt::format(
        "[memorymanager] configured policy {} differs from state checkpoint policy {}",
        GoQuote(options.configured_policy), GoQuote(data.policy_name)));
  }

  MemoryCheckpoint out;
  out.policy_name = data.policy_name;
  out.version_read = loaded->version;
  auto convert = [&]() -> absl::Status {
    if (data.machine_state) {
      for (const auto& [id64, node] : *data.machine_state) {
        PODTOPO_ASSIGN_OR_RETURN(int id, ToInt(id64, "machineState NUMA node id"));
        if (!node) return absl::InvalidArgumentError(fmt::format("machineState[{}] is null", id));
        NumaNodeState& n = out.machine_state[id];
        n.number_of_assignments = node->number_of_assignments;
        if (node->memory_map) {
          for (const auto& [name, t] : *node->memory_map) {
            if (!t) {
              return absl::InvalidArgumentError(fmt::format(
                  "machineState[{}].memoryMap[{}] is null", id, GoQuote(name)));
            }
            n.memory_map[name] =
                MemoryTable{t->total, t->system_reserved, t->allocatable, t->reserved, t->free};
          }
        }
        PODTOPO_ASSIGN_OR_RETURN(
            std::optional<std::vector<int>> cells,
            ToInts(node->cells, fmt::format("cell of machineState[{}]", id)));
        n.cells = cells.value_or(std::vector<int>{});  // NUMANodeMap.Clone: append([]int{}, ...)
      }
    }
    if (data.entries) {
      for (const auto& [pod, containers] : *data.entries) {
        auto& dst = out.entries[pod];
        if (!containers) continue;
        for (const auto& [name, blocks] : *containers) {
          PODTOPO_ASSIGN_OR_RETURN(
              dst[name], ToBlocks(blocks, fmt::format("container {} in pod {}",
                                                      GoQuote(name),
                                                      GoQuote(pod))));
        }
      }
    }
    if (options.pod_level_resource_managers && data.pod_entries) {
      for (const auto& [pod, entry] : *data.pod_entries) {
        PODTOPO_ASSIGN_OR_RETURN(
            out.pod_entries[pod],
            ToBlocks(entry.memory_blocks, fmt::format("pod {}", GoQuote(pod))));
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status s = convert(); !s.ok()) return fail(std::string(s.message()));
  CollectKeptFields(contents, kTopSchema, loaded->version == 3 ? &loaded->data_text : nullptr,
                    kDataSchema, out.kept);
  return out;
}

absl::StatusOr<std::optional<MemoryCheckpoint>> LoadMemoryCheckpointFile(
    const std::string& path, const MemoryLoadOptions& options) {
  return internal::LoadCheckpointFile<MemoryCheckpoint>(
      kNames, path,
      [&](std::string_view contents) { return RestoreMemoryCheckpoint(contents, path, options); });
}

std::string MarshalMemoryCheckpointData(const MemoryCheckpoint& cp, bool with_pod_entries) {
  std::string data;
  AppendV1Head(data, cp);
  if (with_pod_entries) AppendPodEntriesJson(data, cp);
  return internal::CloseData(std::move(data), cp.kept);
}

void KeepUnmodelled(const MemoryCheckpoint& read, MemoryCheckpoint& next) { next.kept = read.kept; }

absl::StatusOr<std::string> MarshalMemoryCheckpoint(const MemoryCheckpoint& cp,
                                                    const MemoryWriteOptions& options) {
  PODTOPO_RETURN_IF_ERROR(ErrorIfUnkept(cp.kept, kNames.manager));
  std::string out;
  switch (options.format) {
    case MemoryFormat::kV1: {
      AppendV1Head(out, cp);
      internal::AppendChecksum(out, V1LegacyChecksum(ToWire<V1Wire>(cp)));
      return out;
    }
    case MemoryFormat::kV2: {
      MemoryCheckpoint c = cp;
      if (!options.pod_level_resource_managers) c.pod_entries.clear();
      AppendV1Head(out, c);
      AppendPodEntriesJson(out, c);
      internal::AppendChecksum(out, V2LegacyChecksum(ToWire<V2Wire>(c)));
      return out;
    }
    case MemoryFormat::kV3: {
      std::string data = MarshalMemoryCheckpointData(cp, options.pod_level_resource_managers);
      AppendV1Head(out, cp);
      return internal::AppendDataChecksum(std::move(out), V1LegacyChecksum(ToWire<V1Wire>(cp)),
                                          data, cp.kept);
    }
  }
  return absl::InternalError("unknown memory checkpoint format");
}

absl::Status WriteMemoryCheckpointFile(const std::string& path, const MemoryCheckpoint& cp,
                                       const MemoryWriteOptions& options) {
  return internal::WriteCheckpointFile(path, MarshalMemoryCheckpoint(cp, options));
}

}  // namespace podtopo::checkpoint

// ---------------------------------------------------------------------------------------
// Inspection.

namespace podtopo::checkpoint {

ChecksumReport InspectMemoryCheckpoint(std::string_view contents) {
  ChecksumReport r;
  V3Wire v3;
  absl::Status err = internal::UnmarshalAndVerify(contents, kNames, v3);
  if (internal::InspectDataChecksumFormat(kNames, err, v3.checkpoint_data.policy_name, v3.data,
                                          v3.data_checksum, "V1 checksum",
                                          v3.inline_part.checksum, r)) {
    return r;
  }
  V2Wire v2;
  absl::Status err2 = internal::Unmarshal(contents, v2);
  uint64_t v2_expected = 0;
  if (err2.ok()) {
    v2_expected = V2LegacyChecksum(v2);
    if (v2.checksum == v2_expected) {
      return internal::ReportLoaded(
          r, 2, v2.policy_name,
          internal::LegacyChecksumText("V2 (kubelet 1.36, PodLevelResourceManagers on)",
                                       v2.checksum, kLegacyName));
    }
  }
  V1Wire v1;
  absl::Status err1 = internal::Unmarshal(contents, v1);
  if (err1.ok()) {
    uint64_t v1_expected = V1LegacyChecksum(v1);
    if (v1.checksum == 0 || v1.checksum == v1_expected) {
      constexpr std::string_view kV1 = "V1 (kubelet <= 1.35)";
      internal::ReportLoaded(r, 1, v1.policy_name,
                             v1.checksum == 0
                                 ? internal::ZeroChecksumText(kV1)
                                 : internal::LegacyChecksumText(kV1, v1.checksum, kLegacyName));
      if (err2.ok() && v2.pod_entries && !v2.pod_entries->empty()) {
        r.algorithm += internal::DroppedPodEntriesNote(2);
      }
      return r;
    }
    r.error = Corrupted();
    r.algorithm = fmt::format("checksum {} in the file; V1 (MemoryManagerCheckpoint) expects {}",
                              v1.checksum, v1_expected);
    if (err2.ok() && v2.pod_entries && !v2.pod_entries->empty()) {
      r.algorithm += fmt::format(", V2 expects {}", v2_expected);
    }
    return r;
  }
  r.error = err1;
  r.algorithm = "no format decodes";
  return r;
}

}  // namespace podtopo::checkpoint
