#include "api/pod_yaml.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "api/known_fields.h"
#include "api/manifest_tree.h"
#include "fmt/format.h"
#include "util/file.h"

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

// `path.field` (one allocation: these paths are built for every field read, error or not).
std::string Join(const std::string& path, std::string_view field) {
  if (path.empty()) return std::string(field);
  std::string out;
  out.reserve(path.size() + 1 + field.size());
  out.append(path).append(1, '.').append(field);
  return out;
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
  std::string out;
  out.reserve(path.size() + name.size() + 2);
  out.append(path);
  if (simple) return out.append(1, '.').append(name);
  return out.append(1, '[').append(name).append(1, ']');
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

// ---------------------------------------------------------------------------------------
// Reading tree nodes (api/manifest_tree.h) with the types Kubernetes' JSON decoding expects.

using NodeType = ManifestNode::Type;

std::string Describe(const ManifestNode& node) {
  switch (node.type) {
    case NodeType::kNull:
      return "null";
    case NodeType::kList:
      return "a list";
    case NodeType::kMap:
      return "a map";
    case NodeType::kNumber:
      return fmt::format("the number {}", node.text);
    case NodeType::kBool:
      return fmt::format("the boolean {}", node.text);
    case NodeType::kString:
      break;
  }
  return "a string";
}

bool Absent(const ManifestNode* node) { return node == nullptr || node->IsNull(); }

// The keys of one map, in order, first occurrence of each.
class Fields {
 public:
  const ManifestNode* Get(std::string_view key) const {
    for (const auto& [k, v] : items_) {
      if (*k == key) return v;
    }
    return nullptr;
  }
  const std::vector<std::pair<const std::string*, const ManifestNode*>>& items() const {
    return items_;
  }
  void Add(const std::string* key, const ManifestNode* value) { items_.emplace_back(key, value); }
  void Reserve(size_t n) { items_.reserve(n); }

 private:
  std::vector<std::pair<const std::string*, const ManifestNode*>> items_;
};

// True when `node` is a map (filled into `fields`); false when absent or null (no problem)
// or of another type (a problem).
bool ReadMap(const ManifestNode* node, const std::string& path, Problems& problems,
             Fields* fields) {
  if (Absent(node)) return false;
  if (!node->IsMap()) {
    problems.Add(path, fmt::format("expected a map, got {}", Describe(*node)));
    return false;
  }
  fields->Reserve(node->entries.size());
  for (size_t i = 0; i < node->entries.size(); ++i) {
    const auto& [key, value] = node->entries[i];
    bool duplicate = false;
    for (const auto& [seen, unused] : fields->items()) duplicate |= *seen == key;
    if (duplicate) {
      problems.Add(path, fmt::format("duplicate key \"{}\"", key));
      continue;
    }
    fields->Add(&key, &value);
  }
  return true;
}

// A string field; nullopt when absent, null or of another type (a problem).
std::optional<std::string> ReadString(const ManifestNode* node, const std::string& path,
                                      Problems& problems) {
  if (Absent(node)) return std::nullopt;
  if (node->type == NodeType::kString) return node->text;
  if (node->IsScalar()) {
    problems.Add(path, fmt::format("expected a string, got {} (quote it: \"{}\")",
                                   Describe(*node), node->text));
  } else {
    problems.Add(path, fmt::format("expected a string, got {}", Describe(*node)));
  }
  return std::nullopt;
}

std::vector<std::string> ReadStringList(const ManifestNode* node, const std::string& path,
                                        Problems& problems) {
  std::vector<std::string> out;
  if (Absent(node)) return out;
  if (!node->IsList()) {
    problems.Add(path, fmt::format("expected a list of strings, got {}", Describe(*node)));
    return out;
  }
  for (size_t i = 0; i < node->items.size(); ++i) {
    out.push_back(ReadString(&node->items[i], Index(path, i), problems).value_or(""));
  }
  return out;
}

std::map<std::string, std::string> ReadStringMap(const ManifestNode* node, const std::string& path,
                                                 Problems& problems) {
  std::map<std::string, std::string> out;
  Fields fields;
  if (!ReadMap(node, path, problems, &fields)) return out;
  for (const auto& [key, value] : fields.items()) {
    out[*key] = ReadString(value, Join(path, *key), problems).value_or("");
  }
  return out;
}

// An int32 field (replicas, parallelism, ...); nullopt when absent or null, or a problem.
std::optional<int64_t> ReadInt32(const ManifestNode* node, const std::string& path,
                                 Problems& problems) {
  if (Absent(node)) return std::nullopt;
  if (node->type == NodeType::kNumber) {
    const std::string text = node->yaml_plain_number ? GoYamlPlainNumber(node->text) : node->text;
    int64_t value = 0;
    size_t i = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
    bool ok = i < text.size();
    for (; ok && i < text.size(); ++i) {
      ok = text[i] >= '0' && text[i] <= '9' && value < (int64_t{1} << 40);
      if (ok) value = value * 10 + (text[i] - '0');
    }
    if (ok && text[0] == '-') value = -value;
    if (ok && value >= std::numeric_limits<int32_t>::min() &&
        value <= std::numeric_limits<int32_t>::max()) {
      return value;
    }
    problems.Add(path, fmt::format("expected a 32-bit integer, got {}", Describe(*node)));
    return std::nullopt;
  }
  problems.Add(path, fmt::format("expected an integer, got {}", Describe(*node)));
  return std::nullopt;
}

// A boolean field; nullopt when absent or null, or a problem.
std::optional<bool> ReadBool(const ManifestNode* node, const std::string& path,
                             Problems& problems) {
  if (Absent(node)) return std::nullopt;
  if (node->type == NodeType::kBool) {
    const std::string& t = node->text;
    return t == "true" || t == "True" || t == "TRUE" || t == "y" || t == "Y" || t == "yes" ||
           t == "Yes" || t == "YES" || t == "on" || t == "On" || t == "ON";
  }
  problems.Add(path, fmt::format("expected a boolean, got {}", Describe(*node)));
  return std::nullopt;
}

// A quantity given as a string or a number; null reads as zero, as Go's decoder does.
std::optional<Quantity> ReadQuantity(const ManifestNode& node, const std::string& path,
                                     Problems& problems) {
  if (node.IsNull()) return Quantity();
  if (node.type != NodeType::kString && node.type != NodeType::kNumber) {
    problems.Add(path, fmt::format("expected a quantity (a string such as \"500m\" or a number), "
                                   "got {}",
                                   Describe(node)));
    return std::nullopt;
  }
  const std::string text = node.yaml_plain_number ? GoYamlPlainNumber(node.text) : node.text;
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

ResourceList ReadResourceList(const ManifestNode* node, const std::string& path,
                              Problems& problems) {
  ResourceList out;
  Fields fields;
  if (!ReadMap(node, path, problems, &fields)) return out;
  for (const auto& [name, value] : fields.items()) {
    const std::string field = ResourceKey(path, *name);
    if (name->empty()) {
      problems.Add(path, "resource names must not be empty");
      continue;
    }
    if (std::optional<Quantity> q = ReadQuantity(*value, field, problems)) out.emplace(*name, *q);
  }
  return out;
}

// spec.resources or a container's resources. False when absent or null.
bool ReadRequirements(const ManifestNode* node, const std::string& path, Problems& problems,
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
// Defaulting. Container requests: pkg/apis/core/v1/defaults.go SetDefaults_Pod. Pod level:
// the v1.36 rules in SetDefaults_Pod (defaultHugePagePodLimits, defaultPodRequests,
// defaultPodLimits), or, with PodLevelResourcesFixDefaulting (k/k #140514, v1.37), the
// registry's applyPodLevelResourceDefaults run from PrepareForCreate.

void DefaultContainerRequests(Container& c) {
  for (const auto& [name, q] : c.resources.limits) c.resources.requests.emplace(name, q);
}

bool AllContainersHaveLimit(const Pod& pod, const std::string& name) {
  for (const Container* c : pod.InitAndAppContainers()) {
    if (!c->resources.limits.count(name)) return false;
  }
  return true;
}

// defaultHugePagePodLimits: a hugepages-* limit the pod level lacks (and has no request for)
// becomes the containers' aggregated limit, once any pod-level request or limit is set.
void DefaultHugePagePodLimits(Pod& pod) {
  ResourceRequirements& res = *pod.resources;
  if (res.limits.empty() && res.requests.empty()) return;
  for (const auto& [name, q] : AggregateContainerLimits(pod)) {
    if (!IsHugePageResourceName(name) || res.requests.count(name)) continue;
    res.limits.emplace(name, q);
  }
}

// defaultPodRequests: a missing cpu/memory request becomes the containers' aggregated
// request; any request still missing for a pod-level limit becomes that limit.
void DefaultPodRequests(Pod& pod) {
  ResourceRequirements& res = *pod.resources;
  for (const auto& [name, q] : AggregateContainerRequests(pod)) {
    if (IsSupportedPodLevelResource(name) && IsOvercommitAllowed(name)) {
      res.requests.emplace(name, q);
    }
  }
  for (const auto& [name, q] : res.limits) {
    if (IsSupportedPodLevelResource(name)) res.requests.emplace(name, q);
  }
}

void DefaultPodLevelResources136(Pod& pod) {
  ResourceRequirements& res = *pod.resources;
  DefaultHugePagePodLimits(pod);
  if (!res.limits.empty()) DefaultPodRequests(pod);
  // defaultPodLimits: only when the pod level sets requests and no limits at all; a
  // cpu/memory limit is the containers' aggregated limit when every container sets it.
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

// v1.37 (PodLevelResourcesFixDefaulting): once any pod-level request or limit is set,
// (1) hugepages limits as above, (2) requests from the aggregated container requests, then
// from the pod-level limits, (3) each cpu/memory limit the pod level lacks, where every init
// and app container sets one, becomes max(pod-level request, aggregated container limits).
void DefaultPodLevelResources137(Pod& pod) {
  ResourceRequirements& res = *pod.resources;
  if (res.limits.empty() && res.requests.empty()) return;
  DefaultHugePagePodLimits(pod);
  DefaultPodRequests(pod);
  for (const auto& [name, aggregate] : AggregateContainerLimits(pod)) {
    if (res.limits.count(name) || !IsSupportedPodLevelResource(name) ||
        !IsOvercommitAllowed(name) || !AllContainersHaveLimit(pod, name)) {
      continue;
    }
    Quantity limit = aggregate;
    if (auto request = res.requests.find(name);
        request != res.requests.end() && request->second.Cmp(limit) > 0) {
      limit = request->second;
    }
    res.limits.emplace(name, limit);
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

void RoundContainers(Pod& pod) {
  for (auto* list : {&pod.init_containers, &pod.containers, &pod.ephemeral_containers}) {
    for (Container& c : *list) {
      RoundUpToMilli(c.resources.requests);
      RoundUpToMilli(c.resources.limits);
    }
  }
}

// In v1.36 the pod level is defaulted inside SetDefaults_Pod, before the generated
// defaulters round the containers' lists; in v1.37 PrepareForCreate defaults it from the
// already rounded container values.
void ApplyDefaults(Pod& pod, const PodGates& gates) {
  for (Container& c : pod.init_containers) DefaultContainerRequests(c);
  for (Container& c : pod.containers) DefaultContainerRequests(c);
  const bool pod_level = gates.pod_level_resources && pod.resources.has_value();
  if (pod_level && gates.fix_defaulting) {
    RoundContainers(pod);
    DefaultPodLevelResources137(pod);
  } else {
    if (pod_level) DefaultPodLevelResources136(pod);
    RoundContainers(pod);
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

Container ReadContainer(const ManifestNode& node, const std::string& path, ContainerKind kind,
                        Problems& problems) {
  Container c;
  c.kind = kind;
  Fields fields;
  if (!ReadMap(&node, path, problems, &fields)) {
    if (node.IsNull()) problems.Add(path, "expected a container, got null");
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

std::vector<Container> ReadContainers(const ManifestNode* node, const std::string& path,
                                      ContainerKind kind, Problems& problems) {
  std::vector<Container> out;
  if (Absent(node)) return out;
  if (!node->IsList()) {
    problems.Add(path, fmt::format("expected a list of containers, got {}", Describe(*node)));
    return out;
  }
  out.reserve(node->items.size());
  for (size_t i = 0; i < node->items.size(); ++i) {
    out.push_back(ReadContainer(node->items[i], Index(path, i), kind, problems));
  }
  return out;
}

// `spec` is the path of the pod spec ("spec", "items[3].spec", "spec.template.spec").
void ValidatePod(const Pod& pod, const std::string& spec, bool windows, const PodGates& gates,
                 Problems& problems) {
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

  // With PodLevelResources off the API server drops spec.resources (DropDisabledPodFields).
  if (!pod.resources.has_value() || !gates.pod_level_resources) return;
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


// ---------------------------------------------------------------------------------------
// Object metadata, pod specs and pod templates.

struct ObjectMeta {
  std::string name;
  std::string namespace_name = "default";
  std::string uid;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
};

// metadata of a Pod or a controller (`name_required`), or of a pod template (only labels and
// annotations are read: the controller names its pods and puts them in its own namespace).
ObjectMeta ReadMetadata(const ManifestNode* node, const std::string& path, bool name_required,
                        Problems& problems) {
  ObjectMeta meta;
  Fields metadata;
  if (!ReadMap(node, path, problems, &metadata)) {
    if (name_required) problems.Add(Join(path, "name"), "Required value");
    return meta;
  }
  if (name_required) {
    const std::string name_path = Join(path, "name");
    const ManifestNode* name_node = metadata.Get("name");
    std::optional<std::string> name = ReadString(name_node, name_path, problems);
    const bool wrong_type = !Absent(name_node) && !name.has_value();
    if (wrong_type) {
      // ReadString reported it.
    } else if (!name.has_value() || name->empty()) {
      problems.Add(name_path, metadata.Get("generateName") != nullptr
                                  ? "Required value (generateName is not supported: podtopo "
                                    "needs a stable name)"
                                  : "Required value");
    } else if (!IsDns1123Subdomain(*name)) {
      problems.Add(name_path, fmt::format("Invalid value: \"{}\": {}", *name, kSubdomainMessage));
    } else {
      meta.name = *name;
    }
    const std::string ns_path = Join(path, "namespace");
    if (std::optional<std::string> ns = ReadString(metadata.Get("namespace"), ns_path, problems);
        ns.has_value() && !ns->empty()) {
      if (!IsDns1123Label(*ns)) {
        problems.Add(ns_path, fmt::format("Invalid value: \"{}\": {}", *ns, kLabelMessage));
      } else {
        meta.namespace_name = *ns;
      }
    }
    meta.uid = ReadString(metadata.Get("uid"), Join(path, "uid"), problems).value_or("");
  }
  const std::string labels_path = Join(path, "labels");
  meta.labels = ReadStringMap(metadata.Get("labels"), labels_path, problems);
  for (const auto& [key, value] : meta.labels) {
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
  const std::string annotations_path = Join(path, "annotations");
  meta.annotations = ReadStringMap(metadata.Get("annotations"), annotations_path, problems);
  for (const auto& [key, value] : meta.annotations) {
    if (!IsQualifiedName(key)) {
      problems.Add(ResourceKey(annotations_path, key),
                   fmt::format("Invalid value: \"{}\": {}", key, kQualifiedNameMessage));
    }
  }
  return meta;
}

// Reads a pod spec at `spec_path` into `pod`, then defaults and validates the pod as the API
// server does (only when the spec read without problems: no defaulting of half a pod).
void ReadPodSpec(const ManifestNode* node, const std::string& spec_path, const PodGates& gates,
                 Pod& pod, Problems& problems) {
  Fields spec;
  if (!ReadMap(node, spec_path, problems, &spec)) {
    problems.Add(Join(spec_path, "containers"), "Required value");
    return;
  }
  ResourceRequirements pod_resources;
  if (ReadRequirements(spec.Get("resources"), Join(spec_path, "resources"), problems,
                       &pod_resources)) {
    pod.resources = std::move(pod_resources);
  }
  bool windows = false;
  Fields os;
  if (ReadMap(spec.Get("os"), Join(spec_path, "os"), problems, &os)) {
    windows = ReadString(os.Get("name"), Join(spec_path, "os.name"), problems).value_or("") ==
              "windows";
  }
  pod.node_name =
      ReadString(spec.Get("nodeName"), Join(spec_path, "nodeName"), problems).value_or("");
  pod.init_containers = ReadContainers(spec.Get("initContainers"),
                                       Join(spec_path, "initContainers"), ContainerKind::kInit,
                                       problems);
  pod.containers = ReadContainers(spec.Get("containers"), Join(spec_path, "containers"),
                                  ContainerKind::kApp, problems);
  pod.ephemeral_containers =
      ReadContainers(spec.Get("ephemeralContainers"), Join(spec_path, "ephemeralContainers"),
                     ContainerKind::kEphemeral, problems);
  if (!problems.empty()) return;
  ApplyDefaults(pod, gates);
  ValidatePod(pod, spec_path, windows, gates, problems);
}

// A Pod object whose apiVersion/kind were checked. `base` is "" or "items[3]".
Pod ReadPod(const Fields& object, const std::string& base, const PodGates& gates,
            Problems& problems) {
  Pod pod;
  ObjectMeta meta = ReadMetadata(object.Get("metadata"), Join(base, "metadata"), true, problems);
  pod.name = std::move(meta.name);
  pod.namespace_name = std::move(meta.namespace_name);
  pod.uid = std::move(meta.uid);
  pod.labels = std::move(meta.labels);
  pod.annotations = std::move(meta.annotations);
  ReadPodSpec(object.Get("spec"), Join(base, "spec"), gates, pod, problems);
  return pod;
}

// A PodTemplateSpec (metadata + spec) at `path`, defaulted and validated like a pod.
Pod ReadPodTemplate(const ManifestNode* node, const std::string& path, const PodGates& gates,
                    Problems& problems) {
  Pod pod;
  Fields tmpl;
  if (!ReadMap(node, path, problems, &tmpl)) {
    problems.Add(path, "Required value (the pod template)");
    return pod;
  }
  ObjectMeta meta = ReadMetadata(tmpl.Get("metadata"), Join(path, "metadata"), false, problems);
  pod.labels = std::move(meta.labels);
  pod.annotations = std::move(meta.annotations);
  ReadPodSpec(tmpl.Get("spec"), Join(path, "spec"), gates, pod, problems);
  return pod;
}

// ---------------------------------------------------------------------------------------
// Workload controllers: the pods each one creates, named as its controller names them.

// k8s.io/apimachinery/pkg/util/rand's alphabet (no vowels, no 0/1/3): generated name
// suffixes and rand.SafeEncodeString, which the pod-template-hash goes through.
constexpr std::string_view kSafeAlphabet = "bcdfghjklmnpqrstvwxz2456789";

uint32_t Fnv32a(std::string_view data, uint32_t hash = 2166136261u) {
  for (unsigned char ch : data) {
    hash ^= ch;
    hash *= 16777619u;
  }
  return hash;
}

// A canonical text of a tree (keys in document order), for hashing.
void Canonical(const ManifestNode& node, std::string& out) {
  switch (node.type) {
    case NodeType::kNull:
      out += "~";
      return;
    case NodeType::kBool:
    case NodeType::kNumber:
      out += node.yaml_plain_number ? GoYamlPlainNumber(node.text) : node.text;
      return;
    case NodeType::kString:
      out += '"';
      out += node.text;
      out += '"';
      return;
    case NodeType::kList:
      out += '[';
      for (const ManifestNode& item : node.items) {
        Canonical(item, out);
        out += ',';
      }
      out += ']';
      return;
    case NodeType::kMap:
      out += '{';
      for (const auto& [key, value] : node.entries) {
        out += key;
        out += ':';
        Canonical(value, out);
        out += ',';
      }
      out += '}';
      return;
  }
}

// The ReplicaSet name suffix: like controller.ComputeHash, an FNV-32a hash written as
// rand.SafeEncodeString(decimal hash), so it has the same alphabet and length as the
// controller's. The controller hashes Go's dump of the defaulted template object, which
// podtopo cannot reproduce; it hashes the manifest's template instead (docs/differences.md).
std::string PodTemplateHash(const ManifestNode& template_node) {
  std::string text;
  Canonical(template_node, text);
  std::string hash = std::to_string(Fnv32a(text));
  for (char& ch : hash) ch = kSafeAlphabet[static_cast<unsigned char>(ch) % kSafeAlphabet.size()];
  return hash;
}

// names.SimpleNameGenerator: generateName `base-` (cut to 58 characters) and 5 characters
// of the alphabet. The API server's are random; podtopo's are a hash of the base and the
// replica index, unique within the controller.
class PodNamer {
 public:
  explicit PodNamer(std::string base) : base_(std::move(base)) {
    if (base_.size() > 57) base_.resize(57);
    base_ += '-';
  }
  std::string Next() {
    for (uint32_t salt = 0;; ++salt) {
      uint32_t h = Fnv32a(fmt::format("{}/{}/{}", base_, index_, salt));
      std::string name = base_;
      for (int i = 0; i < 5; ++i) {
        name += kSafeAlphabet[h % kSafeAlphabet.size()];
        h /= kSafeAlphabet.size();
      }
      if (used_.insert(name).second) {
        ++index_;
        return name;
      }
    }
  }

 private:
  std::string base_;
  size_t index_ = 0;
  std::set<std::string> used_;
};

struct WorkloadKind {
  std::string_view kind;
  std::string_view api_version;
};
constexpr WorkloadKind kWorkloads[] = {
    {"Deployment", "apps/v1"}, {"ReplicaSet", "apps/v1"},     {"StatefulSet", "apps/v1"},
    {"DaemonSet", "apps/v1"},  {"Job", "batch/v1"},           {"CronJob", "batch/v1"},
    {"ReplicationController", "v1"}, {"PodTemplate", "v1"},
};

const WorkloadKind* FindWorkload(std::string_view kind) {
  for (const WorkloadKind& w : kWorkloads) {
    if (w.kind == kind) return &w;
  }
  return nullptr;
}

constexpr char kSupportedKinds[] =
    "Pod, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, ReplicationController, "
    "PodTemplate and List";

// A replica count: absent -> `fallback` (the API server's default), negative -> a problem.
int64_t ReadCount(const Fields& spec, std::string_view field, const std::string& spec_path,
                  int64_t fallback, Problems& problems, bool* present = nullptr) {
  const std::string path = Join(spec_path, std::string(field));
  std::optional<int64_t> v = ReadInt32(spec.Get(field), path, problems);
  if (present != nullptr) *present = v.has_value();
  if (!v.has_value()) return fallback;
  if (*v < 0) {
    problems.Add(path, fmt::format("Invalid value: {}: must be greater than or equal to 0", *v));
    return 0;
  }
  return *v;
}

// The pods of one workload object (its kind checked), appended to `out`.
void ExpandWorkload(std::string_view kind, const Fields& object, const std::string& base,
                    const PodLoadOptions& options, Problems& problems, std::vector<Pod>& out) {
  const ObjectMeta meta =
      ReadMetadata(object.Get("metadata"), Join(base, "metadata"), true, problems);
  auto emit = [&](const Pod& prototype, const std::string& name) {
    Pod pod = prototype;
    pod.name = name;
    pod.namespace_name = meta.namespace_name;
    pod.controller_kind = std::string(kind);
    pod.controller_name = meta.name;
    out.push_back(std::move(pod));
  };

  if (kind == "PodTemplate") {
    Pod pod = ReadPodTemplate(object.Get("template"), Join(base, "template"), options.gates,
                              problems);
    if (problems.empty()) emit(pod, meta.name);
    return;
  }

  const std::string spec_path = Join(base, "spec");
  Fields spec;
  if (!ReadMap(object.Get("spec"), spec_path, problems, &spec)) {
    problems.Add(Join(spec_path, "template"), "Required value");
    return;
  }

  // Job (also a CronJob's jobTemplate.spec): SetDefaults_Job makes parallelism 1, and
  // completions 1 when neither is set; the controller runs min(parallelism, completions)
  // pods at once (all of parallelism for a work queue, none while suspended). Pods are
  // `<job>-<suffix>`, or `<job>-<index>-<suffix>` with completionMode: Indexed.
  auto expand_job = [&](const Fields& job_spec, const std::string& job_path,
                        const std::string& job_name) {
    bool has_parallelism = false;
    bool has_completions = false;
    int64_t parallelism =
        ReadCount(job_spec, "parallelism", job_path, 1, problems, &has_parallelism);
    int64_t completions =
        ReadCount(job_spec, "completions", job_path, 1, problems, &has_completions);
    const bool suspended =
        ReadBool(job_spec.Get("suspend"), Join(job_path, "suspend"), problems).value_or(false);
    const std::string mode =
        ReadString(job_spec.Get("completionMode"), Join(job_path, "completionMode"), problems)
            .value_or("NonIndexed");
    if (mode != "NonIndexed" && mode != "Indexed") {
      problems.Add(Join(job_path, "completionMode"),
                   fmt::format("Unsupported value: \"{}\": supported values: \"Indexed\", "
                               "\"NonIndexed\"",
                               mode));
    }
    if (mode == "Indexed" && !has_completions) {
      problems.Add(Join(job_path, "completions"),
                   "Required value: when completion mode is Indexed");
    }
    Pod pod = ReadPodTemplate(job_spec.Get("template"), Join(job_path, "template"),
                              options.gates, problems);
    if (!problems.empty()) return;
    pod.labels["batch.kubernetes.io/job-name"] = job_name;
    pod.labels["job-name"] = job_name;
    const int64_t count =
        suspended ? 0 : (has_completions || !has_parallelism ? std::min(parallelism, completions)
                                                             : parallelism);
    PodNamer namer(job_name);
    for (int64_t i = 0; i < count; ++i) {
      if (mode == "Indexed") {
        pod.labels["batch.kubernetes.io/job-completion-index"] = std::to_string(i);
        emit(pod, PodNamer(fmt::format("{}-{}", job_name, i)).Next());
      } else {
        emit(pod, namer.Next());
      }
    }
  };

  if (kind == "Job") {
    expand_job(spec, spec_path, meta.name);
    return;
  }
  if (kind == "CronJob") {
    // The controller names each Job `<cronjob>-<scheduled time in Unix minutes>`; podtopo
    // has no clock to follow, so the number is a hash of the CronJob's namespace/name.
    const std::string job_template_path = Join(spec_path, "jobTemplate");
    Fields job_template;
    if (!ReadMap(spec.Get("jobTemplate"), job_template_path, problems, &job_template)) {
      problems.Add(job_template_path, "Required value");
      return;
    }
    const std::string job_spec_path = Join(job_template_path, "spec");
    Fields job_spec;
    if (!ReadMap(job_template.Get("spec"), job_spec_path, problems, &job_spec)) {
      problems.Add(Join(job_spec_path, "template"), "Required value");
      return;
    }
    const uint32_t minutes =
        20000000u + Fnv32a(meta.namespace_name + "/" + meta.name) % 10000000u;
    expand_job(job_spec, job_spec_path, fmt::format("{}-{}", meta.name, minutes));
    return;
  }

  const int64_t replicas = kind == "DaemonSet" ? 0 : ReadCount(spec, "replicas", spec_path, 1,
                                                               problems);
  const ManifestNode* template_node = spec.Get("template");
  Pod pod = ReadPodTemplate(template_node, Join(spec_path, "template"), options.gates, problems);
  if (!problems.empty()) return;

  if (kind == "StatefulSet") {
    // `<name>-<ordinal>`, ordinals from spec.ordinals.start (default 0).
    int64_t start = 0;
    Fields ordinals;
    if (ReadMap(spec.Get("ordinals"), Join(spec_path, "ordinals"), problems, &ordinals)) {
      start = ReadCount(ordinals, "start", Join(spec_path, "ordinals"), 0, problems);
    }
    for (int64_t i = 0; i < replicas; ++i) {
      const std::string name = fmt::format("{}-{}", meta.name, start + i);
      pod.labels["statefulset.kubernetes.io/pod-name"] = name;
      pod.labels["apps.kubernetes.io/pod-index"] = std::to_string(start + i);
      emit(pod, name);
    }
    return;
  }
  if (kind == "DaemonSet") {
    // One pod per node of the run (bound to it); without nodes, one pod for the one node.
    PodNamer namer(meta.name);
    if (options.node_names.empty()) {
      emit(pod, namer.Next());
      return;
    }
    for (const std::string& node : options.node_names) {
      pod.node_name = node;
      emit(pod, namer.Next());
    }
    return;
  }
  std::string pod_base = meta.name;
  if (kind == "Deployment") {
    // The Deployment's ReplicaSet is `<name>-<pod-template-hash>`.
    const std::string hash = PodTemplateHash(*template_node);
    pod.labels["pod-template-hash"] = hash;
    pod_base = meta.name + "-" + hash;
  }
  PodNamer namer(pod_base);  // ReplicaSet and ReplicationController: `<name>-<suffix>`
  for (int64_t i = 0; i < replicas; ++i) emit(pod, namer.Next());
}

// ---------------------------------------------------------------------------------------
// Documents.

struct ParsedPod {
  Pod pod;
  size_t document = 0;         // 1-based
  std::optional<size_t> item;  // index in a List's items
};

// Where the problems of one object are reported.
struct ObjectContext {
  const std::string& source;
  size_t document;
  const std::string& helm_source;  // "" unless Helm wrote `# Source:`
  std::string object;              // "Deployment web" for a controller, else ""
};

// ---------------------------------------------------------------------------------------
// Controllers whose dependents are in the same input (`kubectl get all`): a ReplicaSet next to
// the pods it owns, a Deployment next to its ReplicaSets. The dependents stand for them.

// The string field `key` of a map, "" when absent or not a string (a lenient peek: the fields
// are validated where they are read).
std::string Peek(const ManifestNode* map, std::string_view key) {
  if (map == nullptr || !map->IsMap()) return "";
  for (const auto& [k, v] : map->entries) {
    if (k == key) return v.type == ManifestNode::Type::kString ? v.text : "";
  }
  return "";
}

const ManifestNode* PeekNode(const ManifestNode* map, std::string_view key) {
  if (map == nullptr || !map->IsMap()) return nullptr;
  for (const auto& [k, v] : map->entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string OwnerKey(const std::string& namespace_name, const std::string& kind,
                     const std::string& name) {
  return namespace_name + "/" + kind + "/" + name;
}

// namespace/kind/name -> the uids the references give ("" for a reference without one).
using Owners = std::map<std::string, std::vector<std::string>>;

void AddOwners(const ManifestNode& object, Owners& owners) {
  const ManifestNode* metadata = PeekNode(&object, "metadata");
  const ManifestNode* refs = PeekNode(metadata, "ownerReferences");
  if (refs == nullptr || !refs->IsList()) return;
  std::string ns = Peek(metadata, "namespace");
  if (ns.empty()) ns = "default";
  for (const ManifestNode& ref : refs->items) {
    const ManifestNode* controller = PeekNode(&ref, "controller");
    if (controller == nullptr || controller->type != ManifestNode::Type::kBool ||
        controller->text != "true") {
      continue;
    }
    const std::string kind = Peek(&ref, "kind"), name = Peek(&ref, "name");
    if (!kind.empty() && !name.empty()) owners[OwnerKey(ns, kind, name)].push_back(Peek(&ref, "uid"));
  }
}

// Every controller reference of the stream's objects (document roots and List items).
Owners StreamOwners(const ManifestStream& stream) {
  Owners owners;
  for (const ManifestDocument& doc : stream.documents) {
    const ManifestNode* items = PeekNode(&doc.root, "items");
    if (items != nullptr && items->IsList() && Peek(&doc.root, "kind").ends_with("List")) {
      for (const ManifestNode& item : items->items) AddOwners(item, owners);
    } else {
      AddOwners(doc.root, owners);
    }
  }
  return owners;
}

// True when another object of the input names this one as its controller.
bool HasDependents(const Fields& object, const std::string& kind, const Owners& owners) {
  if (owners.empty()) return false;
  const ManifestNode* metadata = object.Get("metadata");
  std::string ns = Peek(metadata, "namespace");
  if (ns.empty()) ns = "default";
  auto it = owners.find(OwnerKey(ns, kind, Peek(metadata, "name")));
  if (it == owners.end()) return false;
  const std::string uid = Peek(metadata, "uid");
  for (const std::string& ref_uid : it->second) {
    if (uid.empty() || ref_uid.empty() || ref_uid == uid) return true;
  }
  return false;
}

// "document 2 (chart/templates/web.yaml): Deployment web"
std::string Where(const ObjectContext& at) {
  std::string where = fmt::format("document {}", at.document);
  if (!at.helm_source.empty()) where += fmt::format(" ({})", at.helm_source);
  if (!at.object.empty()) where += ": " + at.object;
  return where;
}

absl::Status DocumentError(const ObjectContext& at, const Problems& problems) {
  const std::string head = at.source + ": " + Where(at);
  std::string message;
  for (const std::string& line : problems.list()) {
    if (!message.empty()) message += "\n";
    message += head + ": " + line;
  }
  return absl::InvalidArgumentError(message);
}

// "Deployment web" (the kind alone when the name cannot be read).
std::string ObjectName(const std::string& kind, const Fields& object) {
  Fields metadata;
  Problems ignored;
  if (!ReadMap(object.Get("metadata"), "", ignored, &metadata)) return kind;
  return kind + " " + ReadString(metadata.Get("name"), "", ignored).value_or("");
}

// The fields of `node` (an object of `kind` at `base`) that are no field of its type: errors
// (added to `problems`) with options.strict, else added to options.unknown_fields.
void CheckFields(const ManifestNode& node, const std::string& kind, const std::string& base,
                 const ObjectContext& at, const PodLoadOptions& options, Problems& problems) {
  if (!options.strict && options.unknown_fields == nullptr) return;
  std::vector<UnknownFieldPath> unknown;
  FindUnknownFields(node, kind, base, &unknown);
  for (UnknownFieldPath& u : unknown) {
    UnknownField field{at.source, Where(at), std::move(u.path), std::move(u.name),
                       std::move(u.suggestion)};
    if (options.strict) {
      problems.Add(field.field, field.Message() +
                                    " (--strict: unknown fields are errors, as with kubectl's "
                                    "strict field validation)");
    } else {
      options.unknown_fields->push_back(std::move(field));
    }
  }
}

// Reads one object (a document's root or a List item): a Pod, a workload controller (its
// pods), or another kind (skipped, or an error with options.strict).
absl::Status ParseObject(const ManifestNode& node, const Fields& object, const std::string& base,
                         ObjectContext at, std::optional<size_t> item,
                         const PodLoadOptions& options,
                         const Owners& owners, std::string_view default_kind,
                         std::string_view default_api_version, std::vector<ParsedPod>& out) {
  Problems problems;
  const ManifestNode* kind_node = object.Get("kind");
  const ManifestNode* version_node = object.Get("apiVersion");
  std::string kind = Absent(kind_node)
                         ? std::string(default_kind)
                         : ReadString(kind_node, Join(base, "kind"), problems).value_or("");
  std::string api_version =
      Absent(version_node)
          ? std::string(default_api_version)
          : ReadString(version_node, Join(base, "apiVersion"), problems).value_or("");
  if (!problems.empty()) return DocumentError(at, problems);
  if (kind.empty()) {
    problems.Add(Join(base, "kind"),
                 fmt::format("Required value (podtopo reads {} objects)", kSupportedKinds));
    return DocumentError(at, problems);
  }
  const WorkloadKind* workload = FindWorkload(kind);
  const std::string_view expected_version =
      kind == "Pod" ? std::string_view("v1") : workload != nullptr ? workload->api_version : "";
  if (expected_version.empty()) {
    if (options.strict && options.unsupported_objects != nullptr) {
      ObjectContext named = at;
      named.object = ObjectName(kind, object);
      options.unsupported_objects->push_back(
          Where(named) + (item.has_value() ? " (" + Index("items", *item) + ")" : ""));
      return absl::OkStatus();
    }
    if (options.strict) {
      problems.Add(Join(base, "kind"),
                   fmt::format("kind \"{}\" is not supported: podtopo reads {} objects "
                               "(--strict: other kinds are errors)",
                               kind, kSupportedKinds));
      return DocumentError(at, problems);
    }
    if (options.skipped_kinds != nullptr) ++(*options.skipped_kinds)[kind];
    return absl::OkStatus();
  }
  if (api_version != expected_version) {
    problems.Add(Join(base, "apiVersion"),
                 api_version.empty()
                     ? fmt::format("Required value (a {} has apiVersion: {})", kind,
                                   expected_version)
                     : fmt::format("Unsupported value: \"{}\": a {} has apiVersion: {}",
                                   api_version, kind, expected_version));
    return DocumentError(at, problems);
  }
  if (kind == "Pod") {
    CheckFields(node, kind, base, at, options, problems);
    if (!problems.empty()) return DocumentError(at, problems);
    Pod pod = ReadPod(object, base, options.gates, problems);
    if (!problems.empty()) return DocumentError(at, problems);
    out.push_back(ParsedPod{std::move(pod), at.document, item});
    return absl::OkStatus();
  }
  if (HasDependents(object, kind, owners)) {
    if (options.not_expanded != nullptr) ++(*options.not_expanded)[kind];
    return absl::OkStatus();
  }
  ObjectContext named = at;
  named.object = ObjectName(kind, object);
  CheckFields(node, kind, base, named, options, problems);
  if (!problems.empty()) return DocumentError(named, problems);
  std::vector<Pod> pods;
  ExpandWorkload(kind, object, base, options, problems, pods);
  if (!problems.empty()) return DocumentError(named, problems);
  for (Pod& pod : pods) out.push_back(ParsedPod{std::move(pod), at.document, item});
  return absl::OkStatus();
}

absl::Status ParseDocument(const ManifestDocument& doc, const std::string& source,
                           size_t document, const PodLoadOptions& options, const Owners& owners,
                           std::vector<ParsedPod>& out) {
  if (doc.root.IsNull()) return absl::OkStatus();  // empty document
  ObjectContext at{source, document, doc.helm_source, ""};
  Problems problems;
  Fields object;
  // A top-level array of objects (`[{...}, {...}]`): read as the items of a List.
  const bool array = doc.root.IsList();
  if (!array && !doc.root.IsMap()) {
    problems.Add("", fmt::format("expected a Kubernetes object (a map with apiVersion and kind) "
                                 "or a list of them, got {}",
                                 Describe(doc.root)));
    return DocumentError(at, problems);
  }
  std::string kind;
  if (!array) {
    ReadMap(&doc.root, "", problems, &object);
    if (!problems.empty()) return DocumentError(at, problems);
    kind = ReadString(object.Get("kind"), "kind", problems).value_or("");
    if (!problems.empty()) return DocumentError(at, problems);
  }

  // `kind: List` (kubectl get ... -o yaml|json) and typed lists (PodList, DeploymentList,
  // whose items may omit kind and apiVersion).
  const bool typed_list = kind.size() > 4 && kind.ends_with("List") &&
                          (kind == "PodList" || FindWorkload(kind.substr(0, kind.size() - 4)));
  if (array || kind == "List" || typed_list) {
    std::string api_version;
    if (!array) {
      api_version = ReadString(object.Get("apiVersion"), "apiVersion", problems).value_or("");
      if (!problems.empty()) return DocumentError(at, problems);
      if (kind == "List" && api_version != "v1") {
        problems.Add("apiVersion",
                     fmt::format("Unsupported value: \"{}\": a List has apiVersion: v1",
                                 api_version));
        return DocumentError(at, problems);
      }
      CheckFields(doc.root, kind, "", at, options, problems);  // the List's own fields
      if (!problems.empty()) return DocumentError(at, problems);
    }
    const std::string item_kind = typed_list ? kind.substr(0, kind.size() - 4) : "";
    const ManifestNode* items = array ? &doc.root : object.Get("items");
    const std::string items_path = array ? "" : "items";  // items[3] or [3]
    if (Absent(items)) return absl::OkStatus();
    if (!items->IsList()) {
      problems.Add("items", fmt::format("expected a list, got {}", Describe(*items)));
      return DocumentError(at, problems);
    }
    // The items [first, last), in order; stops at the first that does not read.
    auto read_items = [&](size_t first, size_t last, const PodLoadOptions& item_options,
                          std::vector<ParsedPod>& pods) -> absl::Status {
      for (size_t i = first; i < last; ++i) {
        const std::string base = Index(items_path, i);
        const ManifestNode& item = items->items[i];
        Problems item_problems;
        Fields item_object;
        if (!ReadMap(&item, base, item_problems, &item_object)) {
          if (item.IsNull()) item_problems.Add(base, "expected an object, got null");
          return DocumentError(at, item_problems);
        }
        if (absl::Status s = ParseObject(item, item_object, base, at, i, item_options, owners,
                                         item_kind, typed_list ? api_version : "", pods);
            !s.ok()) {
          return s;
        }
      }
      return absl::OkStatus();
    };
    // A big List (kubectl get pods -A) is read on several threads, each a run of items; the
    // first error in item order is the one reported, and the counts add up.
    const size_t count = items->items.size();
    const size_t threads =
        count < options.parallel_items ? 1 : std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    if (threads == 1) return read_items(0, count, options, out);
    struct Part {
      std::vector<ParsedPod> pods;
      absl::Status status;
      std::map<std::string, int> skipped, not_expanded;
      std::vector<UnknownField> unknown_fields;
      std::vector<std::string> unsupported;
    };
    std::vector<Part> parts(threads);
    auto read_part = [&](size_t t) {
      PodLoadOptions local = options;
      if (local.skipped_kinds != nullptr) local.skipped_kinds = &parts[t].skipped;
      if (local.not_expanded != nullptr) local.not_expanded = &parts[t].not_expanded;
      if (local.unknown_fields != nullptr) local.unknown_fields = &parts[t].unknown_fields;
      if (local.unsupported_objects != nullptr) {
        local.unsupported_objects = &parts[t].unsupported;
      }
      parts[t].status =
          read_items(count * t / threads, count * (t + 1) / threads, local, parts[t].pods);
    };
    std::vector<std::thread> pool;
    for (size_t t = 1; t < threads; ++t) pool.emplace_back(read_part, t);
    read_part(0);
    for (auto& th : pool) th.join();
    for (const Part& part : parts) {
      if (!part.status.ok()) return part.status;
    }
    for (Part& part : parts) {
      if (options.skipped_kinds != nullptr) {
        for (const auto& [kind, n] : part.skipped) (*options.skipped_kinds)[kind] += n;
      }
      if (options.not_expanded != nullptr) {
        for (const auto& [kind, n] : part.not_expanded) (*options.not_expanded)[kind] += n;
      }
      if (options.unknown_fields != nullptr) {
        options.unknown_fields->insert(options.unknown_fields->end(),
                                       std::make_move_iterator(part.unknown_fields.begin()),
                                       std::make_move_iterator(part.unknown_fields.end()));
      }
      if (options.unsupported_objects != nullptr) {
        options.unsupported_objects->insert(options.unsupported_objects->end(),
                                            part.unsupported.begin(), part.unsupported.end());
      }
      out.insert(out.end(), std::make_move_iterator(part.pods.begin()),
                 std::make_move_iterator(part.pods.end()));
    }
    return absl::OkStatus();
  }
  return ParseObject(doc.root, object, "", at, std::nullopt, options, owners, "", "", out);
}

}  // namespace

std::string UnknownField::Message() const {
  std::string message = fmt::format("unknown field \"{}\"", name);
  if (!suggestion.empty()) message += fmt::format(" (did you mean {}?)", suggestion);
  return message;
}

std::string UnknownField::ToString() const {
  return fmt::format("{}: {}: {}: {}", source, where, field, Message());
}

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

absl::StatusOr<std::vector<Pod>> ParsePods(const std::string& text,
                                           const std::string& source_name,
                                           const PodLoadOptions& options) {
  absl::StatusOr<ManifestStream> stream = ParseManifestText(text, source_name);
  if (!stream.ok()) return stream.status();
  return PodsFromManifest(*stream, source_name, options);
}

absl::StatusOr<std::vector<Pod>> PodsFromManifest(const ManifestStream& stream,
                                                  const std::string& source_name,
                                                  const PodLoadOptions& options) {
  std::vector<ParsedPod> parsed;
  std::map<std::string, int> skipped;
  std::vector<std::string> unsupported;
  PodLoadOptions local = options;
  if (local.skipped_kinds == nullptr) local.skipped_kinds = &skipped;
  if (local.strict && local.unsupported_objects == nullptr) {
    local.unsupported_objects = &unsupported;
  }
  const Owners owners = StreamOwners(stream);
  for (size_t i = 0; i < stream.documents.size(); ++i) {
    absl::Status status =
        ParseDocument(stream.documents[i], source_name, i + 1, local, owners, parsed);
    if (!status.ok()) return status;
  }
  if (!unsupported.empty()) {
    std::string lines;
    for (const std::string& u : unsupported) lines += fmt::format("\n  {}: {}", source_name, u);
    return absl::InvalidArgumentError(fmt::format(
        "{}: {} object{} of a kind podtopo does not read (--strict: other kinds are errors; "
        "podtopo reads {} objects):{}",
        source_name, unsupported.size(), unsupported.size() == 1 ? "" : "s", kSupportedKinds,
        lines));
  }
  if (parsed.empty()) {
    std::string kinds;
    for (const auto& [kind, count] : *local.skipped_kinds) {
      kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", count, kind);
    }
    return absl::InvalidArgumentError(fmt::format(
        "{}: no pods (the input is empty, holds only empty documents or lists, workloads with "
        "no replicas{})",
        source_name, kinds.empty() ? "" : ", or only objects podtopo skips: " + kinds));
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
    if (p.pod.uid.empty() && !p.pod.name.empty()) {
      p.pod.uid = DeterministicPodUid(p.pod.namespace_name, p.pod.name);
    }
    pods.push_back(std::move(p.pod));
  }
  return pods;
}

absl::StatusOr<std::vector<Pod>> LoadPods(const std::string& path, const PodLoadOptions& options) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParsePods(*text, path == "-" ? "<stdin>" : path, options);
}

}  // namespace podtopo
