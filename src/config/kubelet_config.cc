#include "config/kubelet_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "config/feature_gates.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "util/file.h"
#include "util/go_strconv.h"
#include "util/suggest.h"
#include "util/yaml_guard.h"
#include "yaml-cpp/yaml.h"

namespace podtopo::config {
namespace {

using Severity = Finding::Severity;

// ---------------------------------------------------------------------------------------
// The fields of KubeletConfiguration v1beta1 (staging/src/k8s.io/kubelet/config/v1beta1/
// types.go, v1.37), plus TypeMeta.

constexpr std::string_view kKnownFields[] = {
    "apiVersion",
    "kind",
    "enableServer",
    "staticPodPath",
    "podLogsDir",
    "syncFrequency",
    "fileCheckFrequency",
    "httpCheckFrequency",
    "staticPodURL",
    "staticPodURLHeader",
    "address",
    "port",
    "readOnlyPort",
    "tlsCertFile",
    "tlsPrivateKeyFile",
    "tlsCipherSuites",
    "tlsCurvePreferences",
    "tlsMinVersion",
    "rotateCertificates",
    "serverTLSBootstrap",
    "authentication",
    "authorization",
    "registryPullQPS",
    "registryBurst",
    "imagePullCredentialsVerificationPolicy",
    "preloadedImagesVerificationAllowlist",
    "eventRecordQPS",
    "eventBurst",
    "enableDebuggingHandlers",
    "enableContentionProfiling",
    "healthzPort",
    "healthzBindAddress",
    "oomScoreAdj",
    "clusterDomain",
    "clusterDNS",
    "streamingConnectionIdleTimeout",
    "nodeStatusUpdateFrequency",
    "nodeStatusReportFrequency",
    "nodeLeaseDurationSeconds",
    "imageMinimumGCAge",
    "imageMaximumGCAge",
    "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent",
    "volumeStatsAggPeriod",
    "kubeletCgroups",
    "systemCgroups",
    "cgroupRoot",
    "cgroupsPerQOS",
    "cgroupDriver",
    "cpuManagerPolicy",
    "singleProcessOOMKill",
    "cpuManagerPolicyOptions",
    "cpuManagerReconcilePeriod",
    "draManagerReconcilePeriod",
    "memoryManagerPolicy",
    "topologyManagerPolicy",
    "topologyManagerScope",
    "topologyManagerPolicyOptions",
    "qosReserved",
    "runtimeRequestTimeout",
    "hairpinMode",
    "podCIDR",
    "podPidsLimit",
    "resolvConf",
    "runOnce",
    "cpuCFSQuota",
    "cpuCFSQuotaPeriod",
    "nodeStatusMaxImages",
    "maxOpenFiles",
    "contentType",
    "kubeAPIQPS",
    "kubeAPIBurst",
    "serializeImagePulls",
    "maxParallelImagePulls",
    "evictionHard",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "evictionPressureTransitionPeriod",
    "evictionMaxPodGracePeriod",
    "evictionMinimumReclaim",
    "mergeDefaultEvictionSettings",
    "podsPerCore",
    "enableControllerAttachDetach",
    "protectKernelDefaults",
    "makeIPTablesUtilChains",
    "iptablesMasqueradeBit",
    "iptablesDropBit",
    "featureGates",
    "failSwapOn",
    "memorySwap",
    "containerLogMaxSize",
    "containerLogMaxFiles",
    "containerLogMaxWorkers",
    "containerLogMonitorInterval",
    "configMapAndSecretChangeDetectionStrategy",
    "systemReserved",
    "kubeReserved",
    "reservedSystemCPUs",
    "showHiddenMetricsForVersion",
    "systemReservedCgroup",
    "kubeReservedCgroup",
    "enforceNodeAllocatable",
    "allowedUnsafeSysctls",
    "volumePluginDir",
    "providerID",
    "kernelMemcgNotification",
    "logging",
    "enableSystemLogHandler",
    "enableSystemLogQuery",
    "shutdownGracePeriod",
    "shutdownGracePeriodCriticalPods",
    "shutdownGracePeriodByPodPriority",
    "crashLoopBackOff",
    "reservedMemory",
    "enableProfilingHandler",
    "enableDebugFlagsHandler",
    "seccompDefault",
    "memoryThrottlingFactor",
    "memoryReservationPolicy",
    "registerWithTaints",
    "registerNode",
    "tracing",
    "localStorageCapacityIsolation",
    "containerRuntimeEndpoint",
    "imageServiceEndpoint",
    "failCgroupV1",
    "userNamespaces",
};

constexpr std::string_view kMemoryReservationFields[] = {"numaNode", "limits"};

// Defaults of the modelled scalar fields, to say what an ignored setting leaves in place.
std::optional<std::string> ModelledDefault(std::string_view field) {
  if (field == "cpuManagerPolicy") return "none";
  if (field == "memoryManagerPolicy") return "None";
  if (field == "topologyManagerPolicy") return "none";
  if (field == "topologyManagerScope") return "container";
  if (field == "cpuManagerReconcilePeriod") return "10s";
  if (field == "reservedSystemCPUs") return "";
  return std::nullopt;
}

// Eviction signals the kubelet knows (eviction signalToResource).
constexpr std::string_view kEvictionSignals[] = {
    "memory.available",      "allocatableMemory.available", "nodefs.available",
    "nodefs.inodesFree",     "imagefs.available",           "imagefs.inodesFree",
    "containerfs.available", "containerfs.inodesFree",      "pid.available",
};

// ---------------------------------------------------------------------------------------
// Go-flavoured text helpers.

// fmt %v of map[string]string: map[a:1 b:2] (Go prints maps sorted by key).
std::string GoMapString(const std::map<std::string, std::string>& m) {
  std::string out = "map[";
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ' ';
    first = false;
    out += k + ":" + v;
  }
  return out + "]";
}

// ---------------------------------------------------------------------------------------
// YAML scalars as sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 resolution) turns them into JSON.

enum class ScalarType { kNull, kBool, kInt, kFloat, kString };

bool IsPlain(const YAML::Node& node) { return node.Tag() == "?"; }

bool IsOneOf(std::string_view s, std::initializer_list<std::string_view> set) {
  for (std::string_view x : set) {
    if (s == x) return true;
  }
  return false;
}

bool IsYamlFloat(std::string_view s) {
  // ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
  size_t i = 0;
  auto digits = [&](size_t* n) {
    size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    *n = i - start;
  };
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t n = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    digits(&n);
    if (n == 0) return false;
  } else {
    digits(&n);
    if (n == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits(&n);
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    digits(&n);
    if (n == 0) return false;
  }
  return i == s.size();
}

// Go strconv.ParseInt(s, 0, 64) after go-yaml removed underscores.
std::optional<int64_t> ParseGoInt(std::string_view s) {
  std::string plain;
  for (char c : s) {
    if (c != '_') plain += c;
  }
  std::string_view p = plain;
  bool neg = false;
  if (!p.empty() && (p[0] == '+' || p[0] == '-')) {
    neg = p[0] == '-';
    p.remove_prefix(1);
  }
  int base = 10;
  if (p.size() > 1 && p[0] == '0') {
    if (p[1] == 'x' || p[1] == 'X') {
      base = 16;
      p.remove_prefix(2);
    } else if (p[1] == 'o' || p[1] == 'O') {
      base = 8;
      p.remove_prefix(2);
    } else if (p[1] == 'b' || p[1] == 'B') {
      base = 2;
      p.remove_prefix(2);
    } else {
      base = 8;
      p.remove_prefix(1);
    }
  }
  if (p.empty()) return std::nullopt;
  uint64_t v = 0;
  const uint64_t limit = neg ? (uint64_t{1} << 63) : uint64_t{std::numeric_limits<int64_t>::max()};
  for (char c : p) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0 || d >= base) return std::nullopt;
    if (v > (limit - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

ScalarType ClassifyScalar(const YAML::Node& node) {
  if (!IsPlain(node)) {
    // Quoted or explicitly tagged.
    const std::string& tag = node.Tag();
    if (tag == "tag:yaml.org,2002:int") return ScalarType::kInt;
    if (tag == "tag:yaml.org,2002:bool") return ScalarType::kBool;
    if (tag == "tag:yaml.org,2002:float") return ScalarType::kFloat;
    if (tag == "tag:yaml.org,2002:null") return ScalarType::kNull;
    return ScalarType::kString;
  }
  const std::string& s = node.Scalar();
  if (IsOneOf(s, {"", "~", "null", "Null", "NULL"})) return ScalarType::kNull;
  if (IsOneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n",
                  "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})) {
    return ScalarType::kBool;
  }
  if (IsOneOf(s, {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
                  ".nan", ".NaN", ".NAN"})) {
    return ScalarType::kFloat;
  }
  const char c = s[0];
  if (c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9')) {
    if (ParseGoInt(s).has_value()) return ScalarType::kInt;
    std::string plain;
    for (char ch : s) {
      if (ch != '_') plain += ch;
    }
    if (IsYamlFloat(plain)) return ScalarType::kFloat;
    // Integers beyond int64 (uint64 or more) still resolve to numbers.
    bool all_digits = !plain.empty();
    for (size_t i = (plain[0] == '+' || plain[0] == '-') ? 1 : 0; i < plain.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(plain[i]))) all_digits = false;
    }
    if (all_digits && plain.size() > 1) return ScalarType::kInt;
  }
  return ScalarType::kString;
}

bool YamlBool(const std::string& s) {
  return IsOneOf(s, {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"});
}

// The JSON kind Go's error names for a node.
const char* JsonKind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: return "array";
    case YAML::NodeType::Map: return "object";
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "null";
    case YAML::NodeType::Scalar: break;
  }
  switch (ClassifyScalar(node)) {
    case ScalarType::kNull: return "null";
    case ScalarType::kBool: return "bool";
    case ScalarType::kInt:
    case ScalarType::kFloat: return "number";
    case ScalarType::kString: return "string";
  }
  return "string";
}

bool IsYamlNull(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return true;
  return node.IsScalar() && ClassifyScalar(node) == ScalarType::kNull;
}

// ---------------------------------------------------------------------------------------
// Decoder: walks the document, fills the config, records findings and positions.

class Decoder {
 public:
  Decoder(KubeletConfig* config, std::vector<Finding>* findings, std::string source)
      : config_(config), findings_(findings), source_(std::move(source)) {}

  void Add(Severity severity, const std::string& field, std::string message,
           const YAML::Mark& mark) {
    Finding f;
    f.severity = severity;
    f.field = field;
    f.message = std::move(message);
    f.source = source_;
    if (mark.line >= 0) {
      f.line = mark.line + 1;
      f.column = mark.column + 1;
    }
    findings_->push_back(std::move(f));
  }

  void Remember(const std::string& field, const YAML::Mark& mark) {
    if (mark.line >= 0) config_->positions[field] = {mark.line + 1, mark.column + 1};
  }

  void TypeError(const std::string& field, const std::string& go_path, const YAML::Node& node,
                 const char* go_type, const YAML::Mark& mark) {
    Add(Severity::kError, field,
        fmt::format("json: cannot unmarshal {} into Go struct field {} of type {}",
                    JsonKind(node), go_path, go_type),
        mark);
  }

  // A Go string field. nullopt when null (the field keeps its value) or on a type error.
  std::optional<std::string> String(const YAML::Node& node, const std::string& field,
                                    const std::string& go_path, const YAML::Mark& mark) {
    if (IsYamlNull(node)) return std::nullopt;
    if (!node.IsScalar() || ClassifyScalar(node) != ScalarType::kString) {
      TypeError(field, go_path, node, "string", mark);
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::optional<bool> Bool(const YAML::Node& node, const std::string& field,
                           const std::string& go_path, const YAML::Mark& mark) {
    if (IsYamlNull(node)) return std::nullopt;
    if (!node.IsScalar() || ClassifyScalar(node) != ScalarType::kBool) {
      TypeError(field, go_path, node, "bool", mark);
      return std::nullopt;
    }
    return YamlBool(node.Scalar());
  }

  // Iterates a mapping's entries (last one wins on duplicates, as lenient decoding),
  // warning about duplicate keys. `f(key, value, key_mark)`.
  template <typename F>
  void ForEachEntry(const YAML::Node& map, const std::string& field_prefix, F&& f) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      // yaml-cpp's iterator yields a temporary pair: keep handles, not references.
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      std::string name;
      if (key.IsScalar()) {
        name = key.Scalar();
      } else {
        // sigs.k8s.io/yaml turns the file into JSON first and refuses a key that is not a
        // string, number or boolean ("unsupported map key of type"): the kubelet does not start.
        Add(Severity::kError, field_prefix,
            fmt::format("a mapping key is {}; the kubelet refuses the file (unsupported map "
                        "key: only strings, numbers and booleans can be keys)",
                        key.IsNull() ? "empty (null)" : key.IsMap() ? "a mapping" : "a sequence"),
            key.Mark());
        continue;
      }
      const std::string path = field_prefix.empty() ? name : field_prefix + "." + name;
      if (!seen.insert(name).second) {
        Add(Severity::kWarning, path,
            fmt::format("duplicate field {} (strict decoding error; the kubelet uses the last "
                        "value)",
                        GoQuote(path)),
            key.Mark());
      }
      f(name, value, key.Mark());
    }
  }

  // map[string]string.
  std::optional<std::map<std::string, std::string>> StringMap(const YAML::Node& node,
                                                              const std::string& field,
                                                              const YAML::Mark& mark) {
    if (IsYamlNull(node)) return std::nullopt;
    const std::string go_path = "KubeletConfiguration." + field;
    if (!node.IsMap()) {
      TypeError(field, go_path, node, "map[string]string", mark);
      return std::nullopt;
    }
    std::map<std::string, std::string> out;
    bool ok = true;
    ForEachEntry(node, field, [&](const std::string& key, const YAML::Node& value,
                                  const YAML::Mark& key_mark) {
      const std::string path = field + "." + key;
      Remember(path, key_mark);
      if (IsYamlNull(value)) {
        out[key] = "";
        return;
      }
      auto s = String(value, path, go_path, key_mark);
      if (!s.has_value()) {
        ok = false;
        return;
      }
      out[key] = *s;
    });
    if (!ok) return std::nullopt;
    return out;
  }

  void Decode(const YAML::Node& root);

 private:
  void DecodeField(const std::string& name, const YAML::Node& value, const YAML::Mark& mark);
  void DecodeFeatureGates(const YAML::Node& node, const YAML::Mark& mark);
  void DecodeDuration(const YAML::Node& node, const std::string& field, const YAML::Mark& mark,
                      Duration* out);
  void DecodeInt32(const YAML::Node& node, const std::string& field, const YAML::Mark& mark,
                   int32_t* out);
  void DecodeReservedMemory(const YAML::Node& node, const YAML::Mark& mark);
  void UnknownField(const std::string& name, const YAML::Node& value, const YAML::Mark& mark);

  KubeletConfig* config_;
  std::vector<Finding>* findings_;
  std::string source_;

 public:
  bool eviction_hard_set = false;
  std::optional<std::map<std::string, std::string>> eviction_hard;
};

void Decoder::Decode(const YAML::Node& root) {
  bool have_api_version = false;
  bool have_kind = false;
  ForEachEntry(root, "", [&](const std::string& name, const YAML::Node& value,
                             const YAML::Mark& mark) {
    if (name == "apiVersion") have_api_version = true;
    if (name == "kind") have_kind = true;
    DecodeField(name, value, mark);
  });
  const YAML::Mark top = root.Mark();
  if (!have_kind || config_->kind.empty()) {
    Add(Severity::kError, "kind",
        "Object 'Kind' is missing: the kubelet refuses a config file without `kind: "
        "KubeletConfiguration`",
        top);
  } else if (config_->kind != kKubeletConfigKind) {
    Add(Severity::kError, "kind",
        fmt::format("no kind {} is registered for version {} (expected kind: {})",
                    GoQuote(config_->kind), GoQuote(config_->api_version), kKubeletConfigKind),
        top);
  }
  if (!have_api_version || config_->api_version.empty()) {
    Add(Severity::kError, "apiVersion",
        fmt::format("apiVersion is missing: the kubelet refuses a config file without "
                    "`apiVersion: {}`",
                    kKubeletConfigApiVersion),
        top);
  } else if (config_->api_version != kKubeletConfigApiVersion) {
    Add(Severity::kError, "apiVersion",
        fmt::format("no kind {} is registered for version {} (the kubelet reads {})",
                    GoQuote(config_->kind), GoQuote(config_->api_version),
                    kKubeletConfigApiVersion),
        top);
  }
}

void Decoder::DecodeField(const std::string& name, const YAML::Node& value,
                          const YAML::Mark& mark) {
  Remember(name, mark);
  const std::string go_path = "KubeletConfiguration." + name;
  auto assign_string = [&](std::string* out) {
    if (auto s = String(value, name, go_path, mark)) *out = *s;
  };
  if (name == "apiVersion") {
    assign_string(&config_->api_version);
  } else if (name == "kind") {
    assign_string(&config_->kind);
  } else if (name == "featureGates") {
    DecodeFeatureGates(value, mark);
  } else if (name == "cpuManagerPolicy") {
    assign_string(&config_->cpu_manager_policy);
  } else if (name == "cpuManagerPolicyOptions") {
    if (auto m = StringMap(value, name, mark)) config_->cpu_manager_policy_options = *m;
  } else if (name == "cpuManagerReconcilePeriod") {
    DecodeDuration(value, name, mark, &config_->cpu_manager_reconcile_period);
  } else if (name == "memoryManagerPolicy") {
    assign_string(&config_->memory_manager_policy);
  } else if (name == "reservedMemory") {
    DecodeReservedMemory(value, mark);
  } else if (name == "topologyManagerPolicy") {
    assign_string(&config_->topology_manager_policy);
  } else if (name == "topologyManagerScope") {
    assign_string(&config_->topology_manager_scope);
  } else if (name == "topologyManagerPolicyOptions") {
    if (auto m = StringMap(value, name, mark)) config_->topology_manager_policy_options = *m;
  } else if (name == "reservedSystemCPUs") {
    assign_string(&config_->reserved_system_cpus);
  } else if (name == "kubeReserved") {
    if (auto m = StringMap(value, name, mark)) config_->kube_reserved = *m;
  } else if (name == "systemReserved") {
    if (auto m = StringMap(value, name, mark)) config_->system_reserved = *m;
  } else if (name == "evictionHard") {
    if (IsYamlNull(value)) return;
    eviction_hard_set = true;
    eviction_hard = StringMap(value, name, mark);
  } else if (name == "mergeDefaultEvictionSettings") {
    if (auto b = Bool(value, name, go_path, mark)) config_->merge_default_eviction_settings = *b;
  } else if (name == "maxPods") {
    DecodeInt32(value, name, mark, &config_->max_pods);
  } else if (std::find(std::begin(kKnownFields), std::end(kKnownFields), name) !=
             std::end(kKnownFields)) {
    // A KubeletConfiguration field podtopo does not model: accepted as the kubelet does.
  } else {
    UnknownField(name, value, mark);
  }
}

void Decoder::DecodeFeatureGates(const YAML::Node& node, const YAML::Mark& mark) {
  if (IsYamlNull(node)) return;
  const std::string go_path = "KubeletConfiguration.featureGates";
  if (!node.IsMap()) {
    TypeError("featureGates", go_path, node, "map[string]bool", mark);
    return;
  }
  ForEachEntry(node, "featureGates", [&](const std::string& gate, const YAML::Node& value,
                                         const YAML::Mark& key_mark) {
    const std::string path = "featureGates." + gate;
    Remember(path, key_mark);
    if (IsYamlNull(value)) {
      config_->feature_gates[gate] = false;  // JSON null into a bool map value: false
      return;
    }
    if (auto b = Bool(value, path, go_path, key_mark)) config_->feature_gates[gate] = *b;
  });
}

void Decoder::DecodeDuration(const YAML::Node& node, const std::string& field,
                             const YAML::Mark& mark, Duration* out) {
  if (IsYamlNull(node)) return;
  if (!node.IsScalar() || ClassifyScalar(node) != ScalarType::kString) {
    Add(Severity::kError, field,
        fmt::format("json: cannot unmarshal {} into Go value of type string (a duration such "
                    "as \"10s\" is expected)",
                    JsonKind(node)),
        mark);
    return;
  }
  absl::StatusOr<Duration> d = Duration::Parse(node.Scalar());
  if (!d.ok()) {
    Add(Severity::kError, field, std::string(d.status().message()), mark);
    return;
  }
  *out = *d;
}

void Decoder::DecodeInt32(const YAML::Node& node, const std::string& field,
                          const YAML::Mark& mark, int32_t* out) {
  if (IsYamlNull(node)) return;
  std::optional<int64_t> v;
  const bool number = node.IsScalar() && (ClassifyScalar(node) == ScalarType::kInt ||
                                          ClassifyScalar(node) == ScalarType::kFloat);
  if (node.IsScalar() && ClassifyScalar(node) == ScalarType::kInt) v = ParseGoInt(node.Scalar());
  if (!v.has_value() || *v < std::numeric_limits<int32_t>::min() ||
      *v > std::numeric_limits<int32_t>::max()) {
    Add(Severity::kError, field,
        number ? fmt::format("json: cannot unmarshal number {} into Go struct field "
                             "KubeletConfiguration.{} of type int32",
                             node.Scalar(), field)
               : fmt::format("json: cannot unmarshal {} into Go struct field "
                             "KubeletConfiguration.{} of type int32",
                             JsonKind(node), field),
        mark);
    return;
  }
  *out = static_cast<int32_t>(*v);
}

void Decoder::DecodeReservedMemory(const YAML::Node& node, const YAML::Mark& mark) {
  if (IsYamlNull(node)) return;
  if (!node.IsSequence()) {
    TypeError("reservedMemory", "KubeletConfiguration.reservedMemory", node,
              "[]v1beta1.MemoryReservation", mark);
    return;
  }
  std::vector<MemoryReservation> out;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node item = node[i];
    const std::string prefix = fmt::format("reservedMemory[{}]", i);
    Remember(prefix, item.Mark());
    MemoryReservation r;
    if (IsYamlNull(item)) {
      out.push_back(r);
      continue;
    }
    if (!item.IsMap()) {
      TypeError(prefix, "KubeletConfiguration.reservedMemory", item, "v1beta1.MemoryReservation",
                item.Mark());
      continue;
    }
    ForEachEntry(item, prefix, [&](const std::string& key, const YAML::Node& value,
                                   const YAML::Mark& key_mark) {
      const std::string path = prefix + "." + key;
      Remember(path, key_mark);
      if (key == "numaNode") {
        if (IsYamlNull(value)) return;
        std::optional<int64_t> v;
        if (value.IsScalar() && ClassifyScalar(value) == ScalarType::kInt) {
          v = ParseGoInt(value.Scalar());
        } else if (value.IsScalar() && ClassifyScalar(value) == ScalarType::kFloat) {
          // A whole float (1.0) decodes into an int32 field; a fraction does not.
          double d = std::strtod(value.Scalar().c_str(), nullptr);
          if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
            v = static_cast<int64_t>(d);
          }
        }
        if (!v.has_value() || *v < std::numeric_limits<int32_t>::min() ||
            *v > std::numeric_limits<int32_t>::max()) {
          const bool number = value.IsScalar() && (ClassifyScalar(value) == ScalarType::kInt ||
                                                   ClassifyScalar(value) == ScalarType::kFloat);
          Add(Severity::kError, path,
              number ? fmt::format("json: cannot unmarshal number {} into Go struct field "
                                   "MemoryReservation.reservedMemory.numaNode of type int32",
                                   value.Scalar())
                     : fmt::format("json: cannot unmarshal {} into Go struct field "
                                   "MemoryReservation.reservedMemory.numaNode of type int32",
                                   JsonKind(value)),
              key_mark);
          return;
        }
        r.numa_node = static_cast<int32_t>(*v);
      } else if (key == "limits") {
        if (IsYamlNull(value)) return;
        if (!value.IsMap()) {
          TypeError(path, "MemoryReservation.reservedMemory.limits", value, "v1.ResourceList",
                    key_mark);
          return;
        }
        ForEachEntry(value, path, [&](const std::string& resource, const YAML::Node& q,
                                      const YAML::Mark& q_mark) {
          const std::string qpath = path + "." + resource;
          Remember(qpath, q_mark);
          // resource.Quantity.UnmarshalJSON: a string or a number; null is zero.
          if (IsYamlNull(q)) {
            r.limits[resource] = Quantity();
            return;
          }
          if (!q.IsScalar()) {
            Add(Severity::kError, qpath,
                fmt::format("json: cannot unmarshal {} into Go struct field "
                            "MemoryReservation.reservedMemory.limits of type resource.Quantity",
                            JsonKind(q)),
                q_mark);
            return;
          }
          std::string text = q.Scalar();
          if (IsPlain(q) && ClassifyScalar(q) == ScalarType::kInt) {
            if (auto iv = ParseGoInt(text)) text = std::to_string(*iv);
          }
          absl::StatusOr<Quantity> parsed = Quantity::ParseTrimmed(text);
          if (!parsed.ok()) {
            Add(Severity::kError, qpath, std::string(parsed.status().message()), q_mark);
            return;
          }
          r.limits[resource] = *parsed;
        });
      } else {
        std::string message = fmt::format("unknown field {}", GoQuote(path));
        if (auto s = SuggestName(key, kMemoryReservationFields)) {
          message += fmt::format(" (did you mean {}?)", *s);
        }
        Add(Severity::kWarning, path,
            message + ": the kubelet logs it (strict decoding error) and ignores the field",
            key_mark);
      }
    });
    out.push_back(std::move(r));
  }
  config_->reserved_memory = std::move(out);
}

void Decoder::UnknownField(const std::string& name, const YAML::Node& value,
                           const YAML::Mark& mark) {
  std::optional<std::string> suggestion;
  std::string hint;
  // A nested spelling of a flat field: `memoryManager: {policy: Static}` is
  // memoryManagerPolicy: Static.
  if (value.IsMap()) {
    for (auto it = value.begin(); it != value.end() && !suggestion; ++it) {
      const YAML::Node child_key = it->first;
      const YAML::Node child_value = it->second;
      if (!child_key.IsScalar() || child_key.Scalar().empty()) continue;
      std::string child = child_key.Scalar();
      child[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(child[0])));
      const std::string flat = name + child;
      for (std::string_view known : kKnownFields) {
        if (LowerNoDash(known) == LowerNoDash(flat)) {
          suggestion = std::string(known);
          if (child_value.IsScalar()) {
            hint = fmt::format("; write `{}: {}`", known, child_value.Scalar());
          }
          break;
        }
      }
    }
  }
  if (!suggestion) suggestion = SuggestName(name, kKnownFields);
  std::string message = fmt::format("unknown field {}", GoQuote(name));
  if (suggestion) {
    message += fmt::format(" (did you mean {}?)", *suggestion);
  }
  message += ": the kubelet logs it (strict decoding error) and ignores the field";
  if (suggestion) {
    if (auto def = ModelledDefault(*suggestion); def.has_value() && !def->empty()) {
      message += fmt::format(", so {} keeps its default {}", *suggestion, GoQuote(*def));
    }
  }
  message += hint;
  Add(Severity::kWarning, name, std::move(message), mark);
}

// ---------------------------------------------------------------------------------------
// Validation helpers.

struct Issue {
  Severity severity;
  std::string field;
  std::string message;
};

// pkg/kubelet/cm/cpumanager/policy_options.go.
struct CpuOption {
  std::string_view name;
  GateStage maturity;
};
constexpr CpuOption kCpuOptions[] = {
    {"full-pcpus-only", GateStage::kGA},
    {"distribute-cpus-across-numa", GateStage::kBeta},
    {"align-by-socket", GateStage::kAlpha},
    {"distribute-cpus-across-cores", GateStage::kAlpha},
    {"strict-cpu-reservation", GateStage::kBeta},
    {"prefer-align-cpus-by-uncorecache", GateStage::kBeta},
};

// NewStaticPolicyOptions, walking options in name order. Returns the enabled options.
std::optional<std::set<std::string>> CheckCpuOptions(const KubeletConfig& c,
                                                     std::vector<Issue>* issues) {
  std::set<std::string> on;
  for (const auto& [name, value] : c.cpu_manager_policy_options) {
    const std::string field = "cpuManagerPolicyOptions." + name;
    const CpuOption* option = nullptr;
    for (const CpuOption& o : kCpuOptions) {
      if (o.name == name) option = &o;
    }
    if (option == nullptr) {
      std::vector<std::string_view> names;
      for (const CpuOption& o : kCpuOptions) names.push_back(o.name);
      std::string message = fmt::format("unknown CPU Manager Policy option: {}", GoQuote(name));
      if (auto s = SuggestName(name, names)) message += fmt::format(" (did you mean {}?)", *s);
      issues->push_back({Severity::kError, field, message});
      return std::nullopt;
    }
    if (option->maturity == GateStage::kAlpha && !c.FeatureEnabled(kCPUManagerPolicyAlphaOptions)) {
      issues->push_back({Severity::kError, field,
                         fmt::format("CPU Manager Policy Alpha-level Options not enabled, but "
                                     "option {} provided",
                                     GoQuote(name))});
      return std::nullopt;
    }
    if (option->maturity == GateStage::kBeta && !c.FeatureEnabled(kCPUManagerPolicyBetaOptions)) {
      issues->push_back({Severity::kError, field,
                         fmt::format("CPU Manager Policy Beta-level Options not enabled, but "
                                     "option {} provided",
                                     GoQuote(name))});
      return std::nullopt;
    }
    absl::StatusOr<bool> b = GoParseBool(value);
    if (!b.ok()) {
      issues->push_back({Severity::kError, field,
                         fmt::format("bad value for option {}: {}", GoQuote(name),
                                     std::string(b.status().message()))});
      return std::nullopt;
    }
    if (*b) on.insert(name);
  }
  static constexpr std::pair<std::string_view, std::string_view> kExclusive[] = {
      {"full-pcpus-only", "distribute-cpus-across-cores"},
      {"distribute-cpus-across-numa", "distribute-cpus-across-cores"},
      {"prefer-align-cpus-by-uncorecache", "distribute-cpus-across-cores"},
      {"prefer-align-cpus-by-uncorecache", "distribute-cpus-across-numa"},
  };
  for (const auto& [a, b] : kExclusive) {
    if (on.contains(std::string(a)) && on.contains(std::string(b))) {
      issues->push_back({Severity::kError, "cpuManagerPolicyOptions",
                         fmt::format("static policy options {} and {} can not be used at the "
                                     "same time",
                                     a, b)});
      return std::nullopt;
    }
  }
  return on;
}

// topologymanager NewPolicyOptions, walking options in name order.
void CheckTopologyOptions(const KubeletConfig& c, std::vector<Issue>* issues) {
  static constexpr std::string_view kNames[] = {"prefer-closest-numa-nodes",
                                                "max-allowable-numa-nodes"};
  for (const auto& [name, value] : c.topology_manager_policy_options) {
    const std::string field = "topologyManagerPolicyOptions." + name;
    if (name == "prefer-closest-numa-nodes") {
      if (absl::StatusOr<bool> b = GoParseBool(value); !b.ok()) {
        issues->push_back({Severity::kError, field,
                           fmt::format("bad value for option {}: {}", GoQuote(name),
                                       std::string(b.status().message()))});
        return;
      }
    } else if (name == "max-allowable-numa-nodes") {
      absl::StatusOr<int64_t> v = GoAtoi(value);
      if (!v.ok()) {
        issues->push_back({Severity::kError, field,
                           fmt::format("unable to convert policy option to integer {}: {}",
                                       GoQuote(name), std::string(v.status().message()))});
        return;
      }
      if (*v < 8) {
        issues->push_back({Severity::kError, field,
                           fmt::format("the minimum value of {} should not be less than 8",
                                       GoQuote(name))});
        return;
      }
      if (*v > 8) {
        issues->push_back({Severity::kInfo, field,
                           fmt::format("max-allowable-numa-nodes {} is above the default 8; the "
                                       "kubelet warns that this is not recommended",
                                       *v)});
      }
    } else {
      std::string message =
          fmt::format("unknown Topology Manager Policy option: {}", GoQuote(name));
      if (auto s = SuggestName(name, kNames)) message += fmt::format(" (did you mean {}?)", *s);
      issues->push_back({Severity::kError, field, message});
      return;
    }
  }
}

// parseResourceList (kubelet server.go).
absl::StatusOr<ResourceList> ParseResourceList(const std::map<std::string, std::string>& m) {
  ResourceList out;
  for (const auto& [name, value] : m) {
    if (name != "cpu" && name != "memory" && name != "ephemeral-storage" && name != "pid") {
      return absl::InvalidArgumentError(fmt::format("cannot reserve {} resource", GoQuote(name)));
    }
    absl::StatusOr<Quantity> q = Quantity::Parse(value);
    if (!q.ok()) {
      return absl::InvalidArgumentError(fmt::format("failed to parse quantity {} for {} resource: {}",
                                                    GoQuote(value), GoQuote(name),
                                                    std::string(q.status().message())));
    }
    if (q->Sign() < 0) {
      return absl::InvalidArgumentError(
          fmt::format("resource quantity for {} cannot be negative: {}", GoQuote(name), value));
    }
    out[name] = *q;
  }
  return out;
}

bool IsHugePages(const std::string& name) { return name.rfind("hugepages-", 0) == 0; }

}  // namespace

// ---------------------------------------------------------------------------------------
// Public API.

const char* SeverityName(Finding::Severity severity) {
  switch (severity) {
    case Finding::Severity::kError: return "error";
    case Finding::Severity::kWarning: return "warning";
    case Finding::Severity::kInfo: return "info";
  }
  return "?";
}

std::string Finding::ToString() const {
  std::string out;
  if (!source.empty()) {
    out += source;
    if (line > 0) out += fmt::format(":{}:{}", line, column);
    out += ": ";
  }
  out += SeverityName(severity);
  out += ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

bool HasErrors(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == Severity::kError; });
}

absl::Status ErrorsToStatus(const std::vector<Finding>& findings) {
  std::string text;
  for (const Finding& f : findings) {
    if (f.severity != Severity::kError) continue;
    if (!text.empty()) text += '\n';
    text += f.ToString();
  }
  if (text.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(text);
}

std::span<const std::string_view> KnownKubeletConfigFields() { return kKnownFields; }

std::map<std::string, std::string> KubeletConfig::DefaultEvictionHard() {
  return {{"memory.available", "100Mi"},
          {"nodefs.available", "10%"},
          {"nodefs.inodesFree", "5%"},
          {"imagefs.available", "15%"}};
}

const kubelet::KubeletVersion* KubeletConfig::Version() const {
  return kubelet_version.empty() ? nullptr : kubelet::FindKubeletVersion(kubelet_version);
}

kubelet::Behavior KubeletConfig::VersionBehavior() const {
  const kubelet::KubeletVersion* v = Version();
  return v != nullptr ? v->behavior : kubelet::Behavior{};
}

bool KubeletConfig::FeatureEnabled(std::string_view gate) const {
  const FeatureGateSpec* spec = FindFeatureGate(gate, Version());
  if (spec == nullptr) return false;
  if (auto it = feature_gates.find(std::string(gate)); it != feature_gates.end()) {
    // A locked gate cannot move from its default (Validate reports the attempt).
    return spec->locked ? spec->default_value : it->second;
  }
  if (spec->stage == GateStage::kAlpha) {
    if (auto it = feature_gates.find("AllAlpha"); it != feature_gates.end()) return it->second;
  }
  if (spec->stage == GateStage::kBeta) {
    if (auto it = feature_gates.find("AllBeta"); it != feature_gates.end()) return it->second;
  }
  return spec->default_value;
}

std::vector<KubeletConfig::GateDependencyProblem> KubeletConfig::GateDependencyProblems() const {
  std::vector<GateDependencyProblem> problems;
  for (const FeatureGateSpec& g : KnownFeatureGates()) {
    std::span<const std::string_view> deps = FeatureGateDependencies(g.name);
    if (deps.empty() || !FeatureEnabled(g.name)) continue;
    GateDependencyProblem p{std::string(g.name), {}};
    for (std::string_view dep : deps) {
      if (!FeatureEnabled(dep)) p.disabled.emplace_back(dep);
    }
    if (!p.disabled.empty()) problems.push_back(std::move(p));
  }
  return problems;
}

absl::StatusOr<CpuSet> KubeletConfig::ReservedSystemCpuSet() const {
  return CpuSet::Parse(reserved_system_cpus);
}

absl::StatusOr<ResourceList> KubeletConfig::KubeReserved() const {
  absl::StatusOr<ResourceList> list = ParseResourceList(kube_reserved);
  if (!list.ok()) return list;
  absl::StatusOr<CpuSet> cpus = ReservedSystemCpuSet();
  if (cpus.ok() && !cpus->IsEmpty()) list->erase("cpu");
  return list;
}

absl::StatusOr<ResourceList> KubeletConfig::SystemReserved() const {
  absl::StatusOr<ResourceList> list = ParseResourceList(system_reserved);
  if (!list.ok()) return list;
  absl::StatusOr<CpuSet> cpus = ReservedSystemCpuSet();
  if (cpus.ok() && !cpus->IsEmpty()) (*list)["cpu"] = Quantity::FromInt(cpus->Size());
  return list;
}

absl::StatusOr<std::vector<EvictionThreshold>> KubeletConfig::HardEvictionThresholds() const {
  std::vector<EvictionThreshold> out;
  for (const auto& [signal, value] : eviction_hard) {
    if (std::find(std::begin(kEvictionSignals), std::end(kEvictionSignals), signal) ==
        std::end(kEvictionSignals)) {
      return absl::InvalidArgumentError(fmt::format("unsupported eviction signal {}", signal));
    }
    EvictionThreshold t;
    t.signal = signal;
    if (!value.empty() && value.back() == '%') {
      if (value == "0%" || value == "100%") continue;
      const std::string number = value.substr(0, value.find_last_not_of('%') + 1);
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(number.c_str(), &end);
      if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v) ||
          std::isspace(static_cast<unsigned char>(number[0]))) {
        return absl::InvalidArgumentError(fmt::format(
            "strconv.ParseFloat: parsing {}: invalid syntax", GoQuote(number)));
      }
      const float percentage = static_cast<float>(v) / 100;
      if (percentage < 0) {
        return absl::InvalidArgumentError(fmt::format(
            "eviction percentage threshold {} must be >= 0%: {}", signal, value));
      }
      if (percentage > 1) {
        return absl::InvalidArgumentError(fmt::format(
            "eviction percentage threshold {} must be <= 100%: {}", signal, value));
      }
      t.percentage = percentage;
    } else {
      absl::StatusOr<Quantity> q = Quantity::Parse(value);
      if (!q.ok()) return q.status();
      if (q->Sign() <= 0) {
        return absl::InvalidArgumentError(
            fmt::format("eviction threshold {} must be positive: {}", signal, q->String()));
      }
      t.quantity = *q;
    }
    out.push_back(std::move(t));
  }
  return out;
}

ResourceList KubeletConfig::NodeAllocatableReservation(const ResourceList& capacity) const {
  ResourceList system = SystemReserved().value_or(ResourceList{});
  ResourceList kube = KubeReserved().value_or(ResourceList{});
  std::vector<EvictionThreshold> thresholds =
      HardEvictionThresholds().value_or(std::vector<EvictionThreshold>{});
  // hardEvictionReservation.
  ResourceList eviction;
  for (const EvictionThreshold& t : thresholds) {
    std::string resource;
    if (t.signal == "memory.available") {
      resource = "memory";
    } else if (t.signal == "nodefs.available") {
      resource = "ephemeral-storage";
    } else {
      continue;
    }
    if (t.quantity.has_value()) {
      eviction[resource] = *t.quantity;
    } else {
      auto cap = capacity.find(resource);
      const int64_t cap_value = cap == capacity.end() ? 0 : cap->second.Value();
      const double v = static_cast<double>(cap_value) * static_cast<double>(t.percentage);
      const int64_t bytes = v >= 9.2e18 ? std::numeric_limits<int64_t>::max()
                                        : static_cast<int64_t>(v);
      eviction[resource] = Quantity::FromInt(bytes, Quantity::Format::kBinarySI);
    }
  }
  ResourceList result;
  for (const auto& [name, unused] : capacity) {
    Quantity value;  // resource.NewQuantity(0, DecimalSI)
    for (const ResourceList* list : {&system, &kube, &eviction}) {
      if (auto it = list->find(name); it != list->end()) value.Add(it->second);
    }
    if (!value.IsZero()) result[name] = value;
  }
  return result;
}

int KubeletConfig::NumReservedCpus() const {
  Quantity cpu;
  for (const absl::StatusOr<ResourceList>& list : {SystemReserved(), KubeReserved()}) {
    if (!list.ok()) continue;
    if (auto it = list->find("cpu"); it != list->end()) cpu.Add(it->second);
  }
  const int64_t milli = cpu.MilliValue();
  if (milli <= 0) return 0;
  const int64_t n = milli / 1000 + (milli % 1000 != 0 ? 1 : 0);
  return n > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max()
                                             : static_cast<int>(n);
}

std::vector<Finding> KubeletConfig::Validate(const ResourceList* capacity) const {
  std::vector<Issue> issues;
  auto error = [&](std::string field, std::string message) {
    issues.push_back({Severity::kError, std::move(field), std::move(message)});
  };

  // Feature gates (featureGate.SetFromMap and dependency validation).
  std::vector<std::string_view> gate_names;
  for (const FeatureGateSpec& g : KnownFeatureGates()) gate_names.push_back(g.name);
  for (const auto& [gate, value] : feature_gates) {
    const std::string field = "featureGates." + gate;
    const FeatureGateSpec* spec = FindFeatureGate(gate, Version());
    if (spec == nullptr) {
      std::string message = fmt::format("unrecognized feature gate: {}", gate);
      if (Version() != nullptr && FindFeatureGate(gate) != nullptr) {
        message += fmt::format(" (kubelet {} does not have this gate)", Version()->name);
      }
      if (auto s = SuggestName(gate, gate_names)) message += fmt::format(" (did you mean {}?)", *s);
      error(field, message);
      continue;
    }
    if (spec->locked && spec->default_value != value) {
      error(field, fmt::format("cannot set feature gate {} to {}, feature is locked to {}", gate,
                               value ? "true" : "false", spec->default_value ? "true" : "false"));
      continue;
    }
    if (spec->stage == GateStage::kGA || spec->stage == GateStage::kDeprecated) {
      issues.push_back({Severity::kWarning, field,
                        fmt::format("Setting {} feature gate {}={}. It will be removed in a "
                                    "future release.",
                                    spec->stage == GateStage::kGA ? "GA" : "deprecated", gate,
                                    value ? "true" : "false")});
    }
  }
  // featureGate's dependency check: one error per enabled gate with a disabled dependency.
  // Located at the gate when the file sets it, else at the first disabled dependency the
  // file sets (`PodLevelResources: false` is the line to change).
  for (const GateDependencyProblem& p : GateDependencyProblems()) {
    std::string field = "featureGates." + p.gate;
    if (!feature_gates.contains(p.gate)) {
      for (const std::string& dep : p.disabled) {
        if (feature_gates.contains(dep)) {
          field = "featureGates." + dep;
          break;
        }
      }
    }
    error(std::move(field), fmt::format("{} is enabled, but depends on features that are "
                                        "disabled: [{}]",
                                        p.gate, fmt::join(p.disabled, " ")));
  }

  // ValidateKubeletConfiguration.
  static constexpr std::string_view kTmPolicies[] = {"none", "best-effort", "restricted",
                                                     "single-numa-node"};
  if (std::find(std::begin(kTmPolicies), std::end(kTmPolicies), topology_manager_policy) ==
      std::end(kTmPolicies)) {
    std::string message = fmt::format(
        "invalid configuration: topologyManagerPolicy (--topology-manager-policy) {} must be one "
        "of: [\"none\" \"best-effort\" \"restricted\" \"single-numa-node\"]",
        GoQuote(topology_manager_policy));
    error("topologyManagerPolicy", message);
  }
  if (topology_manager_scope != "container" && topology_manager_scope != "pod") {
    error("topologyManagerScope",
          fmt::format("invalid configuration: topologyManagerScope (--topology-manager-scope) {} "
                      "must be one of: \"container\", or \"pod\"",
                      GoQuote(topology_manager_scope)));
  }
  absl::StatusOr<CpuSet> reserved_cpus = ReservedSystemCpuSet();
  if (!reserved_cpus.ok()) {
    error("reservedSystemCPUs",
          fmt::format("invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) "
                      "{}, error: {}",
                      reserved_system_cpus, std::string(reserved_cpus.status().message())));
  }
  // validateReservedMemoryConfiguration.
  {
    std::set<std::pair<int32_t, std::string>> seen;
    for (size_t i = 0; i < reserved_memory.size(); ++i) {
      const MemoryReservation& r = reserved_memory[i];
      for (const auto& [type, q] : r.limits) {
        const std::string field = fmt::format("reservedMemory[{}].limits.{}", i, type);
        if (type != "memory" && !IsHugePages(type)) {
          error(field, fmt::format("invalid configuration: the limit type {} for NUMA node {} is "
                                   "not supported, only [memory hugepages-<HugePageSize>] is "
                                   "accepted",
                                   GoQuote(type), r.numa_node));
        }
        if (q.IsZero()) {
          error(field, fmt::format("invalid configuration: reserved memory may not be zero for "
                                   "NUMA node {} and resource {}",
                                   r.numa_node, GoQuote(type)));
        }
        if (!seen.insert({r.numa_node, type}).second) {
          error(field, fmt::format("invalid configuration: the reserved memory has a duplicate "
                                   "value for NUMA node {} and resource {}",
                                   r.numa_node, GoQuote(type)));
        }
      }
    }
  }
  if (max_pods < 0) {
    error("maxPods", fmt::format("invalid configuration: maxPods (--max-pods) {} must not be a "
                                 "negative number",
                                 max_pods));
  }
  if (cpu_manager_reconcile_period.nanos() < 0) {
    issues.push_back({Severity::kWarning, "cpuManagerReconcilePeriod",
                      fmt::format("negative period {}: the CPU Manager reconcile loop would run "
                                  "without pause",
                                  cpu_manager_reconcile_period.String())});
  }

  // Kubelet start-up: reservations and eviction thresholds (server.go, eviction).
  absl::StatusOr<ResourceList> kube = KubeReserved();
  if (!kube.ok()) error("kubeReserved", std::string(kube.status().message()));
  absl::StatusOr<ResourceList> system = SystemReserved();
  if (!system.ok()) error("systemReserved", std::string(system.status().message()));
  absl::StatusOr<std::vector<EvictionThreshold>> thresholds = HardEvictionThresholds();
  if (!thresholds.ok()) error("evictionHard", std::string(thresholds.status().message()));
  const bool reservations_ok = kube.ok() && system.ok() && thresholds.ok() && reserved_cpus.ok();

  ResourceList assumed_capacity;
  if (capacity == nullptr) {
    assumed_capacity = {{"cpu", Quantity()}, {"memory", Quantity()}};
  }
  const ResourceList& cap = capacity != nullptr ? *capacity : assumed_capacity;
  const ResourceList reservation = NodeAllocatableReservation(cap);

  // Topology Manager (created first by the container manager).
  if (topology_manager_policy != "none") {
    CheckTopologyOptions(*this, &issues);
  } else if (!topology_manager_policy_options.empty()) {
    issues.push_back({Severity::kInfo, "topologyManagerPolicyOptions",
                      "ignored: with topologyManagerPolicy none the Topology Manager does not "
                      "read its options"});
  }

  // CPU Manager.
  if (cpu_manager_policy == "none") {
    if (!cpu_manager_policy_options.empty()) {
      error("cpuManagerPolicyOptions",
            fmt::format("None policy: received unsupported options={}",
                        GoMapString(cpu_manager_policy_options)));
    }
  } else if (cpu_manager_policy == "static") {
    if (reservations_ok) {
      auto it = reservation.find("cpu");
      if (it == reservation.end()) {
        error("cpuManagerPolicy",
              "[cpumanager] unable to determine reserved CPU resources for static policy (the "
              "static policy requires systemreserved.cpu + kubereserved.cpu to be greater than "
              "zero: set systemReserved.cpu, kubeReserved.cpu or reservedSystemCPUs)");
      } else if (it->second.IsZero()) {
        error("cpuManagerPolicy",
              "[cpumanager] the static policy requires systemreserved.cpu + kubereserved.cpu to "
              "be greater than zero");
      }
    }
    std::optional<std::set<std::string>> options = CheckCpuOptions(*this, &issues);
    if (options.has_value() && options->contains("align-by-socket") &&
        topology_manager_policy == "single-numa-node") {
      error("cpuManagerPolicyOptions.align-by-socket",
            "Topolgy manager single-numa-node policy is incompatible with CPUManager "
            "align-by-socket policy option");
    }
  } else {
    error("cpuManagerPolicy", fmt::format("unknown policy: \"{}\"", cpu_manager_policy));
  }

  // Memory Manager.
  if (memory_manager_policy == "Static") {
    const bool percent_memory_eviction =
        thresholds.ok() &&
        std::any_of(thresholds->begin(), thresholds->end(), [](const EvictionThreshold& t) {
          return t.signal == "memory.available" && !t.quantity.has_value();
        });
    if (capacity == nullptr && percent_memory_eviction) {
      issues.push_back({Severity::kInfo, "reservedMemory",
                        "not checked against Node Allocatable: evictionHard memory.available is "
                        "a percentage of the node's memory, which is not known here"});
    } else if (reservations_ok) {
      // getSystemReservedMemory: every type of reservedMemory, and the memory / hugepages-*
      // types of the reservation, must sum up exactly.
      std::set<std::string> types;
      for (const MemoryReservation& r : reserved_memory) {
        for (const auto& [type, q] : r.limits) types.insert(type);
      }
      for (const auto& [type, q] : reservation) {
        if (type == "memory" || IsHugePages(type)) types.insert(type);
      }
      bool sums_ok = true;
      for (const std::string& type : types) {
        Quantity total;
        for (const MemoryReservation& r : reserved_memory) {
          if (auto it = r.limits.find(type); it != r.limits.end()) total.Add(it->second);
        }
        Quantity expected;
        if (auto it = reservation.find(type); it != reservation.end()) expected = it->second;
        if (total.Cmp(expected) != 0) {
          sums_ok = false;
          error("reservedMemory",
                fmt::format("the total amount {} of type {} is not equal to the value {} "
                            "determined by Node Allocatable feature",
                            GoQuote(total.String()), GoQuote(type), GoQuote(expected.String())));
        }
      }
      if (sums_ok) {
        bool convertible = true;
        for (size_t i = 0; i < reserved_memory.size() && convertible; ++i) {
          for (const auto& [type, q] : reserved_memory[i].limits) {
            if (!q.AsInt64().has_value()) {
              error(fmt::format("reservedMemory[{}].limits.{}", i, type),
                    "could not covert a variable of type Quantity to int64");
              convertible = false;
              break;
            }
          }
        }
        Quantity memory;
        for (const MemoryReservation& r : reserved_memory) {
          if (auto it = r.limits.find("memory"); it != r.limits.end()) memory.Add(it->second);
        }
        if (convertible && memory.Sign() <= 0) {
          error("reservedMemory", "[memorymanager] you should specify the system reserved memory");
        }
      }
    }
  } else if (memory_manager_policy == "BestEffort") {
    error("memoryManagerPolicy", "policy \"BestEffort\" is not available for platform \"linux\"");
  } else if (memory_manager_policy != "None") {
    error("memoryManagerPolicy", fmt::format("unknown policy: {}", GoQuote(memory_manager_policy)));
  }

  std::vector<Finding> findings;
  for (Issue& issue : issues) {
    Finding f;
    f.severity = issue.severity;
    f.field = issue.field;
    f.message = std::move(issue.message);
    f.source = source;
    // The most specific remembered position: the field, else its parents, else the field
    // that caused the check (reservedMemory sums are required by memoryManagerPolicy).
    std::string key = f.field;
    if (positions.find(key) == positions.end()) {
      if (key == "reservedMemory" && !positions.contains("reservedMemory")) {
        key = "memoryManagerPolicy";
      } else if (key.rfind("cpuManagerPolicyOptions", 0) == 0 &&
                 !positions.contains("cpuManagerPolicyOptions")) {
        key = "cpuManagerPolicy";
      }
    }
    while (!key.empty()) {
      if (auto it = positions.find(key); it != positions.end()) {
        f.line = it->second.first;
        f.column = it->second.second;
        break;
      }
      const size_t cut = key.find_last_of(".[");
      if (cut == std::string::npos || cut == 0) break;
      key.resize(cut);
    }
    findings.push_back(std::move(f));
  }
  return findings;
}

bool KubeletConfig::SameSettings(const KubeletConfig& o) const {
  return api_version == o.api_version && kind == o.kind && feature_gates == o.feature_gates &&
         cpu_manager_policy == o.cpu_manager_policy &&
         cpu_manager_policy_options == o.cpu_manager_policy_options &&
         cpu_manager_reconcile_period == o.cpu_manager_reconcile_period &&
         memory_manager_policy == o.memory_manager_policy && reserved_memory == o.reserved_memory &&
         topology_manager_policy == o.topology_manager_policy &&
         topology_manager_scope == o.topology_manager_scope &&
         topology_manager_policy_options == o.topology_manager_policy_options &&
         reserved_system_cpus == o.reserved_system_cpus && kube_reserved == o.kube_reserved &&
         system_reserved == o.system_reserved && eviction_hard == o.eviction_hard &&
         merge_default_eviction_settings == o.merge_default_eviction_settings &&
         max_pods == o.max_pods &&
         kubelet_version == o.kubelet_version;
}

std::string KubeletConfig::ToYaml() const {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "apiVersion" << YAML::Value << YAML::DoubleQuoted << api_version;
  out << YAML::Key << "kind" << YAML::Value << YAML::DoubleQuoted << kind;
  if (!feature_gates.empty()) {
    out << YAML::Key << "featureGates" << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : feature_gates) out << YAML::Key << k << YAML::Value << v;
    out << YAML::EndMap;
  }
  auto string_map = [&](const char* name, const std::map<std::string, std::string>& m) {
    if (m.empty()) return;
    out << YAML::Key << name << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : m) {
      out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << v;
    }
    out << YAML::EndMap;
  };
  auto string_field = [&](const char* name, const std::string& value) {
    out << YAML::Key << name << YAML::Value << YAML::DoubleQuoted << value;
  };
  string_field("cpuManagerPolicy", cpu_manager_policy);
  string_map("cpuManagerPolicyOptions", cpu_manager_policy_options);
  string_field("cpuManagerReconcilePeriod", cpu_manager_reconcile_period.String());
  string_field("memoryManagerPolicy", memory_manager_policy);
  string_field("topologyManagerPolicy", topology_manager_policy);
  string_field("topologyManagerScope", topology_manager_scope);
  string_map("topologyManagerPolicyOptions", topology_manager_policy_options);
  if (!reserved_system_cpus.empty()) {
    out << YAML::Key << "reservedSystemCPUs" << YAML::Value << YAML::DoubleQuoted
        << reserved_system_cpus;
  }
  string_map("systemReserved", system_reserved);
  string_map("kubeReserved", kube_reserved);
  // An empty evictionHard is a setting of its own: written as {}, it reads back as "no hard
  // eviction thresholds"; left out, it would read back as the kubelet's defaults.
  if (eviction_hard.empty()) {
    out << YAML::Key << "evictionHard" << YAML::Value << YAML::Flow << YAML::BeginMap
        << YAML::EndMap;
  } else {
    string_map("evictionHard", eviction_hard);
  }
  if (merge_default_eviction_settings) {
    out << YAML::Key << "mergeDefaultEvictionSettings" << YAML::Value << true;
  }
  if (max_pods != 110) out << YAML::Key << "maxPods" << YAML::Value << max_pods;
  if (!reserved_memory.empty()) {
    out << YAML::Key << "reservedMemory" << YAML::Value << YAML::BeginSeq;
    for (const MemoryReservation& r : reserved_memory) {
      out << YAML::BeginMap << YAML::Key << "numaNode" << YAML::Value << r.numa_node;
      out << YAML::Key << "limits" << YAML::Value << YAML::BeginMap;
      for (const auto& [k, q] : r.limits) {
        out << YAML::Key << k << YAML::Value << YAML::DoubleQuoted << q.String();
      }
      out << YAML::EndMap << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

ParsedKubeletConfig ParseKubeletConfig(std::string_view yaml, const std::string& source) {
  ParsedKubeletConfig result;
  result.config.source = source;
  // Until a document says otherwise, TypeMeta is unset.
  result.config.api_version.clear();
  result.config.kind.clear();
  std::vector<Finding>& findings = result.findings;
  auto add = [&](Severity severity, std::string field, std::string message, int line, int col) {
    Finding f;
    f.severity = severity;
    f.field = std::move(field);
    f.message = std::move(message);
    f.source = source;
    f.line = line;
    f.column = col;
    findings.push_back(std::move(f));
  };

  // yaml-cpp 0.7's LoadAll loops forever (allocating) on a stray ',' outside a flow
  // collection, so documents are counted with the event parser (ScanYamlDocuments), which
  // stops when it makes no progress, and only the first document (all the kubelet reads) is
  // loaded.
  constexpr size_t kMaxDocuments = 1000;
  YamlDocumentScan scan;
  YAML::Node first;
  const std::string text(yaml);
  auto syntax_error = [&](const YAML::Mark& mark, const std::string& message) {
    add(Severity::kError, "", "YAML syntax error: " + message, mark.line >= 0 ? mark.line + 1 : 0,
        mark.line >= 0 ? mark.column + 1 : 0);
  };
  // go-yaml (sigs.k8s.io/yaml) refuses a file that is not UTF-8 ("yaml: invalid leading UTF-8
  // octet"); yaml-cpp would take the bytes, and its emitter writes them back as U+FFFD.
  if (std::optional<InvalidUtf8> bad = FindInvalidUtf8(text)) {
    add(Severity::kError, "",
        fmt::format("YAML syntax error: invalid UTF-8 (byte 0x{:02x}); the kubelet refuses the "
                    "file",
                    bad->byte),
        bad->line, bad->column);
    return result;
  }
  try {
    scan = ScanYamlDocuments(text, kMaxDocuments);
    if (scan.error.has_value()) {
      syntax_error(scan.error->mark, scan.error->message);
      return result;
    }
    first = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    syntax_error(e.mark, e.msg);
    return result;
  } catch (const std::exception& e) {
    add(Severity::kError, "", std::string("cannot read YAML: ") + e.what(), 0, 0);
    return result;
  }
  if (scan.stuck) {
    const char c = scan.stuck_at.pos >= 0 && static_cast<size_t>(scan.stuck_at.pos) < text.size()
                       ? text[static_cast<size_t>(scan.stuck_at.pos)]
                       : ' ';
    const bool fatal = scan.documents <= 2 && (IsYamlNull(first) || !first.IsMap());
    add(fatal ? Severity::kError : Severity::kWarning, "",
        fmt::format("YAML syntax error: unexpected {} here{}", GoQuote(std::string(1, c)),
                    fatal ? "" : " (after the first document, which is all the kubelet reads)"),
        scan.stuck_at.line + 1, scan.stuck_at.column + 1);
    if (fatal) return result;
  }
  if (scan.documents == 0 || IsYamlNull(first)) {
    add(Severity::kError, "",
        "the file is empty: the kubelet refuses it (Object 'Kind' is missing)", 0, 0);
    return result;
  }
  if (scan.documents > 1 && !scan.stuck) {
    add(Severity::kWarning, "",
        fmt::format("the file holds {} YAML documents; the kubelet reads only the first",
                    scan.documents),
        scan.second_document.line >= 0 ? scan.second_document.line + 1 : 0, 1);
  }
  const YAML::Node& root = first;
  if (!root.IsMap()) {
    const YAML::Mark m = root.Mark();
    add(Severity::kError, "",
        fmt::format("expected a KubeletConfiguration mapping, found {} (json: cannot unmarshal "
                    "{} into Go value of type v1beta1.KubeletConfiguration)",
                    root.IsSequence() ? "a sequence" : "a scalar", JsonKind(root)),
        m.line >= 0 ? m.line + 1 : 0, m.line >= 0 ? m.column + 1 : 0);
    return result;
  }
  try {
    Decoder decoder(&result.config, &findings, source);
    decoder.Decode(root);
    // SetDefaults_KubeletConfiguration: empty policies and a zero period take the defaults.
    KubeletConfig& c = result.config;
    if (c.cpu_manager_policy.empty()) c.cpu_manager_policy = "none";
    if (c.memory_manager_policy.empty()) c.memory_manager_policy = "None";
    if (c.topology_manager_policy.empty()) c.topology_manager_policy = "none";
    if (c.topology_manager_scope.empty()) c.topology_manager_scope = "container";
    if (c.cpu_manager_reconcile_period.nanos() == 0) {
      c.cpu_manager_reconcile_period = Duration::Seconds(10);
    }
    // SetDefaults_KubeletConfiguration for evictionHard.
    if (decoder.eviction_hard_set) {
      if (decoder.eviction_hard.has_value()) {
        std::map<std::string, std::string> hard = *decoder.eviction_hard;
        if (result.config.merge_default_eviction_settings) {
          for (const auto& [k, v] : KubeletConfig::DefaultEvictionHard()) hard.emplace(k, v);
        }
        result.config.eviction_hard = std::move(hard);
      }
    }
  } catch (const YAML::Exception& e) {
    add(Severity::kError, "", "cannot decode YAML: " + e.msg,
        e.mark.line >= 0 ? e.mark.line + 1 : 0, e.mark.line >= 0 ? e.mark.column + 1 : 0);
  }
  return result;
}

absl::StatusOr<ParsedKubeletConfig> LoadKubeletConfig(const std::string& path) {
  absl::StatusOr<std::string> text = ReadSmallFile(path, 4 << 20);
  if (!text.ok()) return text.status();
  std::string name = path;
  return ParseKubeletConfig(*text, name);
}

KubeletConfig SeedDefault() {
  KubeletConfig c;
  c.feature_gates = {{kPodLevelResources, true}, {kPodLevelResourceManagers, true}};
  c.cpu_manager_policy = "static";
  c.cpu_manager_reconcile_period = Duration::Seconds(5);
  c.memory_manager_policy = "Static";
  c.topology_manager_policy = "single-numa-node";
  c.topology_manager_scope = "pod";
  c.system_reserved = {{"cpu", "1"}, {"memory", "1Gi"}};
  c.eviction_hard = {{"memory.available", "100Mi"}};
  MemoryReservation r;
  r.numa_node = 0;
  r.limits["memory"] = Quantity::Parse("1124Mi").value();
  c.reserved_memory = {r};
  c.source = "podtopo default configuration";
  return c;
}

}  // namespace podtopo::config
