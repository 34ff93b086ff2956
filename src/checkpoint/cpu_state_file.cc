#include "checkpoint/cpu_state_file.h"

#include <utility>
#include <vector>

#include "checkpoint/checksum.h"
#include "checkpoint/go_json.h"
#include "checkpoint/internal.h"
#include "cpuset/cpuset.h"
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
// Go-faithful models of the kubelet structs (nullopt = Go nil). Default-constructed values
// equal the kubelet's constructors: top-level maps start as empty, non-nil maps.

using StrMap = std::map<std::string, std::string>;
using EntriesV2 = std::optional<std::map<std::string, std::optional<StrMap>>>;

// state.PodEntry{CPUSet cpuset.CPUSet}. The zero value (nil elems) only survives a failed
// UnmarshalJSON.
struct PodEntryWire {
  bool nil_elems = true;
  std::vector<int> ids;
};
using PodEntriesWire = std::optional<std::map<std::string, PodEntryWire>>;

struct V1Wire {
  std::string policy_name;
  std::string default_cpu_set;
  std::optional<StrMap> entries = StrMap{};
  uint64_t checksum = 0;
};

struct V2Wire {
  std::string policy_name;
  std::string default_cpu_set;
  EntriesV2 entries = EntriesV2::value_type{};
  uint64_t checksum = 0;
};

struct V3Wire {
  std::string policy_name;
  std::string default_cpu_set;
  EntriesV2 entries = EntriesV2::value_type{};
  PodEntriesWire pod_entries = PodEntriesWire::value_type{};
  uint64_t checksum = 0;
};

// CPUManagerCheckpointData.
struct DataWire {
  std::string policy_name;
  std::string default_cpu_set;
  EntriesV2 entries = EntriesV2::value_type{};
  PodEntriesWire pod_entries = PodEntriesWire::value_type{};
};

// CPUManagerCheckpoint (V4): embedded V2 + data + dataChecksum.
struct V4Wire {
  V2Wire inline_part;
  std::string data;
  uint64_t data_checksum = 0;
  DataWire checkpoint_data;
};

constexpr char kLegacyName[] = "CPUManagerCheckpoint";
constexpr char kEntriesV2Type[] = "map[string]map[string]string";
constexpr char kChecksumType[] = "checksum.Checksum";

// ---------------------------------------------------------------------------------------
// Spew.

void SpewEntriesV2(SpewWriter& w, const EntriesV2& entries) {
  w.Type(kEntriesV2Type);
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
    for (const auto& [name, cpus] : *containers) w.Key().String(name).Colon().String(cpus);
    w.CloseMap();
  }
  w.CloseMap();
}

void SpewPodEntries(SpewWriter& w, const PodEntriesWire& pod_entries) {
  w.Type("state.PodCPUAssignments");
  if (!pod_entries) {
    w.Nil();
    return;
  }
  w.OpenMap();
  for (const auto& [pod, entry] : *pod_entries) {
    w.Key().String(pod).Colon();
    w.OpenStruct().FieldName("CPUSet").Type("cpuset.CPUSet");
    if (entry.nil_elems) {
      w.OpenStruct().FieldName("elems").Type("map[int]struct {}").Nil().CloseStruct();
    } else {
      SpewCpuSetBody(w, entry.ids);
    }
    w.CloseStruct();
  }
  w.CloseMap();
}

void SpewHeader(SpewWriter& w, std::string_view type_name, std::string_view policy,
                std::string_view default_cpu_set) {
  w.Type(fmt::format("*state.{}", type_name)).OpenStruct();
  w.FieldName("PolicyName").Type("string").String(policy);
  w.FieldName("DefaultCPUSet").Type("string").String(default_cpu_set);
}

void SpewChecksumZero(SpewWriter& w) {
  w.FieldName("Checksum").Type(kChecksumType).Uint(0);
  w.CloseStruct();
}

std::string SpewV1Wire(std::string_view type_name, const V1Wire& cp) {
  std::string out;
  SpewWriter w(&out);
  SpewHeader(w, type_name, cp.policy_name, cp.default_cpu_set);
  w.FieldName("Entries").Type("map[string]string");
  if (!cp.entries) {
    w.Nil();
  } else {
    w.OpenMap();
    for (const auto& [id, cpus] : *cp.entries) w.Key().String(id).Colon().String(cpus);
    w.CloseMap();
  }
  SpewChecksumZero(w);
  return out;
}

std::string SpewV2Wire(std::string_view type_name, const V2Wire& cp) {
  std::string out;
  SpewWriter w(&out);
  SpewHeader(w, type_name, cp.policy_name, cp.default_cpu_set);
  w.FieldName("Entries");
  SpewEntriesV2(w, cp.entries);
  SpewChecksumZero(w);
  return out;
}

std::string SpewV3Wire(std::string_view type_name, const V3Wire& cp) {
  std::string out;
  SpewWriter w(&out);
  SpewHeader(w, type_name, cp.policy_name, cp.default_cpu_set);
  w.FieldName("Entries");
  SpewEntriesV2(w, cp.entries);
  w.FieldName("PodEntries");
  SpewPodEntries(w, cp.pod_entries);
  SpewChecksumZero(w);
  return out;
}

// ---------------------------------------------------------------------------------------
// Verification, as the 1.37 VerifyChecksum methods.

bool VerifyV1(const V1Wire& cp) {
  if (cp.checksum == 0) return true;
  return cp.checksum ==
         LegacyChecksum(SpewV1Wire("CPUManagerCheckpointV1", cp), "CPUManagerCheckpointV1",
                        kLegacyName);
}

bool VerifyV2(const V2Wire& cp, bool pod_level_resource_managers) {
  if (cp.checksum == 0) return true;  // "compatibility with old file backend"
  std::string dump = SpewV2Wire("CPUManagerCheckpointV2", cp);
  if (!pod_level_resource_managers && cp.checksum == Fnv1a32(dump)) return true;
  return cp.checksum == LegacyChecksum(dump, "CPUManagerCheckpointV2", kLegacyName);
}

bool VerifyV3(const V3Wire& cp) {
  std::string dump = SpewV3Wire("CPUManagerCheckpointV3", cp);
  if (cp.checksum == Fnv1a32(dump)) return true;
  return cp.checksum == LegacyChecksum(dump, "CPUManagerCheckpointV3", kLegacyName);
}

// ---------------------------------------------------------------------------------------
// Decoding.

absl::Status DecodeStrMap(Decoder& d, const Value& v, std::optional<StrMap>& out,
                          std::string_view go_type) {
  return gojson::DecodeStringMap(d, v, out, go_type,
                                 [](Decoder& dd, const Value& m, std::string& s) {
                                   gojson::DecodeString(dd, m, s, "string");
                                   return absl::OkStatus();
                                 });
}

absl::Status DecodeEntriesV2(Decoder& d, const Value& v, EntriesV2& out) {
  return gojson::DecodeStringMap(
      d, v, out, kEntriesV2Type, [](Decoder& dd, const Value& m, std::optional<StrMap>& inner) {
        return DecodeStrMap(dd, m, inner, "map[string]string");
      });
}

// PodEntry.UnmarshalJSON: json.Unmarshal into {cpuSet string}, then cpuset.Parse.
absl::Status DecodePodEntry(Decoder& d, const Value& v, PodEntryWire& out) {
  std::string cpu_set;
  if (v.kind == Value::Kind::kObject) {
    std::optional<std::string> inner_error_kind;
    for (const auto& [key, member] : v.object) {
      if (key != "cpuSet" && !gojson::GoFoldEqual(key, "cpuSet")) continue;
      if (member.kind == Value::Kind::kString) {
        cpu_set = member.text;
      } else if (!member.IsNull() && !inner_error_kind) {
        inner_error_kind = std::string(gojson::KindName(member));
      }
    }
    // The inner UnmarshalTypeError is returned by UnmarshalJSON and aborts the outer
    // Unmarshal, which then adds its own context.
    if (inner_error_kind) {
      return absl::InvalidArgumentError(d.TypeErrorMessage(*inner_error_kind, "string", "cpuSet"));
    }
  } else if (!v.IsNull()) {
    return absl::InvalidArgumentError(
        d.TypeErrorMessage(gojson::KindName(v), "state.podEntryJSON"));
  }
  absl::StatusOr<CpuSet> set = CpuSet::Parse(cpu_set);
  if (!set.ok()) {
    d.SaveError(fmt::format("failed to parse cpuset: {}", std::string(set.status().message())));
    return absl::OkStatus();
  }
  out.nil_elems = false;
  out.ids = set->List();
  return absl::OkStatus();
}

absl::Status DecodePodEntries(Decoder& d, const Value& v, PodEntriesWire& out) {
  return gojson::DecodeStringMap(d, v, out, "state.PodCPUAssignments", DecodePodEntry);
}

FieldSpec StringField(std::string_view name, std::string& target,
                      std::vector<std::string_view> embedded = {}) {
  return FieldSpec{name, std::move(embedded), [&target](Decoder& d, const Value& v) {
                     gojson::DecodeString(d, v, target, "string");
                     return absl::OkStatus();
                   }};
}

FieldSpec ChecksumField(std::string_view name, uint64_t& target,
                        std::vector<std::string_view> embedded = {}) {
  return FieldSpec{name, std::move(embedded), [&target](Decoder& d, const Value& v) {
                     gojson::DecodeUint64(d, v, target, kChecksumType);
                     return absl::OkStatus();
                   }};
}

FieldSpec EntriesV2Field(EntriesV2& target, std::vector<std::string_view> embedded = {}) {
  return FieldSpec{"entries", std::move(embedded), [&target](Decoder& d, const Value& v) {
                     return DecodeEntriesV2(d, v, target);
                   }};
}

FieldSpec PodEntriesField(PodEntriesWire& target) {
  return FieldSpec{"podEntries", {}, [&target](Decoder& d, const Value& v) {
                     return DecodePodEntries(d, v, target);
                   }};
}

absl::Status UnmarshalV1(std::string_view contents, V1Wire& cp) {
  return gojson::Unmarshal(contents, [&](Decoder& d, const Value& v) {
    std::vector<FieldSpec> fields = {
        StringField("policyName", cp.policy_name),
        StringField("defaultCpuSet", cp.default_cpu_set),
        FieldSpec{"entries", {}, [&](Decoder& dd, const Value& m) {
                    return DecodeStrMap(dd, m, cp.entries, "map[string]string");
                  }},
        ChecksumField("checksum", cp.checksum)};
    return gojson::DecodeStruct(d, v, "CPUManagerCheckpointV1", "state.CPUManagerCheckpointV1",
                                fields);
  });
}

absl::Status UnmarshalV2(std::string_view contents, V2Wire& cp) {
  return gojson::Unmarshal(contents, [&](Decoder& d, const Value& v) {
    std::vector<FieldSpec> fields = {StringField("policyName", cp.policy_name),
                                     StringField("defaultCpuSet", cp.default_cpu_set),
                                     EntriesV2Field(cp.entries),
                                     ChecksumField("checksum", cp.checksum)};
    return gojson::DecodeStruct(d, v, "CPUManagerCheckpointV2", "state.CPUManagerCheckpointV2",
                                fields);
  });
}

absl::Status UnmarshalV3(std::string_view contents, V3Wire& cp) {
  return gojson::Unmarshal(contents, [&](Decoder& d, const Value& v) {
    std::vector<FieldSpec> fields = {
        StringField("policyName", cp.policy_name),
        StringField("defaultCpuSet", cp.default_cpu_set), EntriesV2Field(cp.entries),
        PodEntriesField(cp.pod_entries), ChecksumField("checksum", cp.checksum)};
    return gojson::DecodeStruct(d, v, "CPUManagerCheckpointV3", "state.CPUManagerCheckpointV3",
                                fields);
  });
}

// CPUManagerCheckpoint.UnmarshalCheckpoint + VerifyChecksum.
absl::Status UnmarshalAndVerifyV4(std::string_view contents, V4Wire& cp) {
  absl::Status s = gojson::Unmarshal(contents, [&](Decoder& d, const Value& v) {
    const std::vector<std::string_view> embedded = {"CPUManagerCheckpointV2"};
    V2Wire& in = cp.inline_part;
    std::vector<FieldSpec> fields = {StringField("policyName", in.policy_name, embedded),
                                     StringField("defaultCpuSet", in.default_cpu_set, embedded),
                                     EntriesV2Field(in.entries, embedded),
                                     ChecksumField("checksum", in.checksum, embedded),
                                     StringField("data", cp.data),
                                     ChecksumField("dataChecksum", cp.data_checksum)};
    return gojson::DecodeStruct(d, v, "CPUManagerCheckpoint", "state.CPUManagerCheckpoint",
                                fields);
  });
  if (!s.ok()) return Prefix("failed to deserialize cpu manager checkpoint: ", s);
  s = gojson::Unmarshal(cp.data, [&](Decoder& d, const Value& v) {
    DataWire& data = cp.checkpoint_data;
    std::vector<FieldSpec> fields = {StringField("policyName", data.policy_name),
                                     StringField("defaultCpuSet", data.default_cpu_set),
                                     EntriesV2Field(data.entries),
                                     PodEntriesField(data.pod_entries)};
    return gojson::DecodeStruct(d, v, "CPUManagerCheckpointData",
                                "state.CPUManagerCheckpointData", fields);
  });
  if (!s.ok()) return Prefix("failed to deserialize cpu manager checkpoint data: ", s);
  if (cp.data_checksum != DataChecksum(cp.data)) return Corrupted();
  return absl::OkStatus();
}

// migrateV2CheckpointToV3Checkpoint / migrateV3CheckpointToV4Checkpoint: only non-empty
// maps are copied (inner maps are re-made, so nil inner maps become empty).
void CopyEntries(const EntriesV2& src, EntriesV2& dst) {
  if (!src || src->empty()) return;
  dst.emplace();
  for (const auto& [pod, containers] : *src) {
    (*dst)[pod] = containers.value_or(StrMap{});
  }
}

struct Loaded {
  DataWire data;
  int version = 0;
  std::string data_text;         // V4: the `data` string
  uint64_t inline_checksum = 0;  // V4: the inline legacy checksum
};

// loadAndMigrateCheckpointV4 (unwrapped errors).
// A chain starting at `newest_format` skips the newer formats (an older kubelet's chain).
absl::StatusOr<Loaded> LoadChain(std::string_view contents, bool pod_level_resource_managers,
                                 int newest_format) {
  absl::Status err;
  if (newest_format >= 4) {
    V4Wire v4;
    err = UnmarshalAndVerifyV4(contents, v4);
    if (err.ok()) {
      return Loaded{std::move(v4.checkpoint_data), 4, std::move(v4.data),
                    v4.inline_part.checksum};
    }
    if (!v4.data.empty() || v4.data_checksum != 0) {
      return Prefix("could not load v4 checkpoint: ", err);
    }
  }

  V3Wire v3;
  if (newest_format >= 3) {
    err = UnmarshalV3(contents, v3);
    if (err.ok() && !VerifyV3(v3)) err = Corrupted();
  }
  if (newest_format >= 3 && err.ok()) {
    Loaded out;
    out.version = 3;
    out.data.policy_name = v3.policy_name;
    out.data.default_cpu_set = v3.default_cpu_set;
    CopyEntries(v3.entries, out.data.entries);
    if (v3.pod_entries && !v3.pod_entries->empty()) out.data.pod_entries = v3.pod_entries;
    return out;
  }

  V2Wire v2;
  err = UnmarshalV2(contents, v2);
  if (err.ok() && !VerifyV2(v2, pod_level_resource_managers)) err = Corrupted();
  if (!err.ok()) return err;
  Loaded out;
  out.version = 2;
  out.data.policy_name = v2.policy_name;
  out.data.default_cpu_set = v2.default_cpu_set;
  CopyEntries(v2.entries, out.data.entries);
  return out;
}

// True when the bytes are a verifiable V1 checkpoint (what ≤1.35 kubelets still read).
bool LooksLikeV1(std::string_view contents) {
  V1Wire v1;
  if (!UnmarshalV1(contents, v1).ok() || !VerifyV1(v1)) return false;
  return v1.checksum != 0 || (v1.entries && !v1.entries->empty());
}

std::string WrapRestoreError(std::string_view err, const std::string& path) {
  return fmt::format(
      "could not restore state from checkpoint: {}, please drain this node and delete the CPU "
      "manager checkpoint file {} before restarting Kubelet",
      err, GoQuote(path));
}

// ---------------------------------------------------------------------------------------
// What podtopo models of the file, for KeptFields (kept_fields.h).

const Schema& kScalar = kScalarSchema;
const Schema kContainerCpus = Schema::Map(&kScalar);
const Schema kEntries = Schema::Map(&kContainerCpus);
const Schema kPodEntry = Schema::Object({{"cpuSet", &kScalar}});
const Schema kPodEntries = Schema::Map(&kPodEntry);
const Schema kBaseline = Schema::Object({{"baseline", &kScalar}});
const Schema kContainerBaselines = Schema::Map(&kBaseline);
const Schema kBaselines = Schema::Map(&kContainerBaselines);
const Schema kTopSchema = Schema::Object({{"policyName", &kScalar},
                                          {"defaultCpuSet", &kScalar},
                                          {"entries", &kEntries},
                                          {"podEntries", &kPodEntries},
                                          {"checksum", &kScalar},
                                          {"data", &kScalar},
                                          {"dataChecksum", &kScalar}});
const Schema kDataSchema = Schema::Object({{"policyName", &kScalar},
                                           {"defaultCpuSet", &kScalar},
                                           {"entries", &kEntries},
                                           {"podEntries", &kPodEntries},
                                           {"baselines", &kBaselines}});
// `data` when its baselines are not of the known shape: they are kept as an unknown member.
const Schema kDataSchemaWithoutBaselines = Schema::Object({{"policyName", &kScalar},
                                                           {"defaultCpuSet", &kScalar},
                                                           {"entries", &kEntries},
                                                           {"podEntries", &kPodEntries}});

// data.baselines when it is {pod: {container: {"baseline": string}}} (last duplicate wins, as
// in Go); nullopt for any other shape.
std::optional<std::map<std::string, std::map<std::string, std::string>>> DecodeBaselines(
    const Value& data) {
  const Value* found = nullptr;
  for (const auto& [key, member] : data.object) {
    if (key == "baselines" || gojson::GoFoldEqual(key, "baselines")) found = &member;
  }
  std::map<std::string, std::map<std::string, std::string>> out;
  if (found == nullptr) return out;
  if (found->kind != Value::Kind::kObject) return std::nullopt;
  for (const auto& [pod, containers] : found->object) {
    if (containers.kind != Value::Kind::kObject) return std::nullopt;
    auto& dst = out[pod];
    for (const auto& [name, entry] : containers.object) {
      if (entry.kind != Value::Kind::kObject) return std::nullopt;
      const Value* baseline = nullptr;
      for (const auto& [k, v] : entry.object) {
        if (k == "baseline" || gojson::GoFoldEqual(k, "baseline")) baseline = &v;
      }
      if (baseline == nullptr || baseline->kind != Value::Kind::kString) return std::nullopt;
      dst[name] = baseline->text;
    }
  }
  return out;
}

// Fills cp.kept and cp.baselines from the file (and, for V4, its data text).
void CollectUnmodelled(std::string_view contents, const Loaded& loaded, CpuCheckpoint& cp) {
  std::optional<std::map<std::string, std::map<std::string, std::string>>> baselines;
  if (loaded.version == 4) {
    cp.kept.legacy_inline_checksum = loaded.inline_checksum != 0;
    if (absl::StatusOr<Value> data = gojson::Parse(loaded.data_text);
        data.ok() && data->kind == Value::Kind::kObject) {
      baselines = DecodeBaselines(*data);
    }
  }
  CollectKeptFields(contents, kTopSchema, loaded.version == 4 ? &loaded.data_text : nullptr,
                    baselines ? kDataSchema : kDataSchemaWithoutBaselines, cp.kept);
  if (baselines) {
    for (auto& [pod, containers] : *baselines) {
      if (!containers.empty()) cp.baselines[pod] = std::move(containers);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Writing.

absl::StatusOr<std::string> Canonical(std::string_view cpus, std::string_view what) {
  absl::StatusOr<CpuSet> set = CpuSet::Parse(cpus);
  if (!set.ok()) {
    return absl::InvalidArgumentError(fmt::format("cannot write {} {}: {}", what,
                                                  GoQuote(cpus),
                                                  std::string(set.status().message())));
  }
  return set->String();
}

absl::StatusOr<CpuCheckpoint> Canonicalize(const CpuCheckpoint& cp, bool with_pod_entries) {
  CpuCheckpoint out;
  out.policy_name = cp.policy_name;
  PODTOPO_ASSIGN_OR_RETURN(out.default_cpu_set,
                           Canonical(cp.default_cpu_set, "default cpu set"));
  for (const auto& [pod, containers] : cp.entries) {
    auto& dst = out.entries[pod];
    for (const auto& [name, cpus] : containers) {
      PODTOPO_ASSIGN_OR_RETURN(
          dst[name], Canonical(cpus, fmt::format("cpuset of container {} in pod {}",
                                                 GoQuote(name),
                                                 GoQuote(pod))));
    }
  }
  if (with_pod_entries) {
    for (const auto& [pod, cpus] : cp.pod_entries) {
      PODTOPO_ASSIGN_OR_RETURN(
          out.pod_entries[pod],
          Canonical(cpus, fmt::format("pod cpuset of pod {}", GoQuote(pod))));
    }
  }
  out.baselines = cp.baselines;
  out.kept = cp.kept;
  out.version_read = cp.version_read;
  return out;
}

// ,"<key>":{"<pod>":{"<container>":<value>}} with omitempty; with `value_key` each value is
// wrapped as {"<value_key>":"<value>"} (baselines), else written as a string (entries).
void AppendPodContainerMap(std::string& out, std::string_view key,
                           const std::map<std::string, std::map<std::string, std::string>>& m,
                           std::string_view value_key) {
  if (m.empty()) return;  // omitempty
  out += ',';
  gojson::AppendQuoted(out, key);
  out += ":{";
  bool first_pod = true;
  for (const auto& [pod, containers] : m) {
    if (!first_pod) out += ',';
    first_pod = false;
    gojson::AppendQuoted(out, pod);
    out += ":{";
    bool first = true;
    for (const auto& [name, cpus] : containers) {
      if (!first) out += ',';
      first = false;
      gojson::AppendQuoted(out, name);
      out += ':';
      if (!value_key.empty()) {
        out += '{';
        gojson::AppendQuoted(out, value_key);
        out += ':';
      }
      gojson::AppendQuoted(out, cpus);
      if (!value_key.empty()) out += '}';
    }
    out += '}';
  }
  out += '}';
}

void AppendEntriesJson(std::string& out, const CpuCheckpoint& cp) {
  AppendPodContainerMap(out, "entries", cp.entries, "");
}

void AppendPodEntriesJson(std::string& out, const CpuCheckpoint& cp) {
  if (cp.pod_entries.empty()) return;  // omitempty
  out += ",\"podEntries\":{";
  bool first = true;
  for (const auto& [pod, cpus] : cp.pod_entries) {
    if (!first) out += ',';
    first = false;
    gojson::AppendQuoted(out, pod);
    out += ':';
    // PodEntry.MarshalJSON: {"cpuSet":"..."} with omitempty on the string.
    if (cpus.empty()) {
      out += "{}";
    } else {
      out += "{\"cpuSet\":";
      gojson::AppendQuoted(out, cpus);
      out += '}';
    }
  }
  out += '}';
}

void AppendBaselinesJson(std::string& out, const CpuCheckpoint& cp) {
  AppendPodContainerMap(out, "baselines", cp.baselines, "baseline");
}

void AppendHeaderJson(std::string& out, const CpuCheckpoint& cp) {
  out += "{\"policyName\":";
  gojson::AppendQuoted(out, cp.policy_name);
  out += ",\"defaultCpuSet\":";
  gojson::AppendQuoted(out, cp.default_cpu_set);
}

// What a reader reconstructs from JSON we write: omitted maps are the constructors' empty
// maps, every written inner map is non-nil.
V2Wire ToV2Wire(const CpuCheckpoint& cp) {
  V2Wire w;
  w.policy_name = cp.policy_name;
  w.default_cpu_set = cp.default_cpu_set;
  for (const auto& [pod, containers] : cp.entries) (*w.entries)[pod] = containers;
  return w;
}

absl::StatusOr<V3Wire> ToV3Wire(const CpuCheckpoint& cp) {
  V3Wire w;
  w.policy_name = cp.policy_name;
  w.default_cpu_set = cp.default_cpu_set;
  for (const auto& [pod, containers] : cp.entries) (*w.entries)[pod] = containers;
  for (const auto& [pod, cpus] : cp.pod_entries) {
    absl::StatusOr<CpuSet> set = CpuSet::Parse(cpus);
    if (!set.ok()) {
      return absl::InvalidArgumentError(fmt::format("pod cpuset {} of pod {}: {}",
                                                    GoQuote(cpus),
                                                    GoQuote(pod),
                                                    std::string(set.status().message())));
    }
    (*w.pod_entries)[pod] = PodEntryWire{false, set->List()};
  }
  return w;
}

uint64_t V2LegacyChecksum(const CpuCheckpoint& cp) {
  return LegacyChecksum(SpewV2Wire("CPUManagerCheckpointV2", ToV2Wire(cp)),
                        "CPUManagerCheckpointV2", kLegacyName);
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public API.

std::string SpewCpuV1(std::string_view type_name, std::string_view policy_name,
                      std::string_view default_cpu_set,
                      const std::map<std::string, std::string>& entries) {
  V1Wire w;
  w.policy_name = std::string(policy_name);
  w.default_cpu_set = std::string(default_cpu_set);
  w.entries = entries;
  return SpewV1Wire(type_name, w);
}

std::string SpewCpuV2(std::string_view type_name, const CpuCheckpoint& cp) {
  return SpewV2Wire(type_name, ToV2Wire(cp));
}

absl::StatusOr<std::string> SpewCpuV3(std::string_view type_name, const CpuCheckpoint& cp) {
  PODTOPO_ASSIGN_OR_RETURN(V3Wire w, ToV3Wire(cp));
  return SpewV3Wire(type_name, w);
}

absl::StatusOr<CpuCheckpoint> RestoreCpuCheckpoint(std::string_view contents,
                                                   const std::string& path,
                                                   const CpuLoadOptions& options) {
  auto fail = [&](std::string_view err) {
    return absl::FailedPreconditionError(WrapRestoreError(err, path));
  };
  absl::StatusOr<Loaded> loaded =
      LoadChain(contents, options.pod_level_resource_managers, options.newest_format);
  if (!loaded.ok()) {
    const std::string err(loaded.status().message());
    std::string message = WrapRestoreError(err, path);
    // A V4 hard failure is about the V4 payload; otherwise say why a V1 file is refused.
    if (err.rfind("could not load v4 checkpoint", 0) != 0 && LooksLikeV1(contents)) {
      message +=
          " (note: this is a V1 checkpoint - entries keyed by container ID, written by "
          "kubelet <= 1.17 - which kubelet v1.37 no longer reads; only V2, V3 and V4 are "
          "accepted)";
    }
    return absl::FailedPreconditionError(message);
  }
  const DataWire& data = loaded->data;

  // restoreState.
  if (options.configured_policy != data.policy_name) {
    return fail(fmt::format("configured policy {} differs from state checkpoint policy {}",
                            GoQuote(options.configured_policy),
                            GoQuote(data.policy_name)));
  }
  if (absl::StatusOr<CpuSet> set = CpuSet::Parse(data.default_cpu_set); !set.ok()) {
    return fail(fmt::format("could not parse default cpu set {}: {}",
                            GoQuote(data.default_cpu_set), std::string(set.status().message())));
  }
  CpuCheckpoint out;
  out.policy_name = data.policy_name;
  out.default_cpu_set = data.default_cpu_set;
  out.version_read = loaded->version;
  if (data.entries) {
    for (const auto& [pod, containers] : *data.entries) {
      auto& dst = out.entries[pod];
      if (!containers) continue;
      for (const auto& [name, cpus] : *containers) {
        if (absl::StatusOr<CpuSet> set = CpuSet::Parse(cpus); !set.ok()) {
          return fail(fmt::format("could not parse cpuset {} for container {} in pod {}: {}",
                                  GoQuote(cpus), GoQuote(name),
                                  GoQuote(pod), std::string(set.status().message())));
        }
        dst[name] = cpus;
      }
    }
  }
  if (options.pod_level_resource_managers && data.pod_entries) {
    for (const auto& [pod, entry] : *data.pod_entries) {
      out.pod_entries[pod] = CpuSet(entry.ids).String();
    }
  }
  CollectUnmodelled(contents, *loaded, out);
  return out;
}

absl::StatusOr<std::optional<CpuCheckpoint>> LoadCpuCheckpointFile(
    const std::string& path, const CpuLoadOptions& options) {
  absl::StatusOr<std::string> contents = ReadFile(path);
  if (!contents.ok()) {
    if (absl::IsNotFound(contents.status())) return std::optional<CpuCheckpoint>();
    // The kubelet's file store returns the os error, e.g. "read <path>: is a directory".
    return absl::FailedPreconditionError(
        WrapRestoreError(internal::GoReadErrorText(contents.status(), path), path));
  }
  PODTOPO_ASSIGN_OR_RETURN(CpuCheckpoint cp, RestoreCpuCheckpoint(*contents, path, options));
  return std::optional<CpuCheckpoint>(std::move(cp));
}

absl::StatusOr<std::string> MarshalCpuCheckpointData(const CpuCheckpoint& cp,
                                                     bool with_pod_entries) {
  PODTOPO_ASSIGN_OR_RETURN(CpuCheckpoint c, Canonicalize(cp, with_pod_entries));
  std::string data;
  AppendHeaderJson(data, c);
  AppendEntriesJson(data, c);
  if (with_pod_entries) AppendPodEntriesJson(data, c);
  AppendBaselinesJson(data, c);
  data += '}';
  return WriteWithKept(data, c.kept.data, c.kept.data_order);
}

absl::StatusOr<std::string> MarshalCpuCheckpoint(const CpuCheckpoint& cp,
                                                 const CpuWriteOptions& options) {
  PODTOPO_RETURN_IF_ERROR(ErrorIfUnkept(cp.kept, "CPU manager"));
  const bool with_pods =
      options.pod_level_resource_managers && options.format != CpuFormat::kV2;
  PODTOPO_ASSIGN_OR_RETURN(CpuCheckpoint c, Canonicalize(cp, with_pods));
  std::string out;
  switch (options.format) {
    case CpuFormat::kV2: {
      AppendHeaderJson(out, c);
      AppendEntriesJson(out, c);
      fmt::format_to(std::back_inserter(out), ",\"checksum\":{}}}", V2LegacyChecksum(c));
      return out;
    }
    case CpuFormat::kV3: {
      PODTOPO_ASSIGN_OR_RETURN(V3Wire wire, ToV3Wire(c));
      uint64_t sum = LegacyChecksum(SpewV3Wire("CPUManagerCheckpointV3", wire),
                                    "CPUManagerCheckpointV3", kLegacyName);
      AppendHeaderJson(out, c);
      AppendEntriesJson(out, c);
      AppendPodEntriesJson(out, c);
      fmt::format_to(std::back_inserter(out), ",\"checksum\":{}}}", sum);
      return out;
    }
    case CpuFormat::kV4: {
      PODTOPO_ASSIGN_OR_RETURN(std::string data, MarshalCpuCheckpointData(c, with_pods));
      // The inline checksum as the file had it (0 or the legacy V2 one); both are accepted by
      // every reader and ignored by 1.37.
      const bool legacy = options.v4_inline_checksum == V4InlineChecksum::kLegacyV2 ||
                          c.kept.legacy_inline_checksum;
      uint64_t inline_sum = legacy ? V2LegacyChecksum(c) : 0;
      AppendHeaderJson(out, c);
      AppendEntriesJson(out, c);
      fmt::format_to(std::back_inserter(out), ",\"checksum\":{},\"data\":", inline_sum);
      gojson::AppendQuoted(out, data);
      fmt::format_to(std::back_inserter(out), ",\"dataChecksum\":{}}}", DataChecksum(data));
      return WriteWithKept(out, c.kept.top, c.kept.top_order);
    }
  }
  return absl::InternalError("unknown CPU checkpoint format");
}

void KeepUnmodelled(const CpuCheckpoint& read, CpuCheckpoint& next) {
  next.kept = read.kept;
  next.baselines.clear();
  for (const auto& [pod, containers] : read.baselines) {
    auto had = read.entries.find(pod);
    auto has = next.entries.find(pod);
    for (const auto& [name, cpus] : containers) {
      bool had_entry = had != read.entries.end() && had->second.contains(name);
      bool has_entry = has != next.entries.end() && has->second.contains(name);
      if (has_entry || !had_entry) next.baselines[pod][name] = cpus;
    }
  }
}

absl::Status WriteCpuCheckpointFile(const std::string& path, const CpuCheckpoint& cp,
                                    const CpuWriteOptions& options) {
  PODTOPO_ASSIGN_OR_RETURN(std::string bytes, MarshalCpuCheckpoint(cp, options));
  return WriteFileAtomically(path, bytes, 0600);
}

}  // namespace podtopo::checkpoint

// ---------------------------------------------------------------------------------------
// Inspection.

namespace podtopo::checkpoint {

ChecksumReport InspectCpuCheckpoint(std::string_view contents, bool pod_level_resource_managers) {
  ChecksumReport r;
  V4Wire v4;
  absl::Status err = UnmarshalAndVerifyV4(contents, v4);
  if (internal::InspectDataChecksumFormat(4, err, v4.checkpoint_data.policy_name, v4.data,
                                          v4.data_checksum, "checksum",
                                          v4.inline_part.checksum, r)) {
    return r;
  }

  V3Wire v3;
  absl::Status err3 = UnmarshalV3(contents, v3);
  if (err3.ok()) {
    std::string dump = SpewV3Wire("CPUManagerCheckpointV3", v3);
    if (v3.checksum == Fnv1a32(dump)) {
      r.version = 3;
      r.policy_name = v3.policy_name;
      r.algorithm = fmt::format(
          "V3 (kubelet 1.36, PodLevelResourceManagers on): checksum {} = FNV-1a-32 of the spew "
          "dump named CPUManagerCheckpointV3",
          v3.checksum);
      return r;
    }
    if (v3.checksum == LegacyChecksum(dump, "CPUManagerCheckpointV3", kLegacyName)) {
      r.version = 3;
      r.policy_name = v3.policy_name;
      r.algorithm = fmt::format(
          "V3 (kubelet 1.36, PodLevelResourceManagers on): checksum {} = FNV-1a-32 of the spew "
          "dump named CPUManagerCheckpoint",
          v3.checksum);
      return r;
    }
  }

  V2Wire v2;
  absl::Status err2 = UnmarshalV2(contents, v2);
  if (err2.ok()) {
    std::string dump = SpewV2Wire("CPUManagerCheckpointV2", v2);
    uint64_t legacy = LegacyChecksum(dump, "CPUManagerCheckpointV2", kLegacyName);
    if (v2.checksum == 0 || v2.checksum == legacy ||
        (!pod_level_resource_managers && v2.checksum == Fnv1a32(dump))) {
      r.version = 2;
      r.policy_name = v2.policy_name;
      if (v2.checksum == 0) {
        r.algorithm = "V2 (kubelet 1.18-1.36): checksum 0, accepted without verification";
      } else if (v2.checksum == legacy) {
        r.algorithm = fmt::format(
            "V2 (kubelet 1.18-1.36): checksum {} = FNV-1a-32 of the spew dump named "
            "CPUManagerCheckpoint",
            v2.checksum);
      } else {
        r.algorithm = fmt::format(
            "V2 (kubelet 1.36): checksum {} = FNV-1a-32 of the spew dump named "
            "CPUManagerCheckpointV2 (accepted only while PodLevelResourceManagers is off)",
            v2.checksum);
      }
      if (err3.ok() && v3.pod_entries && !v3.pod_entries->empty()) {
        r.algorithm += "; its podEntries are not covered by a valid V3 checksum and are dropped";
      }
      return r;
    }
    r.error = Corrupted();
    std::string expected = fmt::format(
        "checksum {} in the file; V2 (CPUManagerCheckpoint) expects {}", v2.checksum, legacy);
    if (err3.ok() && v3.pod_entries && !v3.pod_entries->empty()) {
      expected += fmt::format(", V3 (CPUManagerCheckpoint) expects {}",
                              LegacyChecksum(SpewV3Wire("CPUManagerCheckpointV3", v3),
                                             "CPUManagerCheckpointV3", kLegacyName));
    }
    r.algorithm = expected;
  } else {
    r.error = err2;
    r.algorithm = "no format decodes";
  }
  // V1: what <= 1.35 kubelets still read.
  V1Wire v1;
  if (UnmarshalV1(contents, v1).ok() && VerifyV1(v1) &&
      (v1.checksum != 0 || (v1.entries && !v1.entries->empty()))) {
    r.version = 1;
    r.policy_name = v1.policy_name;
    r.algorithm = fmt::format(
        "V1 (kubelet <= 1.17): checksum {} = FNV-1a-32 of the spew dump with entries keyed by "
        "container ID; kubelet 1.37 does not read V1",
        v1.checksum);
  }
  return r;
}

absl::StatusOr<CpuCheckpointV1> DecodeCpuCheckpointV1(std::string_view contents) {
  V1Wire v1;
  PODTOPO_RETURN_IF_ERROR(UnmarshalV1(contents, v1));
  if (!VerifyV1(v1)) return absl::InvalidArgumentError("checkpoint is corrupted");
  CpuCheckpointV1 out;
  out.policy_name = v1.policy_name;
  out.default_cpu_set = v1.default_cpu_set;
  if (v1.entries) out.entries = *v1.entries;
  out.checksum = v1.checksum;
  return out;
}

}  // namespace podtopo::checkpoint
