#include "checkpoint/cpu_state_file.h"

#include <utility>
#include <vector>

#include "checkpoint/checksum.h"
#include "checkpoint/go_json.h"
#include "checkpoint/checkpoint_file.h"
#include "cpuset/cpuset.h"
#include "fmt/format.h"
#include "util/go_strconv.h"
#include "util/status_macros.h"

namespace podtopo::checkpoint {
namespace {

using internal::ChecksumField;
using internal::Corrupted;
using internal::StringField;

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
  static constexpr char kGoStruct[] = "CPUManagerCheckpointV1";
  std::string policy_name;
  std::string default_cpu_set;
  std::optional<StrMap> entries = StrMap{};
  uint64_t checksum = 0;
};

struct V2Wire {
  static constexpr char kGoStruct[] = "CPUManagerCheckpointV2";
  std::string policy_name;
  std::string default_cpu_set;
  EntriesV2 entries = EntriesV2::value_type{};
  uint64_t checksum = 0;
};

struct V3Wire {
  static constexpr char kGoStruct[] = "CPUManagerCheckpointV3";
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
using V4Wire = internal::DataChecksumWire<V2Wire, DataWire>;

constexpr internal::CheckpointNames kNames{
    .manager = "CPU manager", .lower = "cpu manager", .go_struct = "CPUManagerCheckpoint",
    .inline_part = "CPUManagerCheckpointV2", .data_version = 4};
constexpr char kLegacyName[] = "CPUManagerCheckpoint";
constexpr char kEntriesV2Type[] = "map[string]map[string]string";

// ---------------------------------------------------------------------------------------
// Spew.

void SpewEntriesV2(SpewWriter& w, const EntriesV2& entries) {
  w.Type(kEntriesV2Type);
  SpewMap(w, entries, [](SpewWriter& ww, const std::optional<StrMap>& containers) {
    SpewMap(ww, containers, [](SpewWriter& w3, const std::string& cpus) { w3.String(cpus); });
  });
}

void SpewPodEntries(SpewWriter& w, const PodEntriesWire& pod_entries) {
  w.Type("state.PodCPUAssignments");
  SpewMap(w, pod_entries, [](SpewWriter& ww, const PodEntryWire& entry) {
    ww.OpenStruct().FieldName("CPUSet").Type("cpuset.CPUSet");
    if (entry.nil_elems) {
      ww.OpenStruct().FieldName("elems").Type("map[int]struct {}").Nil().CloseStruct();
    } else {
      SpewCpuSetBody(ww, entry.ids);
    }
    ww.CloseStruct();
  });
}

// The dump of a legacy struct (V1, V2, V3) with Checksum 0; spew_entries writes the members
// after DefaultCPUSet.
template <class SpewEntries>
std::string SpewLegacy(std::string_view type_name, std::string_view policy_name,
                       std::string_view default_cpu_set, SpewEntries&& spew_entries) {
  std::string out;
  SpewWriter w(&out);
  SpewCheckpointHead(w, type_name, policy_name);
  w.FieldName("DefaultCPUSet").Type("string").String(default_cpu_set);
  spew_entries(w);
  SpewZeroChecksumTail(w);
  return out;
}

std::string SpewV1Wire(std::string_view type_name, const V1Wire& cp) {
  return SpewLegacy(type_name, cp.policy_name, cp.default_cpu_set, [&](SpewWriter& w) {
    w.FieldName("Entries").Type("map[string]string");
    SpewMap(w, cp.entries, [](SpewWriter& ww, const std::string& cpus) { ww.String(cpus); });
  });
}

std::string SpewV2Wire(std::string_view type_name, const V2Wire& cp) {
  return SpewLegacy(type_name, cp.policy_name, cp.default_cpu_set, [&](SpewWriter& w) {
    w.FieldName("Entries");
    SpewEntriesV2(w, cp.entries);
  });
}

std::string SpewV3Wire(std::string_view type_name, const V3Wire& cp) {
  return SpewLegacy(type_name, cp.policy_name, cp.default_cpu_set, [&](SpewWriter& w) {
    w.FieldName("Entries");
    SpewEntriesV2(w, cp.entries);
    w.FieldName("PodEntries");
    SpewPodEntries(w, cp.pod_entries);
  });
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

FieldSpec EntriesV2Field(EntriesV2& target) {
  return FieldSpec{"entries", {}, [&target](Decoder& d, const Value& v) {
                     return DecodeEntriesV2(d, v, target);
                   }};
}

FieldSpec PodEntriesField(PodEntriesWire& target) {
  return FieldSpec{"podEntries", {}, [&target](Decoder& d, const Value& v) {
                     return DecodePodEntries(d, v, target);
                   }};
}

// The members of V2, V3, V4's inline V2 part and V4's data (internal::Unmarshal), in the
// kubelet's struct order:
// policyName, defaultCpuSet, entries, then podEntries (V3, data) and checksum (not data).
template <class Wire>
std::vector<FieldSpec> Fields(Wire& cp) {
  std::vector<FieldSpec> fields = {StringField("policyName", cp.policy_name),
                                   StringField("defaultCpuSet", cp.default_cpu_set),
                                   EntriesV2Field(cp.entries)};
  if constexpr (requires { cp.pod_entries; }) fields.push_back(PodEntriesField(cp.pod_entries));
  if constexpr (requires { cp.checksum; }) fields.push_back(ChecksumField("checksum", cp.checksum));
  return fields;
}

std::vector<FieldSpec> Fields(V1Wire& cp) {
  return {StringField("policyName", cp.policy_name),
          StringField("defaultCpuSet", cp.default_cpu_set),
          FieldSpec{"entries", {}, [&cp](Decoder& d, const Value& m) {
                      return DecodeStrMap(d, m, cp.entries, "map[string]string");
                    }},
          ChecksumField("checksum", cp.checksum)};
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
  if (newest_format >= 4) {
    V4Wire v4;
    absl::Status err = internal::UnmarshalAndVerify(contents, kNames, v4);
    if (err.ok()) {
      return Loaded{std::move(v4.checkpoint_data), 4, std::move(v4.data),
                    v4.inline_part.checksum};
    }
    PODTOPO_RETURN_IF_ERROR(internal::DataFormatFailure(kNames, err, v4.data, v4.data_checksum));
  }

  V3Wire v3;
  if (newest_format >= 3 &&
      internal::Verified(internal::Unmarshal(contents, v3), [&] { return VerifyV3(v3); }).ok()) {
    Loaded out;
    out.version = 3;
    out.data.policy_name = v3.policy_name;
    out.data.default_cpu_set = v3.default_cpu_set;
    CopyEntries(v3.entries, out.data.entries);
    if (v3.pod_entries && !v3.pod_entries->empty()) out.data.pod_entries = v3.pod_entries;
    return out;
  }

  V2Wire v2;
  PODTOPO_RETURN_IF_ERROR(internal::Verified(internal::Unmarshal(contents, v2), [&] {
    return VerifyV2(v2, pod_level_resource_managers);
  }));
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
  if (!internal::Unmarshal(contents, v1).ok() || !VerifyV1(v1)) return false;
  return v1.checksum != 0 || (v1.entries && !v1.entries->empty());
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
// `data` when its baselines are not of the known shape: they are kept as an unknown member.
const Schema kDataSchemaWithoutBaselines = Schema::Object({{"policyName", &kScalar},
                                                           {"defaultCpuSet", &kScalar},
                                                           {"entries", &kEntries},
                                                           {"podEntries", &kPodEntries}});
const Schema kDataSchema = [] {
  Schema data = kDataSchemaWithoutBaselines;
  data.members.emplace_back("baselines", &kBaselines);
  return data;
}();
const Schema kTopSchema = internal::FileSchema(kDataSchemaWithoutBaselines);

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
  gojson::AppendOmitEmptyObject(out, key, m, [&](std::string& o, const StrMap& containers) {
    gojson::AppendObject(o, containers, [&](std::string& o2, const std::string& cpus) {
      if (!value_key.empty()) {
        o2 += '{';
        gojson::AppendQuoted(o2, value_key);
        o2 += ':';
      }
      gojson::AppendQuoted(o2, cpus);
      if (!value_key.empty()) o2 += '}';
    });
  });
}

void AppendEntriesJson(std::string& out, const CpuCheckpoint& cp) {
  AppendPodContainerMap(out, "entries", cp.entries, "");
}

void AppendPodEntriesJson(std::string& out, const CpuCheckpoint& cp) {
  gojson::AppendOmitEmptyObject(out, "podEntries", cp.pod_entries,
                                [](std::string& o, const std::string& cpus) {
                                  // PodEntry.MarshalJSON: {"cpuSet":"..."}, omitempty.
                                  if (cpus.empty()) {
                                    o += "{}";
                                  } else {
                                    o += "{\"cpuSet\":";
                                    gojson::AppendQuoted(o, cpus);
                                    o += '}';
                                  }
                                });
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
  auto fail = [&](std::string_view err) { return internal::RestoreError(kNames, err, path); };
  absl::StatusOr<Loaded> loaded =
      LoadChain(contents, options.pod_level_resource_managers, options.newest_format);
  if (!loaded.ok()) {
    const std::string err(loaded.status().message());
    // A V4 hard failure is about the V4 payload; otherwise say why a V1 file is refused.
    if (err.rfind("could not load v4 checkpoint", 0) != 0 && LooksLikeV1(contents)) {
      return internal::RestoreError(
          kNames, err, path,
          " (note: this is a V1 checkpoint - entries keyed by container ID, written by "
          "kubelet <= 1.17 - which kubelet v1.37 no longer reads; only V2, V3 and V4 are "
          "accepted)");
    }
    return fail(err);
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
  return internal::LoadCheckpointFile<CpuCheckpoint>(
      kNames, path,
      [&](std::string_view contents) { return RestoreCpuCheckpoint(contents, path, options); });
}

absl::StatusOr<std::string> MarshalCpuCheckpointData(const CpuCheckpoint& cp,
                                                     bool with_pod_entries) {
  PODTOPO_ASSIGN_OR_RETURN(CpuCheckpoint c, Canonicalize(cp, with_pod_entries));
  std::string data;
  AppendHeaderJson(data, c);
  AppendEntriesJson(data, c);
  if (with_pod_entries) AppendPodEntriesJson(data, c);
  AppendBaselinesJson(data, c);
  return internal::CloseData(std::move(data), c.kept);
}

absl::StatusOr<std::string> MarshalCpuCheckpoint(const CpuCheckpoint& cp,
                                                 const CpuWriteOptions& options) {
  PODTOPO_RETURN_IF_ERROR(ErrorIfUnkept(cp.kept, kNames.manager));
  const bool with_pods =
      options.pod_level_resource_managers && options.format != CpuFormat::kV2;
  PODTOPO_ASSIGN_OR_RETURN(CpuCheckpoint c, Canonicalize(cp, with_pods));
  std::string out;
  switch (options.format) {
    case CpuFormat::kV2: {
      AppendHeaderJson(out, c);
      AppendEntriesJson(out, c);
      internal::AppendChecksum(out, V2LegacyChecksum(c));
      return out;
    }
    case CpuFormat::kV3: {
      PODTOPO_ASSIGN_OR_RETURN(V3Wire wire, ToV3Wire(c));
      uint64_t sum = LegacyChecksum(SpewV3Wire("CPUManagerCheckpointV3", wire),
                                    "CPUManagerCheckpointV3", kLegacyName);
      AppendHeaderJson(out, c);
      AppendEntriesJson(out, c);
      AppendPodEntriesJson(out, c);
      internal::AppendChecksum(out, sum);
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
      return internal::AppendDataChecksum(std::move(out), inline_sum, data, c.kept);
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
  return internal::WriteCheckpointFile(path, MarshalCpuCheckpoint(cp, options));
}

}  // namespace podtopo::checkpoint

// ---------------------------------------------------------------------------------------
// Inspection.

namespace podtopo::checkpoint {

ChecksumReport InspectCpuCheckpoint(std::string_view contents, bool pod_level_resource_managers) {
  ChecksumReport r;
  V4Wire v4;
  absl::Status err = internal::UnmarshalAndVerify(contents, kNames, v4);
  if (internal::InspectDataChecksumFormat(kNames, err, v4.checkpoint_data.policy_name, v4.data,
                                          v4.data_checksum, "checksum",
                                          v4.inline_part.checksum, r)) {
    return r;
  }

  V3Wire v3;
  absl::Status err3 = internal::Unmarshal(contents, v3);
  if (err3.ok()) {
    std::string dump = SpewV3Wire("CPUManagerCheckpointV3", v3);
    constexpr std::string_view kV3 = "V3 (kubelet 1.36, PodLevelResourceManagers on)";
    if (v3.checksum == Fnv1a32(dump)) {
      return internal::ReportLoaded(
          r, 3, v3.policy_name,
          internal::LegacyChecksumText(kV3, v3.checksum, "CPUManagerCheckpointV3"));
    }
    if (v3.checksum == LegacyChecksum(dump, "CPUManagerCheckpointV3", kLegacyName)) {
      return internal::ReportLoaded(r, 3, v3.policy_name,
                                    internal::LegacyChecksumText(kV3, v3.checksum, kLegacyName));
    }
  }

  V2Wire v2;
  absl::Status err2 = internal::Unmarshal(contents, v2);
  if (err2.ok()) {
    std::string dump = SpewV2Wire("CPUManagerCheckpointV2", v2);
    uint64_t legacy = LegacyChecksum(dump, "CPUManagerCheckpointV2", kLegacyName);
    if (v2.checksum == 0 || v2.checksum == legacy ||
        (!pod_level_resource_managers && v2.checksum == Fnv1a32(dump))) {
      constexpr std::string_view kV2 = "V2 (kubelet 1.18-1.36)";
      internal::ReportLoaded(
          r, 2, v2.policy_name,
          v2.checksum == 0        ? internal::ZeroChecksumText(kV2)
          : v2.checksum == legacy ? internal::LegacyChecksumText(kV2, v2.checksum, kLegacyName)
                                  : internal::LegacyChecksumText("V2 (kubelet 1.36)", v2.checksum,
                                                                 "CPUManagerCheckpointV2") +
                                        " (accepted only while PodLevelResourceManagers is off)");
      if (err3.ok() && v3.pod_entries && !v3.pod_entries->empty()) {
        r.algorithm += internal::DroppedPodEntriesNote(3);
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
  if (internal::Unmarshal(contents, v1).ok() && VerifyV1(v1) &&
      (v1.checksum != 0 || (v1.entries && !v1.entries->empty()))) {
    internal::ReportLoaded(
        r, 1, v1.policy_name,
        fmt::format("V1 (kubelet <= 1.17): checksum {} = FNV-1a-32 of the spew dump with entries "
                    "keyed by container ID; kubelet 1.37 does not read V1",
                    v1.checksum));
  }
  return r;
}

absl::StatusOr<CpuCheckpointV1> DecodeCpuCheckpointV1(std::string_view contents) {
  V1Wire v1;
  PODTOPO_RETURN_IF_ERROR(internal::Unmarshal(contents, v1));
  if (!VerifyV1(v1)) return absl::InvalidArgumentError("checkpoint is corrupted");
  CpuCheckpointV1 out;
  out.policy_name = v1.policy_name;
  out.default_cpu_set = v1.default_cpu_set;
  if (v1.entries) out.entries = *v1.entries;
  out.checksum = v1.checksum;
  return out;
}

}  // namespace podtopo::checkpoint
