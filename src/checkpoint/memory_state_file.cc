#include "checkpoint/memory_state_file.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "checkpoint/checksum.h"
#include "checkpoint/go_json.h"
#include "checkpoint/internal.h"
#include "fmt/format.h"
#include "util/file.h"
#include "util/go_strconv.h"
#include "util/status_macros.h"

namespace podtopo::checkpoint {
namespace {

using internal::Corrupted;
using internal::Prefix;

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
  std::string policy_name;
  MachineWire machine_state = MachineWire::value_type{};
  EntriesWire entries = EntriesWire::value_type{};
  uint64_t checksum = 0;
};

struct V2Wire {
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

struct V3Wire {
  V1Wire inline_part;
  std::string data;
  uint64_t data_checksum = 0;
  DataWire checkpoint_data;
};

constexpr char kLegacyName[] = "MemoryManagerCheckpoint";
constexpr char kChecksumType[] = "checksum.Checksum";

// ---------------------------------------------------------------------------------------
// Spew.

void SpewInts(SpewWriter& w, const std::optional<std::vector<int64_t>>& v) {
  w.Type("[]int");
  if (!v) {
    w.Nil();
    return;
  }
  w.OpenSlice();
  for (int64_t x : *v) w.Elem().Int(x);
  w.CloseSlice();
}

void SpewMachine(SpewWriter& w, const MachineWire& machine) {
  w.Type("state.NUMANodeMap");
  if (!machine) {
    w.Nil();
    return;
  }
  w.OpenMap();
  for (const auto& [id, node] : *machine) {
    w.Key().Int(id).Colon();
    if (!node) {
      w.Nil();
      continue;
    }
    w.PointerMarker().OpenStruct();
    w.FieldName("NumberOfAssignments").Type("int").Int(node->number_of_assignments);
    w.FieldName("MemoryMap").Type("map[v1.ResourceName]*state.MemoryTable");
    if (!node->memory_map) {
      w.Nil();
    } else {
      w.OpenMap();
      for (const auto& [name, table] : *node->memory_map) {
        w.Key().String(name).Colon();
        if (!table) {
          w.Nil();
          continue;
        }
        w.PointerMarker().OpenStruct();
        w.FieldName("TotalMemSize").Type("uint64").Uint(table->total);
        w.FieldName("SystemReserved").Type("uint64").Uint(table->system_reserved);
        w.FieldName("Allocatable").Type("uint64").Uint(table->allocatable);
        w.FieldName("Reserved").Type("uint64").Uint(table->reserved);
        w.FieldName("Free").Type("uint64").Uint(table->free);
        w.CloseStruct();
      }
      w.CloseMap();
    }
    w.FieldName("Cells");
    SpewInts(w, node->cells);
    w.CloseStruct();
  }
  w.CloseMap();
}

// An untyped []Block (a map value or a typed field body once the prefix is written).
void SpewBlocksBody(SpewWriter& w, const BlocksWire& blocks) {
  if (!blocks) {
    w.Nil();
    return;
  }
  w.OpenSlice();
  for (const BlockWire& b : *blocks) {
    w.Elem().OpenStruct();
    w.FieldName("NUMAAffinity");
    SpewInts(w, b.numa_affinity);
    w.FieldName("Type").Type("v1.ResourceName").String(b.type);
    w.FieldName("Size").Type("uint64").Uint(b.size);
    w.CloseStruct();
  }
  w.CloseSlice();
}

void SpewEntries(SpewWriter& w, const EntriesWire& entries) {
  w.Type("state.ContainerMemoryAssignments");
  if (!entries) {
    w.Nil();
    return;
  }
  w.OpenMap();
  for (const auto& [pod, containers] : *entries) {
    w.Key().String(pod).Colon();
    if (!containers) {
      w.Nil();
      continue;
    }
    w.OpenMap();
    for (const auto& [name, blocks] : *containers) {
      w.Key().String(name).Colon();
      SpewBlocksBody(w, blocks);
    }
    w.CloseMap();
  }
  w.CloseMap();
}

void SpewPodEntries(SpewWriter& w, const PodEntriesWire& pod_entries) {
  w.Type("state.PodMemoryAssignments");
  if (!pod_entries) {
    w.Nil();
    return;
  }
  w.OpenMap();
  for (const auto& [pod, entry] : *pod_entries) {
    w.Key().String(pod).Colon();
    w.OpenStruct().FieldName("MemoryBlocks").Type("[]state.Block");
    SpewBlocksBody(w, entry.memory_blocks);
    w.CloseStruct();
  }
  w.CloseMap();
}

std::string SpewV1Wire(std::string_view type_name, const V1Wire& cp) {
  std::string out;
  SpewWriter w(&out);
  w.Type(fmt::format("*state.{}", type_name)).OpenStruct();
  w.FieldName("PolicyName").Type("string").String(cp.policy_name);
  w.FieldName("MachineState");
  SpewMachine(w, cp.machine_state);
  w.FieldName("Entries");
  SpewEntries(w, cp.entries);
  w.FieldName("Checksum").Type(kChecksumType).Uint(0);
  w.CloseStruct();
  return out;
}

std::string SpewV2Wire(std::string_view type_name, const V2Wire& cp) {
  std::string out;
  SpewWriter w(&out);
  w.Type(fmt::format("*state.{}", type_name)).OpenStruct();
  w.FieldName("PolicyName").Type("string").String(cp.policy_name);
  w.FieldName("MachineState");
  SpewMachine(w, cp.machine_state);
  w.FieldName("Entries");
  SpewEntries(w, cp.entries);
  w.FieldName("PodEntries");
  SpewPodEntries(w, cp.pod_entries);
  w.FieldName("Checksum").Type(kChecksumType).Uint(0);
  w.CloseStruct();
  return out;
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
  auto u64 = [](std::string_view name, uint64_t& target) {
    return FieldSpec{name, {}, [&target](Decoder& dd, const Value& m) {
                       gojson::DecodeUint64(dd, m, target, "uint64");
                       return absl::OkStatus();
                     }};
  };
  std::vector<FieldSpec> fields = {u64("total", t.total), u64("systemReserved", t.system_reserved),
                                   u64("allocatable", t.allocatable),
                                   u64("reserved", t.reserved), u64("free", t.free)};
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
      FieldSpec{"type", {},
                [&b](Decoder& dd, const Value& m) {
                  gojson::DecodeString(dd, m, b.type, "v1.ResourceName");
                  return absl::OkStatus();
                }},
      FieldSpec{"size", {}, [&b](Decoder& dd, const Value& m) {
                  gojson::DecodeUint64(dd, m, b.size, "uint64");
                  return absl::OkStatus();
                }}};
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

std::vector<FieldSpec> V1Fields(std::string& policy, MachineWire& machine, EntriesWire& entries,
                                uint64_t& checksum, std::vector<std::string_view> embedded) {
  return {FieldSpec{"policyName", embedded,
                    [&policy](Decoder& d, const Value& v) {
                      gojson::DecodeString(d, v, policy, "string");
                      return absl::OkStatus();
                    }},
          FieldSpec{"machineState", embedded,
                    [&machine](Decoder& d, const Value& v) { return DecodeMachine(d, v, machine); }},
          FieldSpec{"entries", embedded,
                    [&entries](Decoder& d, const Value& v) { return DecodeEntries(d, v, entries); }},
          FieldSpec{"checksum", embedded, [&checksum](Decoder& d, const Value& v) {
                      gojson::DecodeUint64(d, v, checksum, kChecksumType);
                      return absl::OkStatus();
                    }}};
}

absl::Status UnmarshalV1(std::string_view contents, V1Wire& cp) {
  return gojson::Unmarshal(contents, [&](Decoder& d, const Value& v) {
    return gojson::DecodeStruct(
        d, v, "MemoryManagerCheckpointV1", "state.MemoryManagerCheckpointV1",
        V1Fields(cp.policy_name, cp.machine_state, cp.entries, cp.checksum, {}));
  });
}

absl::Status UnmarshalV2(std::string_view contents, V2Wire& cp) {
  return gojson::Unmarshal(contents, [&](Decoder& d, const Value& v) {
    std::vector<FieldSpec> fields =
        V1Fields(cp.policy_name, cp.machine_state, cp.entries, cp.checksum, {});
    fields.insert(fields.begin() + 3,
                  FieldSpec{"podEntries", {}, [&cp](Decoder& dd, const Value& m) {
                              return DecodePodEntries(dd, m, cp.pod_entries);
                            }});
    return gojson::DecodeStruct(d, v, "MemoryManagerCheckpointV2",
                                "state.MemoryManagerCheckpointV2", fields);
  });
}

absl::Status UnmarshalAndVerifyV3(std::string_view contents, V3Wire& cp) {
  absl::Status s = gojson::Unmarshal(contents, [&](Decoder& d, const Value& v) {
    V1Wire& in = cp.inline_part;
    std::vector<FieldSpec> fields = V1Fields(in.policy_name, in.machine_state, in.entries,
                                             in.checksum, {"MemoryManagerCheckpointV1"});
    fields.push_back(FieldSpec{"data", {}, [&cp](Decoder& dd, const Value& m) {
                                 gojson::DecodeString(dd, m, cp.data, "string");
                                 return absl::OkStatus();
                               }});
    fields.push_back(FieldSpec{"dataChecksum", {}, [&cp](Decoder& dd, const Value& m) {
                                 gojson::DecodeUint64(dd, m, cp.data_checksum, kChecksumType);
                                 return absl::OkStatus();
                               }});
    return gojson::DecodeStruct(d, v, "MemoryManagerCheckpoint",
                                "state.MemoryManagerCheckpoint", fields);
  });
  if (!s.ok()) return Prefix("failed to deserialize memory manager checkpoint: ", s);
  s = gojson::Unmarshal(cp.data, [&](Decoder& d, const Value& v) {
    DataWire& data = cp.checkpoint_data;
    uint64_t unused = 0;
    std::vector<FieldSpec> fields =
        V1Fields(data.policy_name, data.machine_state, data.entries, unused, {});
    fields.pop_back();  // no checksum in CPUManagerCheckpointData
    fields.push_back(FieldSpec{"podEntries", {}, [&data](Decoder& dd, const Value& m) {
                                 return DecodePodEntries(dd, m, data.pod_entries);
                               }});
    return gojson::DecodeStruct(d, v, "MemoryManagerCheckpointData",
                                "state.MemoryManagerCheckpointData", fields);
  });
  if (!s.ok()) return Prefix("failed to deserialize memory manager checkpoint data: ", s);
  if (cp.data_checksum != DataChecksum(cp.data)) return Corrupted();
  return absl::OkStatus();
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
  absl::Status err;
  if (newest_format >= 3) {
    V3Wire v3;
    err = UnmarshalAndVerifyV3(contents, v3);
    if (err.ok()) return Loaded{std::move(v3.checkpoint_data), 3, std::move(v3.data)};
    if (!v3.data.empty() || v3.data_checksum != 0) {
      return Prefix("could not load v3 checkpoint: ", err);
    }
  }

  V2Wire v2;
  if (newest_format >= 2) {
    err = UnmarshalV2(contents, v2);
    if (err.ok() && !VerifyV2(v2)) err = Corrupted();
  }
  if (newest_format >= 2 && err.ok()) {
    Loaded out;
    out.version = 2;
    out.data.policy_name = v2.policy_name;
    out.data.machine_state = v2.machine_state;
    out.data.entries = v2.entries;
    out.data.pod_entries = v2.pod_entries;
    return out;
  }

  V1Wire v1;
  err = UnmarshalV1(contents, v1);
  if (err.ok() && !VerifyV1(v1)) err = Corrupted();
  if (!err.ok()) return err;
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
const Schema kTopSchema = Schema::Object({{"policyName", &kScalar},
                                          {"machineState", &kMachine},
                                          {"entries", &kEntries},
                                          {"podEntries", &kPodEntries},
                                          {"checksum", &kScalar},
                                          {"data", &kScalar},
                                          {"dataChecksum", &kScalar}});
const Schema kDataSchema = Schema::Object({{"policyName", &kScalar},
                                           {"machineState", &kMachine},
                                           {"entries", &kEntries},
                                           {"podEntries", &kPodEntries}});

std::string WrapRestoreError(std::string_view err, const std::string& path) {
  return fmt::format(
      "could not restore state from checkpoint: {}, please drain this node and delete the "
      "memory manager checkpoint file {} before restarting Kubelet",
      err, GoQuote(path));
}

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
  out += '{';
  bool first = true;
  for (const auto& [key, node] : nodes) {
    if (!first) out += ',';
    first = false;
    gojson::AppendQuoted(out, key);
    fmt::format_to(std::back_inserter(out), ":{{\"numberOfAssignments\":{},\"memoryMap\":{{",
                   node->number_of_assignments);
    bool first_table = true;
    for (const auto& [name, t] : node->memory_map) {
      if (!first_table) out += ',';
      first_table = false;
      gojson::AppendQuoted(out, name);
      fmt::format_to(std::back_inserter(out),
                     ":{{\"total\":{},\"systemReserved\":{},\"allocatable\":{},\"reserved\":{},"
                     "\"free\":{}}}",
                     t.total, t.system_reserved, t.allocatable, t.reserved, t.free);
    }
    out += "},\"cells\":";
    AppendInts(out, node->cells);
    out += '}';
  }
  out += '}';
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
  if (cp.entries.empty()) return;  // omitempty
  out += ",\"entries\":{";
  bool first_pod = true;
  for (const auto& [pod, containers] : cp.entries) {
    if (!first_pod) out += ',';
    first_pod = false;
    gojson::AppendQuoted(out, pod);
    out += ":{";
    bool first = true;
    for (const auto& [name, blocks] : containers) {
      if (!first) out += ',';
      first = false;
      gojson::AppendQuoted(out, name);
      out += ':';
      AppendBlocksJson(out, blocks);
    }
    out += '}';
  }
  out += '}';
}

void AppendPodEntriesJson(std::string& out, const MemoryCheckpoint& cp) {
  if (cp.pod_entries.empty()) return;  // omitempty
  out += ",\"podEntries\":{";
  bool first = true;
  for (const auto& [pod, blocks] : cp.pod_entries) {
    if (!first) out += ',';
    first = false;
    gojson::AppendQuoted(out, pod);
    if (blocks.empty()) {
      out += ":{}";  // memoryBlocks is omitempty
    } else {
      out += ":{\"memoryBlocks\":";
      AppendBlocksJson(out, blocks);
      out += '}';
    }
  }
  out += '}';
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

V1Wire ToV1Wire(const MemoryCheckpoint& cp) {
  V1Wire w;
  w.policy_name = cp.policy_name;
  w.machine_state = ToWireMachine(cp.machine_state);
  w.entries = ToWireEntries(cp);
  return w;
}

V2Wire ToV2Wire(const MemoryCheckpoint& cp) {
  V2Wire w;
  w.policy_name = cp.policy_name;
  w.machine_state = ToWireMachine(cp.machine_state);
  w.entries = ToWireEntries(cp);
  for (const auto& [pod, blocks] : cp.pod_entries) {
    // An empty list is omitted (omitempty) and decodes as nil.
    (*w.pod_entries)[pod] =
        PodEntryWire{blocks.empty() ? BlocksWire() : ToWireBlocks(blocks)};
  }
  return w;
}

}  // namespace

std::string SpewMemoryV1(std::string_view type_name, const MemoryCheckpoint& cp) {
  return SpewV1Wire(type_name, ToV1Wire(cp));
}

std::string SpewMemoryV2(std::string_view type_name, const MemoryCheckpoint& cp) {
  return SpewV2Wire(type_name, ToV2Wire(cp));
}

absl::StatusOr<MemoryCheckpoint> RestoreMemoryCheckpoint(std::string_view contents,
                                                         const std::string& path,
                                                         const MemoryLoadOptions& options) {
  auto fail = [&](std::string_view err) {
    return absl::FailedPreconditionError(WrapRestoreError(err, path));
  };
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
  absl::StatusOr<std::string> contents = ReadFile(path);
  if (!contents.ok()) {
    if (absl::IsNotFound(contents.status())) return std::optional<MemoryCheckpoint>();
    return absl::FailedPreconditionError(
        WrapRestoreError(internal::GoReadErrorText(contents.status(), path), path));
  }
  PODTOPO_ASSIGN_OR_RETURN(MemoryCheckpoint cp,
                           RestoreMemoryCheckpoint(*contents, path, options));
  return std::optional<MemoryCheckpoint>(std::move(cp));
}

std::string MarshalMemoryCheckpointData(const MemoryCheckpoint& cp, bool with_pod_entries) {
  std::string data;
  AppendV1Head(data, cp);
  if (with_pod_entries) AppendPodEntriesJson(data, cp);
  data += '}';
  return WriteWithKept(data, cp.kept.data, cp.kept.data_order);
}

void KeepUnmodelled(const MemoryCheckpoint& read, MemoryCheckpoint& next) { next.kept = read.kept; }

absl::StatusOr<std::string> MarshalMemoryCheckpoint(const MemoryCheckpoint& cp,
                                                    const MemoryWriteOptions& options) {
  PODTOPO_RETURN_IF_ERROR(ErrorIfUnkept(cp.kept, "memory manager"));
  std::string out;
  switch (options.format) {
    case MemoryFormat::kV1: {
      AppendV1Head(out, cp);
      fmt::format_to(std::back_inserter(out), ",\"checksum\":{}}}",
                     V1LegacyChecksum(ToV1Wire(cp)));
      return out;
    }
    case MemoryFormat::kV2: {
      MemoryCheckpoint c = cp;
      if (!options.pod_level_resource_managers) c.pod_entries.clear();
      AppendV1Head(out, c);
      AppendPodEntriesJson(out, c);
      fmt::format_to(std::back_inserter(out), ",\"checksum\":{}}}",
                     V2LegacyChecksum(ToV2Wire(c)));
      return out;
    }
    case MemoryFormat::kV3: {
      std::string data = MarshalMemoryCheckpointData(cp, options.pod_level_resource_managers);
      AppendV1Head(out, cp);
      fmt::format_to(std::back_inserter(out), ",\"checksum\":{},\"data\":",
                     V1LegacyChecksum(ToV1Wire(cp)));
      gojson::AppendQuoted(out, data);
      fmt::format_to(std::back_inserter(out), ",\"dataChecksum\":{}}}", DataChecksum(data));
      return WriteWithKept(out, cp.kept.top, cp.kept.top_order);
    }
  }
  return absl::InternalError("unknown memory checkpoint format");
}

absl::Status WriteMemoryCheckpointFile(const std::string& path, const MemoryCheckpoint& cp,
                                       const MemoryWriteOptions& options) {
  PODTOPO_ASSIGN_OR_RETURN(std::string bytes, MarshalMemoryCheckpoint(cp, options));
  return WriteFileAtomically(path, bytes, 0600);
}

}  // namespace podtopo::checkpoint

// ---------------------------------------------------------------------------------------
// Inspection.

namespace podtopo::checkpoint {

ChecksumReport InspectMemoryCheckpoint(std::string_view contents) {
  ChecksumReport r;
  V3Wire v3;
  absl::Status err = UnmarshalAndVerifyV3(contents, v3);
  if (internal::InspectDataChecksumFormat(3, err, v3.checkpoint_data.policy_name, v3.data,
                                          v3.data_checksum, "V1 checksum",
                                          v3.inline_part.checksum, r)) {
    return r;
  }
  V2Wire v2;
  absl::Status err2 = UnmarshalV2(contents, v2);
  uint64_t v2_expected = 0;
  if (err2.ok()) {
    v2_expected = V2LegacyChecksum(v2);
    if (v2.checksum == v2_expected) {
      r.version = 2;
      r.policy_name = v2.policy_name;
      r.algorithm = fmt::format(
          "V2 (kubelet 1.36, PodLevelResourceManagers on): checksum {} = FNV-1a-32 of the spew "
          "dump named MemoryManagerCheckpoint",
          v2.checksum);
      return r;
    }
  }
  V1Wire v1;
  absl::Status err1 = UnmarshalV1(contents, v1);
  if (err1.ok()) {
    uint64_t v1_expected = V1LegacyChecksum(v1);
    if (v1.checksum == 0 || v1.checksum == v1_expected) {
      r.version = 1;
      r.policy_name = v1.policy_name;
      r.algorithm =
          v1.checksum == 0
              ? std::string("V1 (kubelet <= 1.35): checksum 0, accepted without verification")
              : fmt::format(
                    "V1 (kubelet <= 1.35): checksum {} = FNV-1a-32 of the spew dump named "
                    "MemoryManagerCheckpoint",
                    v1.checksum);
      if (err2.ok() && v2.pod_entries && !v2.pod_entries->empty()) {
        r.algorithm += "; its podEntries are not covered by a valid V2 checksum and are dropped";
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
