#include "api/manifest_tree.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "util/go_strconv.h"
#include "util/yaml_guard.h"
#include "yaml-cpp/yaml.h"

namespace podtopo {
namespace {

// ---------------------------------------------------------------------------------------
// YAML 1.1 plain scalars as go-yaml v2 resolves them.

bool IsDigits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    if (!(s[i] >= '0' && s[i] <= '9')) return false;
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
    return IsDigits(body, j);
  }
  return j == body.size();
}

ManifestNode::Type ClassifyPlain(const std::string& s) {
  static const std::set<std::string, std::less<>> kBools = {
      "y",   "Y",   "yes",  "Yes",  "YES",  "n",     "N",     "no",    "No",  "NO",  "true",
      "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF"};
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    return ManifestNode::Type::kNull;
  }
  if (kBools.count(s)) return ManifestNode::Type::kBool;
  if (LooksLikeNumber(s)) return ManifestNode::Type::kNumber;
  return ManifestNode::Type::kString;
}

std::string Location(const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  return fmt::format("line {}, column {}: ", mark.line + 1, mark.column + 1);
}

// Converts one yaml-cpp node; a map key that is not a scalar is an error (with its line).
absl::Status FromYaml(const YAML::Node& node, ManifestNode& out, const std::string& source) {
  if (!node.IsDefined() || node.IsNull()) {
    out.type = ManifestNode::Type::kNull;
    return absl::OkStatus();
  }
  if (node.IsScalar()) {
    out.text = node.Scalar();
    out.type = node.Tag() == "?" ? ClassifyPlain(out.text) : ManifestNode::Type::kString;
    out.yaml_plain_number = out.type == ManifestNode::Type::kNumber;
    return absl::OkStatus();
  }
  if (node.IsSequence()) {
    out.type = ManifestNode::Type::kList;
    out.items.resize(node.size());
    size_t i = 0;
    for (YAML::const_iterator it = node.begin(); it != node.end(); ++it, ++i) {
      if (absl::Status s = FromYaml(*it, out.items[i], source); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  out.type = ManifestNode::Type::kMap;
  out.entries.reserve(node.size());
  for (YAML::const_iterator it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: {}map keys must be strings, got {}", source, Location(key.Mark()),
          key.IsMap() ? "a map" : key.IsSequence() ? "a list" : "null"));
    }
    out.entries.emplace_back(key.Scalar(), ManifestNode());
    if (absl::Status s = FromYaml(it->second, out.entries.back().second, source); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

// The `# Source: x` comment of each document: the last one between the previous document's
// first line and this document's first line (0-based lines).
std::vector<std::string> HelmSources(const std::string& text, const std::vector<int>& starts) {
  std::vector<std::pair<int, std::string>> comments;  // line -> source
  int line = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + pos, end - pos);
    constexpr std::string_view kPrefix = "# Source: ";
    if (l.substr(0, kPrefix.size()) == kPrefix) {
      std::string_view rest = l.substr(kPrefix.size());
      while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ')) rest.remove_suffix(1);
      comments.emplace_back(line, std::string(rest));
    }
    ++line;
    pos = end + 1;
  }
  std::vector<std::string> out(starts.size());
  int previous = -1;
  for (size_t d = 0; d < starts.size(); ++d) {
    for (const auto& [l, source] : comments) {
      if (l > previous && l < starts[d]) out[d] = source;
    }
    previous = starts[d];
  }
  return out;
}

absl::StatusOr<ManifestStream> ParseYaml(const std::string& text, const std::string& source) {
  std::vector<YAML::Node> documents;
  try {
    // yaml-cpp 0.7's LoadAll never returns on some malformed input; scan it first.
    const YamlDocumentScan scan = ScanYamlDocuments(text);
    if (scan.error.has_value()) {
      return absl::InvalidArgumentError(fmt::format("{}: {}malformed YAML: {}", source,
                                                    Location(scan.error->mark),
                                                    scan.error->message));
    }
    if (scan.stuck) {
      return absl::InvalidArgumentError(
          fmt::format("{}: {}malformed YAML: unexpected character here (did a line start with "
                      "',' or another stray symbol?)",
                      source, Location(scan.stuck_at)));
    }
    documents = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}malformed YAML: {}", source, Location(e.mark), e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}: malformed YAML: {}", source, e.what()));
  }
  ManifestStream stream;
  stream.documents.resize(documents.size());
  std::vector<int> starts;
  for (size_t i = 0; i < documents.size(); ++i) {
    try {
      if (absl::Status s = FromYaml(documents[i], stream.documents[i].root, source); !s.ok()) {
        return s;
      }
    } catch (const YAML::Exception& e) {
      return absl::InvalidArgumentError(fmt::format("{}: document {}: {}unreadable YAML: {}",
                                                    source, i + 1, Location(e.mark), e.msg));
    }
    const YAML::Mark mark = documents[i].Mark();
    starts.push_back(mark.is_null() ? (starts.empty() ? 0 : starts.back()) : mark.line);
  }
  if (text.find("# Source: ") != std::string::npos) {
    std::vector<std::string> sources = HelmSources(text, starts);
    for (size_t i = 0; i < sources.size(); ++i) stream.documents[i].helm_source = sources[i];
  }
  return stream;
}

// ---------------------------------------------------------------------------------------
// JSON, straight into the tree (nlohmann-json's SAX interface: no intermediate DOM).

// Fields podtopo never reads and that `kubectl get -o json` makes large are not stored:
// an object's `status` (at the root or as a List item) and `metadata.managedFields`. They
// are still parsed (syntax errors are reported), only not kept.
class TreeBuilder {
 public:
  using json = nlohmann::json;
  explicit TreeBuilder(ManifestNode* root) : root_(root) {}

  bool null() { return Scalar(ManifestNode::Type::kNull, ""); }
  bool boolean(bool v) { return Scalar(ManifestNode::Type::kBool, v ? "true" : "false"); }
  bool number_integer(json::number_integer_t v) {
    return Scalar(ManifestNode::Type::kNumber, std::to_string(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return Scalar(ManifestNode::Type::kNumber, std::to_string(v));
  }
  bool number_float(json::number_float_t, const json::string_t& text) {
    return Scalar(ManifestNode::Type::kNumber, text);
  }
  bool string(json::string_t& v) { return Scalar(ManifestNode::Type::kString, std::move(v)); }
  bool binary(json::binary_t&) { return Scalar(ManifestNode::Type::kString, ""); }
  bool start_object(size_t) { return Open(ManifestNode::Type::kMap); }
  bool key(json::string_t& k) {
    if (skip_depth_ > 0) return true;
    if ((IsObject(stack_.size()) && k == "status") ||
        (IsObject(stack_.size() - 1) && IsLastKey(stack_.size() - 1, "metadata") &&
         k == "managedFields")) {
      skip_next_ = true;
      return true;
    }
    stack_.back()->entries.emplace_back(std::move(k), ManifestNode());
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(size_t) { return Open(ManifestNode::Type::kList); }
  bool end_array() { return Close(); }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error_position_ = position;
    error_ = e.what();
    return false;
  }

  // Kubernetes objects nest a few levels; a limit keeps the tree (and its destructor) shallow.
  static constexpr size_t kMaxDepth = 512;
  bool too_deep() const { return too_deep_; }
  size_t error_position() const { return error_position_; }
  const std::string& error() const { return error_; }

 private:
  bool Open(ManifestNode::Type type) {
    if (skip_next_ || skip_depth_ > 0) {
      skip_next_ = false;
      ++skip_depth_;
      return skip_depth_ < kMaxDepth || TooDeep();
    }
    if (stack_.size() >= kMaxDepth) return TooDeep();
    ManifestNode& n = Next();
    n.type = type;
    stack_.push_back(&n);
    return true;
  }
  bool Close() {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return true;
    }
    stack_.pop_back();
    return true;
  }
  // The map at stack level `level` (1-based) is an object: the document's root map or an
  // item of the root's list (`items`).
  bool IsObject(size_t level) const {
    if (level == 1) return stack_[0]->type == ManifestNode::Type::kMap;
    return level == 3 && stack_[0]->type == ManifestNode::Type::kMap &&
           stack_[1]->type == ManifestNode::Type::kList &&
           stack_[2]->type == ManifestNode::Type::kMap;
  }
  // The last key the map at `level` got is `key` (its value is being read).
  bool IsLastKey(size_t level, std::string_view key) const {
    const ManifestNode* map = stack_[level - 1];
    return !map->entries.empty() && map->entries.back().first == key;
  }
  bool TooDeep() {
    error_ = fmt::format("nested deeper than {} levels", kMaxDepth);
    too_deep_ = true;
    return false;
  }
  // The node the next value fills: the root, a list's new item or the last key's value.
  ManifestNode& Next() {
    if (stack_.empty()) return *root_;
    ManifestNode* parent = stack_.back();
    if (parent->type == ManifestNode::Type::kList) return parent->items.emplace_back();
    return parent->entries.back().second;
  }
  bool Scalar(ManifestNode::Type type, std::string text) {
    if (skip_next_ || skip_depth_ > 0) {
      skip_next_ = false;
      return true;
    }
    ManifestNode& n = Next();
    n.type = type;
    n.text = std::move(text);
    return true;
  }

  ManifestNode* root_;
  std::vector<ManifestNode*> stack_;
  bool skip_next_ = false;  // the value of a skipped key comes next
  size_t skip_depth_ = 0;   // inside a skipped value, this many levels deep
  size_t error_position_ = 0;
  std::string error_;
  bool too_deep_ = false;
};

std::string JsonLocation(const std::string& text, size_t position) {
  // nlohmann counts the byte that failed as position (1-based).
  const size_t at = std::min(position > 0 ? position - 1 : 0, text.size());
  const size_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
  const size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
  const size_t column = line_start == std::string::npos || at == 0 ? at + 1 : at - line_start;
  return fmt::format("line {}, column {}: ", line, column);
}

}  // namespace

absl::StatusOr<ManifestStream> ParseManifestText(const std::string& text,
                                                 const std::string& source_name) {
  // go-yaml and encoding/json refuse what is not UTF-8 (kubectl and the API server never see
  // it); yaml-cpp would take the bytes, and every JSON podtopo writes of the pod would throw.
  if (std::optional<InvalidUtf8> bad = FindInvalidUtf8(text)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: line {}, column {}: invalid UTF-8 (byte 0x{:02x})", source_name,
                    bad->line, bad->column, bad->byte));
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    ManifestStream stream;
    stream.json = true;
    stream.documents.resize(1);
    TreeBuilder builder(&stream.documents[0].root);
    if (nlohmann::json::sax_parse(text, &builder)) return stream;
    if (builder.too_deep()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: malformed JSON: {}", source_name, builder.error()));
    }
    // Flow-style YAML also starts with `{`: read it as YAML when it is that.
    absl::StatusOr<ManifestStream> yaml = ParseYaml(text, source_name);
    if (yaml.ok()) return yaml;
    std::string message = builder.error();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
    if (size_t colon = message.find("column "); colon != std::string::npos) {
      if (size_t next = message.find(": ", colon); next != std::string::npos) {
        message = message.substr(next + 2);
      }
    }
    return absl::InvalidArgumentError(fmt::format("{}: {}malformed JSON: {}", source_name,
                                                  JsonLocation(text, builder.error_position()),
                                                  message));
  }
  return ParseYaml(text, source_name);
}

}  // namespace podtopo
