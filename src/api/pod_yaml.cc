#include "api/pod_yaml.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "util/file.h"
#include "util/yaml_guard.h"
#include "yaml-cpp/yaml.h"

namespace podtopo {
namespace {

// ---------------------------------------------------------------------------------------
// Deterministic uids: RFC 4122 version-5 UUIDs (SHA-1 of namespace uuid + name).

uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

std::array<uint8_t, 20> Sha1(const std::string& data) {
  uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
  std::string msg = data;
  const uint64_t bit_length = static_cast<uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back('\0');
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bit_length >> (8 * i)) & 0xff));
  for (size_t offset = 0; offset < msg.size(); offset += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + offset + 4 * i);
      w[i] = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    }
    for (int i = 16; i < 80; ++i) w[i] = Rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20) {
        f = (b & c) | (~b & d);
        k = 0x5A827999u;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ED9EBA1u;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8F1BBCDCu;
      } else {
        f = b ^ c ^ d;
        k = 0xCA62C1D6u;
      }
      const uint32_t t = Rotl(a, 5) + f + e + k + w[i];
      e = d;
      d = c;
      c = Rotl(b, 30);
      b = a;
      a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
  }
  std::array<uint8_t, 20> out;
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(h[i] >> (24 - 8 * j));
  }
  return out;
}

// The RFC 4122 URL namespace, 6ba7b811-9dad-11d1-80b4-00c04fd430c8.
constexpr uint8_t kUrlNamespace[16] = {0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1,
                                       0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};

// ---------------------------------------------------------------------------------------
// Field paths and problems.

std::string Join(const std::string& path, const std::string& field) {
  return path.empty() ? field : path + "." + field;
}

std::string Index(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

// `requests.cpu`, but `limits[example.com/gpu]` for names that hold dots or slashes.
std::string ResourceKey(const std::string& path, const std::string& name) {
  bool simple = !name.empty();
  for (char ch : name) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '-' || ch == '_')) {
      simple = false;
    }
  }
  return simple ? path + "." + name : path + "[" + name + "]";
}

// The problems found in one document, each "<field path>: <what is wrong>".
class Problems {
 public:
  void Add(const std::string& path, const std::string& message) {
    list_.push_back(path.empty() ? message : path + ": " + message);
  }
  bool empty() const { return list_.empty(); }
  const std::vector<std::string>& list() const { return list_; }

 private:
  std::vector<std::string> list_;
};

// ---------------------------------------------------------------------------------------
// Reading YAML nodes with the types Kubernetes' JSON decoding expects.

enum class PlainType { kString, kNumber, kBool, kNull };

bool IsDigits(const std::string& s, size_t from, bool allow_underscore) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    const char ch = s[i];
    if (!(ch >= '0' && ch <= '9') && !(allow_underscore && ch == '_')) return false;
  }
  return true;
}

bool LooksLikeNumber(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  const std::string body = s.substr(i);
  if (body == ".inf" || body == ".Inf" || body == ".INF") return true;
  if (i == 0 && (s == ".nan" || s == ".NaN" || s == ".NAN")) return true;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'o' || body[1] == 'b')) {
    for (size_t j = 2; j < body.size(); ++j) {
      if (!std::isxdigit(static_cast<unsigned char>(body[j])) && body[j] != '_') return false;
    }
    return true;
  }
  // [digits][.digits][e[+-]digits], at least one digit before the exponent.
  size_t j = 0;
  size_t digits = 0;
  while (j < body.size() && ((body[j] >= '0' && body[j] <= '9') || body[j] == '_')) {
    digits += body[j] != '_';
    ++j;
  }
  if (j < body.size() && body[j] == '.') {
    ++j;
    while (j < body.size() && body[j] >= '0' && body[j] <= '9') {
      ++digits;
      ++j;
    }
  }
  if (digits == 0) return false;
  if (j < body.size() && (body[j] == 'e' || body[j] == 'E')) {
    ++j;
    if (j < body.size() && (body[j] == '+' || body[j] == '-')) ++j;
    return IsDigits(body, j, false);
  }
  return j == body.size();
}

// How sigs.k8s.io/yaml (go-yaml v2, YAML 1.1) resolves an unquoted scalar.
PlainType ClassifyPlain(const std::string& s) {
  static const std::set<std::string> kBools = {
      "y",   "Y",   "yes",  "Yes",  "YES",  "n",     "N",     "no",    "No",  "NO",  "true",
      "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"};
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return PlainType::kNull;
  if (kBools.count(s)) return PlainType::kBool;
  if (LooksLikeNumber(s)) return PlainType::kNumber;
  return PlainType::kString;
}

bool IsPlain(const YAML::Node& node) { return node.Tag() == "?"; }

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "null";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  if (IsPlain(node)) {
    switch (ClassifyPlain(node.Scalar())) {
      case PlainType::kNumber:
        return fmt::format("the number {}", node.Scalar());
      case PlainType::kBool:
        return fmt::format("the boolean {}", node.Scalar());
      case PlainType::kNull:
        return "null";
      case PlainType::kString:
        break;
    }
  }
  return "a string";
}

// The keys of one YAML map, in order, first occurrence of each.
class Fields {
 public:
  const YAML::Node* Get(const std::string& key) const {
    for (const auto& [k, v] : items_) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  const std::vector<std::pair<std::string, YAML::Node>>& items() const { return items_; }
  void Add(std::string key, YAML::Node value) { items_.emplace_back(std::move(key), value); }

 private:
  std::vector<std::pair<std::string, YAML::Node>> items_;
};

// True when `node` is a map (filled into `fields`); false when absent or null (no problem)
// or of another type (a problem).
bool ReadMap(const YAML::Node* node, const std::string& path, Problems& problems,
             Fields* fields) {
  if (node == nullptr || !node->IsDefined() || node->IsNull()) return false;
  if (!node->IsMap()) {
    problems.Add(path, fmt::format("expected a map, got {}", Describe(*node)));
    return false;
  }
  std::set<std::string> seen;
  for (YAML::const_iterator it = node->begin(); it != node->end(); ++it) {
    // Copies: yaml-cpp's iterator yields a temporary pair of node handles.
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    if (!key.IsScalar()) {
      problems.Add(path, fmt::format("map keys must be strings, got {}", Describe(key)));
      continue;
    }
    if (!seen.insert(key.Scalar()).second) {
      problems.Add(path, fmt::format("duplicate key \"{}\"", key.Scalar()));
      continue;
    }
    fields->Add(key.Scalar(), value);
  }
  return true;
}

// A string field; nullopt when absent, null or of another type (a problem).
std::optional<std::string> ReadString(const YAML::Node* node, const std::string& path,
                                      Problems& problems) {
  if (node == nullptr || !node->IsDefined() || node->IsNull()) return std::nullopt;
  if (node->IsScalar()) {
    if (IsPlain(*node) && ClassifyPlain(node->Scalar()) != PlainType::kString) {
      problems.Add(path, fmt::format("expected a string, got {} (quote it: \"{}\")",
                                     Describe(*node), node->Scalar()));
      return std::nullopt;
    }
    return node->Scalar();
  }
  problems.Add(path, fmt::format("expected a string, got {}", Describe(*node)));
  return std::nullopt;
}

std::vector<std::string> ReadStringList(const YAML::Node* node, const std::string& path,
                                        Problems& problems) {
  std::vector<std::string> out;
  if (node == nullptr || !node->IsDefined() || node->IsNull()) return out;
  if (!node->IsSequence()) {
    problems.Add(path, fmt::format("expected a list of strings, got {}", Describe(*node)));
    return out;
  }
  for (size_t i = 0; i < node->size(); ++i) {
    const YAML::Node item = (*node)[i];
    out.push_back(ReadString(&item, Index(path, i), problems).value_or(""));
  }
  return out;
}

std::map<std::string, std::string> ReadStringMap(const YAML::Node* node, const std::string& path,
                                                 Problems& problems) {
  std::map<std::string, std::string> out;
  Fields fields;
  if (!ReadMap(node, path, problems, &fields)) return out;
  for (const auto& [key, value] : fields.items()) {
    out[key] = ReadString(&value, Join(path, key), problems).value_or("");
  }
  return out;
}

// The decimal text kubectl sends for an unquoted number: go-yaml v2 resolves plain scalars
// with strconv.ParseInt(base 0) after dropping '_', so `010` is 8, `0x1F` 31, `0b11` 3,
// `+2` 2 and `1_000` 1000. Floats and anything else come back unchanged (minus '_').
std::string GoYamlPlainNumber(const std::string& text) {
  std::string plain;
  for (char ch : text) {
    if (ch != '_') plain.push_back(ch);
  }
  const bool negative = !plain.empty() && plain[0] == '-';
  const size_t sign = (!plain.empty() && (plain[0] == '-' || plain[0] == '+')) ? 1 : 0;
  std::string digits = plain.substr(sign);
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.erase(0, 2);
  } else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'b' || digits[1] == 'B')) {
    base = 2;
    digits.erase(0, 2);
  } else if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'o' || digits[1] == 'O')) {
    base = 8;
    digits.erase(0, 2);
  } else if (digits.size() > 1 && digits[0] == '0') {
    base = 8;
    digits.erase(0, 1);
  }
  if (digits.empty()) return plain;
  unsigned __int128 value = 0;
  for (char ch : digits) {
    int d;
    if (ch >= '0' && ch <= '9') {
      d = ch - '0';
    } else if (ch >= 'a' && ch <= 'f') {
      d = ch - 'a' + 10;
    } else if (ch >= 'A' && ch <= 'F') {
      d = ch - 'A' + 10;
    } else {
      return plain;  // a float or not a number: Go does not read it as an integer either
    }
    if (d >= base) return plain;  // e.g. "08": ParseInt fails, ParseFloat reads 8 (same text)
    value = value * base + d;
    if (value > (static_cast<unsigned __int128>(1) << 64)) return plain;  // beyond int64
  }
  std::string decimal;
  do {
    decimal.insert(decimal.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  } while (value != 0);
  return (negative ? "-" : "") + decimal;
}

// A quantity given as a string or a number; null reads as zero, as Go's decoder does.
std::optional<Quantity> ReadQuantity(const YAML::Node& node, const std::string& path,
                                     Problems& problems) {
  if (!node.IsDefined() || node.IsNull()) return Quantity();
  if (!node.IsScalar()) {
    problems.Add(path, fmt::format("expected a quantity (a string such as \"500m\" or a number), "
                                   "got {}",
                                   Describe(node)));
    return std::nullopt;
  }
  const std::string text =
      IsPlain(node) && ClassifyPlain(node.Scalar()) == PlainType::kNumber
          ? GoYamlPlainNumber(node.Scalar())
          : node.Scalar();
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  if (!q.ok()) {
    std::string message(q.status().message());
    // `invalid quantity "2x": quantities must match ...` -> `"2x": quantities must match ...`
    constexpr std::string_view kPrefix = "invalid quantity ";
    if (message.rfind(kPrefix, 0) == 0) message.erase(0, kPrefix.size());
    const std::string quoted = "\"" + text + "\"";
    if (message.find(quoted) != std::string::npos) {
      problems.Add(path, message);
    } else {
      problems.Add(path, fmt::format("{}: {}", quoted, message));
    }
    return std::nullopt;
  }
  return *q;
}

ResourceList ReadResourceList(const YAML::Node* node, const std::string& path,
                              Problems& problems) {
  ResourceList out;
  Fields fields;
  if (!ReadMap(node, path, problems, &fields)) return out;
  for (const auto& [name, value] : fields.items()) {
    const std::string field = ResourceKey(path, name);
    if (name.empty()) {
      problems.Add(path, "resource names must not be empty");
      continue;
    }
    if (std::optional<Quantity> q = ReadQuantity(value, field, problems)) out.emplace(name, *q);
  }
  return out;
}

// spec.resources or a container's resources. False when absent or null.
bool ReadRequirements(const YAML::Node* node, const std::string& path, Problems& problems,
                      ResourceRequirements* out) {
  Fields fields;
  if (!ReadMap(node, path, problems, &fields)) return false;
  out->requests = ReadResourceList(fields.Get("requests"), Join(path, "requests"), problems);
  out->limits = ReadResourceList(fields.Get("limits"), Join(path, "limits"), problems);
  return true;
}

// ---------------------------------------------------------------------------------------
// Names, as the API server validates them.

bool IsLowerAlnum(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); }
bool IsAlnum(char ch) { return IsLowerAlnum(ch) || (ch >= 'A' && ch <= 'Z'); }

bool IsDns1123Label(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char ch : s) {
    if (!IsLowerAlnum(ch) && ch != '-') return false;
  }
  return true;
}

bool IsDns1123Subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string part = s.substr(start, dot == std::string::npos ? std::string::npos
                                                                       : dot - start);
    if (part.empty() || !IsLowerAlnum(part.front()) || !IsLowerAlnum(part.back())) return false;
    for (char ch : part) {
      if (!IsLowerAlnum(ch) && ch != '-') return false;
    }
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

// The name part of a qualified name (and a label value when non-empty).
bool IsQualifiedNamePart(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char ch : s) {
    if (!IsAlnum(ch) && ch != '-' && ch != '_' && ch != '.') return false;
  }
  return true;
}

bool IsQualifiedName(const std::string& s) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos) return IsQualifiedNamePart(s);
  if (s.find('/', slash + 1) != std::string::npos) return false;
  return IsDns1123Subdomain(s.substr(0, slash)) && IsQualifiedNamePart(s.substr(slash + 1));
}

constexpr char kSubdomainMessage[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', must start and end with an alphanumeric character and be at most 253 characters "
    "(e.g. 'example.com')";
constexpr char kLabelMessage[] =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "must start and end with an alphanumeric character and be at most 63 characters "
    "(e.g. 'my-name', or '123-abc')";
constexpr char kQualifiedNameMessage[] =
    "name part must consist of alphanumeric characters, '-', '_' or '.', must start and end "
    "with an alphanumeric character and be at most 63 characters, with an optional DNS "
    "subdomain prefix and '/' (e.g. 'example.com/MyName')";

// ---------------------------------------------------------------------------------------
// Resource names and quantities (pkg/apis/core/validation validateResourceRequirements).

bool IsNativeResource(const std::string& name) {
  return name.find('/') == std::string::npos || name.find("kubernetes.io/") != std::string::npos;
}

bool IsOvercommitAllowed(const std::string& name) {
  return IsNativeResource(name) && !IsHugePageResourceName(name);
}

bool IsExtendedResource(const std::string& name) {
  return !IsNativeResource(name) && name.rfind("requests.", 0) != 0;
}

// Empty when valid, else the problem.
std::string ContainerResourceNameProblem(const std::string& name) {
  if (!IsQualifiedName(name)) return kQualifiedNameMessage;
  if (name.find('/') == std::string::npos) {
    if (name == kResourceCpu || name == kResourceMemory || name == "ephemeral-storage" ||
        IsHugePageResourceName(name)) {
      return "";
    }
    return "must be a standard resource for containers (cpu, memory, ephemeral-storage, "
           "hugepages-<size>) or a fully qualified extended resource name "
           "(e.g. 'example.com/gpu')";
  }
  return "";
}

bool IsHugePageValueDivisible(const std::string& name, const Quantity& quantity) {
  absl::StatusOr<Quantity> page = Quantity::Parse(name.substr(sizeof(kHugePagesPrefix) - 1));
  if (!page.ok() || page->Sign() <= 0 || page->MilliValue() % 1000 != 0) return false;
  return quantity.Value() % page->Value() == 0;
}

void ValidateRequirements(const ResourceRequirements& r, const std::string& path, bool pod_level,
                          Problems& problems) {
  bool cpu_or_memory = false;
  bool hugepages = false;
  std::set<std::string> bad_names;
  for (const auto& [side, list] : {std::pair<const char*, const ResourceList*>{"limits", &r.limits},
                                   {"requests", &r.requests}}) {
    for (const auto& [name, q] : *list) {
      const std::string field = ResourceKey(Join(path, side), name);
      if (pod_level) {
        if (!IsSupportedPodLevelResource(name)) {
          problems.Add(field, fmt::format("Unsupported value: \"{}\": supported values: \"cpu\", "
                                          "\"hugepages-\", \"memory\"",
                                          name));
          bad_names.insert(name);
          continue;
        }
      } else if (std::string problem = ContainerResourceNameProblem(name); !problem.empty()) {
        problems.Add(field, fmt::format("Invalid value: \"{}\": {}", name, problem));
        bad_names.insert(name);
        continue;
      }
      if (q.Sign() < 0) {
        problems.Add(field, fmt::format("Invalid value: \"{}\": must be greater than or equal to 0",
                                        q.String()));
      }
      if (IsExtendedResource(name) && q.MilliValue() % 1000 != 0) {
        problems.Add(field, fmt::format("Invalid value: \"{}\": must be an integer", q.String()));
      }
      if (IsHugePageResourceName(name)) {
        hugepages = true;
        if (!IsHugePageValueDivisible(name, q)) {
          problems.Add(field, fmt::format("Invalid value: \"{}\": {} is not positive integer "
                                          "multiple of {}",
                                          q.String(), q.String(), name));
        }
      }
      if (name == kResourceCpu || name == kResourceMemory) cpu_or_memory = true;
    }
  }
  for (const auto& [name, request] : r.requests) {
    if (bad_names.count(name)) continue;
    const std::string field = ResourceKey(Join(path, "requests"), name);
    auto limit = r.limits.find(name);
    if (limit != r.limits.end()) {
      if (!IsOvercommitAllowed(name) && request.Cmp(limit->second) != 0) {
        problems.Add(field, fmt::format("Invalid value: \"{}\": must be equal to {} limit of {}",
                                        request.String(), name, limit->second.String()));
      } else if (request.Cmp(limit->second) > 0) {
        problems.Add(field, fmt::format("Invalid value: \"{}\": must be less than or equal to {} "
                                        "limit of {}",
                                        request.String(), name, limit->second.String()));
      }
    } else if (!IsOvercommitAllowed(name)) {
      problems.Add(ResourceKey(Join(path, "limits"), name),
                   fmt::format("Required value: Limit must be set for non overcommitable "
                               "resources (set it equal to the request, {})",
                               request.String()));
    }
  }
  if (hugepages && !cpu_or_memory) {
    problems.Add(path, "Forbidden: HugePages require cpu or memory");
  }
}

// ---------------------------------------------------------------------------------------
// Defaulting (pkg/apis/core/v1/defaults.go SetDefaults_Pod, SetDefaults_ResourceList).

void DefaultContainerRequests(Container& c) {
  for (const auto& [name, q] : c.resources.limits) c.resources.requests.emplace(name, q);
}

bool AllContainersHaveLimit(const Pod& pod, const std::string& name) {
  for (const Container* c : pod.InitAndAppContainers()) {
    if (!c->resources.limits.count(name)) return false;
  }
  return true;
}

void DefaultPodLevelResources(Pod& pod) {
  if (!pod.resources.has_value()) return;
  ResourceRequirements& res = *pod.resources;
  // defaultHugePagePodLimits
  if (!res.limits.empty() || !res.requests.empty()) {
    for (const auto& [name, q] : AggregateContainerLimits(pod)) {
      if (!IsHugePageResourceName(name) || res.requests.count(name)) continue;
      res.limits.emplace(name, q);
    }
  }
  // defaultPodRequests
  if (!res.limits.empty()) {
    for (const auto& [name, q] : AggregateContainerRequests(pod)) {
      if (IsSupportedPodLevelResource(name) && IsOvercommitAllowed(name)) {
        res.requests.emplace(name, q);
      }
    }
    for (const auto& [name, q] : res.limits) {
      if (IsSupportedPodLevelResource(name)) res.requests.emplace(name, q);
    }
  }
  // defaultPodLimits (PodLevelResourcesFixUpdateDefaulting)
  if (!pod.HasPodLevelLimits() && pod.HasPodLevelRequests()) {
    for (const auto& [name, q] : AggregateContainerLimits(pod)) {
      if (res.limits.count(name) || !IsSupportedPodLevelResource(name) ||
          !IsOvercommitAllowed(name) || !AllContainersHaveLimit(pod, name)) {
        continue;
      }
      res.limits.emplace(name, q);
    }
  }
}

// SetDefaults_ResourceList: positive quantities are rounded up to milli precision.
void RoundUpToMilli(ResourceList& list) {
  for (auto& [name, q] : list) {
    if (q.Sign() <= 0) continue;
    const int64_t milli = q.MilliValue();
    if (milli == std::numeric_limits<int64_t>::max()) continue;  // saturated: leave it
    Quantity rounded = Quantity::FromMilli(milli);
    if (rounded.Cmp(q) != 0) q = rounded;
  }
}

void ApplyDefaults(Pod& pod) {
  for (Container& c : pod.init_containers) DefaultContainerRequests(c);
  for (Container& c : pod.containers) DefaultContainerRequests(c);
  DefaultPodLevelResources(pod);
  for (auto* list : {&pod.init_containers, &pod.containers, &pod.ephemeral_containers}) {
    for (Container& c : *list) {
      RoundUpToMilli(c.resources.requests);
      RoundUpToMilli(c.resources.limits);
    }
  }
  if (pod.resources.has_value()) {
    RoundUpToMilli(pod.resources->requests);
    RoundUpToMilli(pod.resources->limits);
  }
}

// ---------------------------------------------------------------------------------------
// Parsing one Pod object.

const char* ContainerListField(ContainerKind kind) {
  switch (kind) {
    case ContainerKind::kInit:
    case ContainerKind::kSidecar:
      return "initContainers";
    case ContainerKind::kApp:
      return "containers";
    case ContainerKind::kEphemeral:
      return "ephemeralContainers";
  }
  return "containers";
}

Container ReadContainer(const YAML::Node& node, const std::string& path, ContainerKind kind,
                        Problems& problems) {
  Container c;
  c.kind = kind;
  Fields fields;
  if (!ReadMap(&node, path, problems, &fields)) {
    if (!node.IsDefined() || node.IsNull()) problems.Add(path, "expected a container, got null");
    return c;
  }
  c.name = ReadString(fields.Get("name"), Join(path, "name"), problems).value_or("");
  c.image = ReadString(fields.Get("image"), Join(path, "image"), problems).value_or("");
  c.command = ReadStringList(fields.Get("command"), Join(path, "command"), problems);
  c.args = ReadStringList(fields.Get("args"), Join(path, "args"), problems);
  const std::string resources_path = Join(path, "resources");
  const bool has_resources =
      ReadRequirements(fields.Get("resources"), resources_path, problems, &c.resources);
  const std::string policy_path = Join(path, "restartPolicy");
  if (std::optional<std::string> policy =
          ReadString(fields.Get("restartPolicy"), policy_path, problems)) {
    if (kind == ContainerKind::kEphemeral) {
      problems.Add(policy_path, "Forbidden: cannot be set for an Ephemeral Container");
    } else if (*policy == "Always" || *policy == "OnFailure" || *policy == "Never") {
      if (kind == ContainerKind::kInit && *policy == "Always") c.kind = ContainerKind::kSidecar;
    } else {
      problems.Add(policy_path,
                   fmt::format("Unsupported value: \"{}\": supported values: \"Always\"{}",
                               *policy,
                               kind == ContainerKind::kInit
                                   ? " (a sidecar), \"Never\", \"OnFailure\""
                                   : ", \"Never\", \"OnFailure\""));
    }
  }
  if (kind == ContainerKind::kEphemeral && has_resources &&
      (!c.resources.requests.empty() || !c.resources.limits.empty())) {
    problems.Add(resources_path, "Forbidden: cannot be set for an Ephemeral Container");
  }
  return c;
}

std::vector<Container> ReadContainers(const YAML::Node* node, const std::string& path,
                                      ContainerKind kind, Problems& problems) {
  std::vector<Container> out;
  if (node == nullptr || !node->IsDefined() || node->IsNull()) return out;
  if (!node->IsSequence()) {
    problems.Add(path, fmt::format("expected a list of containers, got {}", Describe(*node)));
    return out;
  }
  for (size_t i = 0; i < node->size(); ++i) {
    out.push_back(ReadContainer((*node)[i], Index(path, i), kind, problems));
  }
  return out;
}

void ValidatePod(const Pod& pod, const std::string& base, bool windows, Problems& problems) {
  const std::string spec = Join(base, "spec");
  if (pod.containers.empty()) problems.Add(Join(spec, "containers"), "Required value");

  // Container names: required, DNS labels, unique across all three lists.
  std::map<std::string, std::string> seen;  // name -> path of its first use
  for (ContainerKind list_kind :
       {ContainerKind::kInit, ContainerKind::kApp, ContainerKind::kEphemeral}) {
    const std::vector<Container>& list = list_kind == ContainerKind::kInit ? pod.init_containers
                                         : list_kind == ContainerKind::kApp
                                             ? pod.containers
                                             : pod.ephemeral_containers;
    const std::string list_path = Join(spec, ContainerListField(list_kind));
    for (size_t i = 0; i < list.size(); ++i) {
      const Container& c = list[i];
      const std::string path = Index(list_path, i);
      const std::string name_path = Join(path, "name");
      if (c.name.empty()) {
        problems.Add(name_path, "Required value");
      } else if (!IsDns1123Label(c.name)) {
        problems.Add(name_path, fmt::format("Invalid value: \"{}\": {}", c.name, kLabelMessage));
      } else if (auto [it, inserted] = seen.emplace(c.name, name_path); !inserted) {
        problems.Add(name_path,
                     fmt::format("Duplicate value: \"{}\" (also {})", c.name, it->second));
      }
      if (list_kind != ContainerKind::kEphemeral) {
        ValidateRequirements(c.resources, Join(path, "resources"), /*pod_level=*/false,
                             problems);
      }
    }
  }

  if (!pod.resources.has_value()) return;
  const std::string resources_path = Join(spec, "resources");
  if (windows) {
    problems.Add(resources_path, "Forbidden: may not be set for a windows pod");
    return;
  }
  const ResourceRequirements& res = *pod.resources;
  ValidateRequirements(res, resources_path, /*pod_level=*/true, problems);

  // validatePodResourceConsistency.
  for (const auto& [name, aggregate] : AggregateContainerRequests(pod)) {
    auto pod_request = res.requests.find(name);
    if (pod_request == res.requests.end() || !IsSupportedPodLevelResource(name)) continue;
    if (aggregate.Cmp(pod_request->second) > 0) {
      problems.Add(ResourceKey(Join(resources_path, "requests"), name),
                   fmt::format("Invalid value: \"{}\": must be greater than or equal to aggregate "
                               "container requests of {}",
                               pod_request->second.String(), aggregate.String()));
    }
  }
  for (const auto& [name, aggregate] : AggregateContainerLimits(pod)) {
    if (!IsHugePageResourceName(name)) continue;
    auto pod_limit = res.limits.find(name);
    if (pod_limit == res.limits.end()) continue;
    if (aggregate.Cmp(pod_limit->second) > 0) {
      problems.Add(ResourceKey(Join(resources_path, "limits"), name),
                   fmt::format("Invalid value: \"{}\": must be greater than or equal to aggregate "
                               "container limits of {}",
                               pod_limit->second.String(), aggregate.String()));
    }
  }
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    for (const auto& [name, limit] : pod.containers[i].resources.limits) {
      if (IsHugePageResourceName(name)) continue;
      auto pod_limit = res.limits.find(name);
      if (pod_limit == res.limits.end()) continue;
      if (limit.Cmp(pod_limit->second) > 0) {
        problems.Add(
            ResourceKey(Join(Index(Join(spec, "containers"), i), "resources.limits"), name),
            fmt::format("Invalid value: \"{}\": must be less than or equal to pod limits of {}",
                        limit.String(), pod_limit->second.String()));
      }
    }
  }
}

// Reads a Pod object whose apiVersion/kind were checked. `base` is "" or "items[3]".
Pod ReadPod(const Fields& object, const std::string& base, Problems& problems) {
  Pod pod;
  const std::string metadata_path = Join(base, "metadata");
  Fields metadata;
  if (!ReadMap(object.Get("metadata"), metadata_path, problems, &metadata)) {
    problems.Add(Join(metadata_path, "name"), "Required value");
  } else {
    const std::string name_path = Join(metadata_path, "name");
    const YAML::Node* name_node = metadata.Get("name");
    std::optional<std::string> name = ReadString(name_node, name_path, problems);
    const bool wrong_type = name_node != nullptr && name_node->IsDefined() &&
                            !name_node->IsNull() && !name.has_value();
    if (wrong_type) {
      // ReadString reported it.
    } else if (!name.has_value() || name->empty()) {
      problems.Add(name_path, metadata.Get("generateName") != nullptr
                                  ? "Required value (generateName is not supported: podtopo "
                                    "needs a stable pod name)"
                                  : "Required value");
    } else if (!IsDns1123Subdomain(*name)) {
      problems.Add(name_path, fmt::format("Invalid value: \"{}\": {}", *name, kSubdomainMessage));
    } else {
      pod.name = *name;
    }
    const std::string ns_path = Join(metadata_path, "namespace");
    if (std::optional<std::string> ns = ReadString(metadata.Get("namespace"), ns_path, problems);
        ns.has_value() && !ns->empty()) {
      if (!IsDns1123Label(*ns)) {
        problems.Add(ns_path, fmt::format("Invalid value: \"{}\": {}", *ns, kLabelMessage));
      } else {
        pod.namespace_name = *ns;
      }
    }
    pod.uid = ReadString(metadata.Get("uid"), Join(metadata_path, "uid"), problems).value_or("");
    const std::string labels_path = Join(metadata_path, "labels");
    pod.labels = ReadStringMap(metadata.Get("labels"), labels_path, problems);
    for (const auto& [key, value] : pod.labels) {
      if (!IsQualifiedName(key)) {
        problems.Add(ResourceKey(labels_path, key),
                     fmt::format("Invalid value: \"{}\": {}", key, kQualifiedNameMessage));
      }
      if (!value.empty() && !IsQualifiedNamePart(value)) {
        problems.Add(ResourceKey(labels_path, key),
                     fmt::format("Invalid value: \"{}\": a label value must be empty or consist "
                                 "of alphanumeric characters, '-', '_' or '.', start and end "
                                 "with an alphanumeric character and be at most 63 characters",
                                 value));
      }
    }
  }

  const std::string spec_path = Join(base, "spec");
  Fields spec;
  if (!ReadMap(object.Get("spec"), spec_path, problems, &spec)) {
    problems.Add(Join(spec_path, "containers"), "Required value");
    return pod;
  }
  ResourceRequirements pod_resources;
  if (ReadRequirements(spec.Get("resources"), Join(spec_path, "resources"), problems,
                       &pod_resources)) {
    pod.resources = std::move(pod_resources);
  }
  pod.node_name =
      ReadString(spec.Get("nodeName"), Join(spec_path, "nodeName"), problems).value_or("");
  bool windows = false;
  Fields os;
  if (ReadMap(spec.Get("os"), Join(spec_path, "os"), problems, &os)) {
    windows = ReadString(os.Get("name"), Join(spec_path, "os.name"), problems).value_or("") ==
              "windows";
  }
  pod.init_containers = ReadContainers(spec.Get("initContainers"),
                                       Join(spec_path, "initContainers"), ContainerKind::kInit,
                                       problems);
  pod.containers = ReadContainers(spec.Get("containers"), Join(spec_path, "containers"),
                                  ContainerKind::kApp, problems);
  pod.ephemeral_containers =
      ReadContainers(spec.Get("ephemeralContainers"), Join(spec_path, "ephemeralContainers"),
                     ContainerKind::kEphemeral, problems);
  if (!problems.empty()) return pod;  // type problems: do not default or validate half a pod

  ApplyDefaults(pod);
  ValidatePod(pod, base, windows, problems);
  if (pod.uid.empty() && !pod.name.empty()) {
    pod.uid = DeterministicPodUid(pod.namespace_name, pod.name);
  }
  return pod;
}

struct ParsedPod {
  Pod pod;
  size_t document = 0;            // 1-based
  std::optional<size_t> item;     // index in a List's items
};

std::string ObjectKind(const Fields& object, const std::string& base, Problems& problems,
                       std::string* api_version) {
  *api_version = ReadString(object.Get("apiVersion"), Join(base, "apiVersion"), problems)
                     .value_or("");
  return ReadString(object.Get("kind"), Join(base, "kind"), problems).value_or("");
}

// Checks apiVersion/kind of a Pod object; false (with a problem) otherwise.
bool CheckPodKind(const std::string& api_version, const std::string& kind,
                  const std::string& base, Problems& problems) {
  if (kind.empty()) {
    problems.Add(Join(base, "kind"), "Required value (podtopo reads apiVersion: v1, kind: Pod "
                                     "objects or a kind: List of them)");
    return false;
  }
  if (kind != "Pod") {
    problems.Add(Join(base, "kind"),
                 fmt::format("kind \"{}\" is not supported: podtopo reads only apiVersion: v1, "
                             "kind: Pod objects (or a kind: List of them)",
                             kind));
    return false;
  }
  if (api_version != "v1") {
    problems.Add(Join(base, "apiVersion"),
                 api_version.empty()
                     ? std::string("Required value (a Pod has apiVersion: v1)")
                     : fmt::format("Unsupported value: \"{}\": a Pod has apiVersion: v1",
                                   api_version));
    return false;
  }
  return true;
}

absl::Status DocumentError(const std::string& source, size_t document, const Problems& problems) {
  std::string message;
  for (const std::string& line : problems.list()) {
    if (!message.empty()) message += "\n";
    message += fmt::format("{}: document {}: {}", source, document, line);
  }
  return absl::InvalidArgumentError(message);
}

// Parses one YAML document into `out`.
absl::Status ParseDocument(const YAML::Node& doc, const std::string& source, size_t document,
                           std::vector<ParsedPod>& out) {
  if (!doc.IsDefined() || doc.IsNull()) return absl::OkStatus();  // empty document
  Problems problems;
  Fields object;
  if (!doc.IsMap()) {
    problems.Add("", fmt::format("expected a Kubernetes object (a map with apiVersion and kind), "
                                 "got {}",
                                 Describe(doc)));
    return DocumentError(source, document, problems);
  }
  ReadMap(&doc, "", problems, &object);
  std::string api_version;
  const std::string kind = ObjectKind(object, "", problems, &api_version);
  if (!problems.empty()) return DocumentError(source, document, problems);

  if (kind == "List" || kind == "PodList") {
    if (api_version != "v1") {
      problems.Add("apiVersion", fmt::format("Unsupported value: \"{}\": a {} has apiVersion: v1",
                                             api_version, kind));
      return DocumentError(source, document, problems);
    }
    const YAML::Node* items = object.Get("items");
    if (items == nullptr || !items->IsDefined() || items->IsNull()) return absl::OkStatus();
    if (!items->IsSequence()) {
      problems.Add("items", fmt::format("expected a list, got {}", Describe(*items)));
      return DocumentError(source, document, problems);
    }
    for (size_t i = 0; i < items->size(); ++i) {
      const std::string base = Index("items", i);
      const YAML::Node item = (*items)[i];
      Fields item_object;
      if (!ReadMap(&item, base, problems, &item_object)) {
        if (!item.IsDefined() || item.IsNull()) problems.Add(base, "expected a Pod, got null");
        return DocumentError(source, document, problems);
      }
      std::string item_api_version;
      const std::string item_kind = ObjectKind(item_object, base, problems, &item_api_version);
      if (!problems.empty() || !CheckPodKind(item_api_version, item_kind, base, problems)) {
        return DocumentError(source, document, problems);
      }
      Pod pod = ReadPod(item_object, base, problems);
      if (!problems.empty()) return DocumentError(source, document, problems);
      out.push_back(ParsedPod{std::move(pod), document, i});
    }
    return absl::OkStatus();
  }

  if (!CheckPodKind(api_version, kind, "", problems)) {
    return DocumentError(source, document, problems);
  }
  Pod pod = ReadPod(object, "", problems);
  if (!problems.empty()) return DocumentError(source, document, problems);
  out.push_back(ParsedPod{std::move(pod), document, std::nullopt});
  return absl::OkStatus();
}

std::string YamlErrorLocation(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return fmt::format("line {}, column {}: ", mark.line + 1, mark.column + 1);
}

}  // namespace

std::string DeterministicPodUid(const std::string& namespace_name, const std::string& name) {
  std::string input(reinterpret_cast<const char*>(kUrlNamespace), sizeof(kUrlNamespace));
  input += "podtopo://pods/" + namespace_name + "/" + name;
  std::array<uint8_t, 20> hash = Sha1(input);
  hash[6] = static_cast<uint8_t>((hash[6] & 0x0f) | 0x50);  // version 5
  hash[8] = static_cast<uint8_t>((hash[8] & 0x3f) | 0x80);  // RFC 4122 variant
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", hash[i]);
  }
  return out;
}

absl::StatusOr<std::vector<Pod>> ParsePods(const std::string& yaml_text,
                                           const std::string& source_name) {
  std::vector<YAML::Node> documents;
  try {
    // yaml-cpp 0.7's LoadAll never returns on some malformed input; scan it first.
    const YamlDocumentScan scan = ScanYamlDocuments(yaml_text);
    if (scan.error.has_value()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}malformed YAML: {}", source_name,
                                                    YamlErrorLocation(scan.error->mark),
                                                    scan.error->message));
    }
    if (scan.stuck) {
      return absl::InvalidArgumentError(
          fmt::format("{}: {}malformed YAML: unexpected character here (did a line start with "
                      "',' or another stray symbol?)",
                      source_name, YamlErrorLocation(scan.stuck_at)));
    }
    documents = YAML::LoadAll(yaml_text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}: {}malformed YAML: {}", source_name,
                                                  YamlErrorLocation(e.mark), e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}: malformed YAML: {}", source_name, e.what()));
  }

  std::vector<ParsedPod> parsed;
  for (size_t i = 0; i < documents.size(); ++i) {
    const size_t document = i + 1;
    try {
      absl::Status status = ParseDocument(documents[i], source_name, document, parsed);
      if (!status.ok()) return status;
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(fmt::format("{}: document {}: {}unreadable YAML: {}",
                                                    source_name, document,
                                                    YamlErrorLocation(e.mark), e.msg));
    }
  }
  if (parsed.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: no pods (the input is empty or holds only empty documents or empty lists)",
        source_name));
  }

  std::map<std::string, size_t> first_document;  // namespace/name -> document
  std::vector<Pod> pods;
  pods.reserve(parsed.size());
  for (ParsedPod& p : parsed) {
    const std::string key = p.pod.Key();
    if (auto [it, inserted] = first_document.emplace(key, p.document); !inserted) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: document {}: {}metadata.name: Duplicate value: \"{}\" (pod {} is already defined "
          "in document {})",
          source_name, p.document, p.item ? Index("items", *p.item) + "." : "", p.pod.name, key,
          it->second));
    }
    if (parsed.size() == 1) {
      p.pod.source = source_name;
    } else if (p.item.has_value()) {
      p.pod.source = fmt::format("{}#{}.items[{}]", source_name, p.document, *p.item);
    } else {
      p.pod.source = fmt::format("{}#{}", source_name, p.document);
    }
    pods.push_back(std::move(p.pod));
  }
  return pods;
}

absl::StatusOr<std::vector<Pod>> LoadPods(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParsePods(*text, path == "-" ? "<stdin>" : path);
}

}  // namespace podtopo
