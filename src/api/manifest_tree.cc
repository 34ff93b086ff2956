#include "api/manifest_tree.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "nlohmann/json.hpp"
#include "simdjson.h"
#include "util/go_strconv.h"
#include <yaml.h>  // libyaml

namespace podtopo {
namespace {

// ---------------------------------------------------------------------------------------
// YAML 1.1 plain scalars as go-yaml v2 resolves them.

bool IsDigits(std::string_view s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    if (!(s[i] >= '0' && s[i] <= '9')) return false;
  }
  return true;
}

bool LooksLikeNumber(std::string_view s) {
  size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  const std::string_view body = s.substr(i);
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

bool IsYamlBool(std::string_view s) {
  // Only these 22 spellings (go-yaml v2's resolve table); longer text is never one, nor text
  // that starts with another letter.
  if (s.empty() || s.size() > 5) return false;
  switch (s[0]) {
    case 'y': case 'Y': case 'n': case 'N': case 't': case 'T': case 'f': case 'F': case 'o':
    case 'O':
      break;
    default:
      return false;
  }
  for (std::string_view b : {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true",
                             "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off",
                             "Off", "OFF"}) {
    if (s == b) return true;
  }
  return false;
}

ManifestNode::Type ClassifyPlain(std::string_view s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    return ManifestNode::Type::kNull;
  }
  if (IsYamlBool(s)) return ManifestNode::Type::kBool;
  if (LooksLikeNumber(s)) return ManifestNode::Type::kNumber;
  return ManifestNode::Type::kString;
}

// ---------------------------------------------------------------------------------------
// The tree, built from a stream of parse events (nlohmann-json's SAX calls, libyaml's events).

// Fields podtopo never reads and that `kubectl get -o json|yaml` makes large are not stored:
// an object's `status` (at the root or as a List item) and `metadata.managedFields`. They
// are still parsed (syntax errors are reported), only not kept.
class TreeBuilder {
 public:
  // What `root` is in its document. A part of a kubectl List read on its own (the parallel
  // paths) gets the same skipping and depth limit as in the whole document.
  enum class Root : uint8_t {
    kDocument,
    kListItem,   // an item of the document's top-level list (`items`)
    kListItems,  // the top-level list itself (some of its items)
  };
  explicit TreeBuilder(ManifestNode* root, bool skip_unread = true, Root kind = Root::kDocument)
      : root_(root), skip_unread_(skip_unread), kind_(kind) {
    scratch_.reserve(16);
  }

  // Kubernetes objects nest a few levels; a limit keeps the tree (and its destructor) shallow.
  static constexpr size_t kMaxDepth = 512;

  // A map's next key (its value comes next).
  void Key(std::string k) {
    if (skip_depth_ > 0) return;
    if (skip_unread_ &&
        ((IsObject(stack_.size()) && k == "status") ||
         (IsObject(stack_.size() - 1) && IsLastKey(stack_.size() - 1, "metadata") &&
          k == "managedFields"))) {
      skip_next_ = true;
      return;
    }
    scratch_[stack_.size() - 1].entries.emplace_back(std::move(k), ManifestNode());
  }
  // A map or list starts; false when it nests too deep.
  bool Open(ManifestNode::Type type) {
    if (skip_next_ || skip_depth_ > 0) {
      skip_next_ = false;
      ++skip_depth_;
      return skip_depth_ < kMaxDepth || TooDeep();
    }
    const size_t above = kind_ == Root::kListItem ? 2 : kind_ == Root::kListItems ? 1 : 0;
    if (stack_.size() + above >= kMaxDepth) return TooDeep();
    ManifestNode& n = Next();
    n.type = type;
    stack_.push_back(&n);
    if (scratch_.size() < stack_.size()) scratch_.emplace_back();
    return true;
  }
  // The innermost open map or list ends; returns it (null when it was skipped).
  const ManifestNode* Close() {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return nullptr;
    }
    ManifestNode* n = stack_.back();
    Scratch& children = scratch_[stack_.size() - 1];
    if (n->type == ManifestNode::Type::kMap) {
      n->entries.assign(std::make_move_iterator(children.entries.begin()),
                        std::make_move_iterator(children.entries.end()));
      children.entries.clear();
    } else {
      n->items.assign(std::make_move_iterator(children.items.begin()),
                      std::make_move_iterator(children.items.end()));
      children.items.clear();
    }
    stack_.pop_back();
    return n;
  }
  // The node a scalar (or an alias's copy) fills, to be filled by the caller; null when the
  // value is skipped.
  ManifestNode* NextValue() {
    if (skip_next_ || skip_depth_ > 0) {
      skip_next_ = false;
      return nullptr;
    }
    return &Next();
  }
  void Scalar(ManifestNode::Type type, std::string text) {
    if (ManifestNode* n = NextValue()) {
      n->type = type;
      n->text = std::move(text);
    }
  }

  bool too_deep() const { return too_deep_; }
  const std::string& error() const { return error_; }

 private:
  // The map at stack level `level` (1-based) is an object: the document's root map or an
  // item of the root's list (`items`).
  bool IsObject(size_t level) const {
    if (kind_ == Root::kListItem) return level == 1 && stack_[0]->type == ManifestNode::Type::kMap;
    if (kind_ == Root::kListItems) {
      return level == 2 && stack_[0]->type == ManifestNode::Type::kList &&
             stack_[1]->type == ManifestNode::Type::kMap;
    }
    if (level == 1) return stack_[0]->type == ManifestNode::Type::kMap;
    return level == 3 && stack_[0]->type == ManifestNode::Type::kMap &&
           stack_[1]->type == ManifestNode::Type::kList &&
           stack_[2]->type == ManifestNode::Type::kMap;
  }
  // The last key the map at `level` got is `key` (its value is being read).
  bool IsLastKey(size_t level, std::string_view key) const {
    const auto& entries = scratch_[level - 1].entries;
    return !entries.empty() && entries.back().first == key;
  }
  bool TooDeep() {
    error_ = fmt::format("nested deeper than {} levels", kMaxDepth);
    too_deep_ = true;
    return false;
  }
  // The node the next value fills: the root, a list's new item or the last key's value.
  ManifestNode& Next() {
    if (stack_.empty()) return *root_;
    Scratch& siblings = scratch_[stack_.size() - 1];
    if (stack_.back()->type == ManifestNode::Type::kList) return siblings.items.emplace_back();
    return siblings.entries.back().second;
  }

  // The children of an open map or list are gathered here, one buffer per depth kept for the
  // next collection at that depth, and moved into it when it closes: each map and list of
  // the tree is then allocated once, at its size (growing each one in place allocated and
  // moved it about log2(size) times, and left up to half of it unused).
  struct Scratch {
    std::vector<std::pair<std::string, ManifestNode>> entries;
    std::vector<ManifestNode> items;
  };

  ManifestNode* root_;
  bool skip_unread_;
  Root kind_;
  std::vector<ManifestNode*> stack_;  // the open maps and lists, outermost first
  std::vector<Scratch> scratch_;      // scratch_[i]: the children of stack_[i] so far
  bool skip_next_ = false;  // the value of a skipped key comes next
  size_t skip_depth_ = 0;   // inside a skipped value, this many levels deep
  std::string error_;
  bool too_deep_ = false;
};

// ---------------------------------------------------------------------------------------
// YAML, with libyaml's event parser (the C reference parser: one pass, no node graph).

// The `# Source: x` comment of each document: the last one between the previous document's
// first line and this document's first line (0-based lines).
std::vector<std::string> HelmSources(std::string_view text, const std::vector<size_t>& starts) {
  std::vector<std::pair<size_t, std::string>> comments;  // line -> source
  size_t line = 0;
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
  for (size_t d = 0; d < starts.size(); ++d) {
    for (const auto& [l, source] : comments) {
      if ((d == 0 || l > starts[d - 1]) && l < starts[d]) out[d] = source;
    }
  }
  return out;
}

std::string Location(const yaml_mark_t& mark) {
  return fmt::format("line {}, column {}: ", mark.line + 1, mark.column + 1);
}

size_t CountNodes(const ManifestNode& n) {
  size_t count = 1;
  for (const auto& item : n.items) count += CountNodes(item);
  for (const auto& [key, value] : n.entries) count += CountNodes(value);
  return count;
}

struct YamlParser {
  yaml_parser_t parser;
  YamlParser() { yaml_parser_initialize(&parser); }
  ~YamlParser() { yaml_parser_delete(&parser); }
  YamlParser(const YamlParser&) = delete;
  YamlParser& operator=(const YamlParser&) = delete;
};

struct YamlEvent {
  yaml_event_t event;
  bool filled = false;
  ~YamlEvent() {
    if (filled) yaml_event_delete(&event);
  }
};

absl::StatusOr<ManifestStream> ParseYaml(std::string_view text, const std::string& source,
                                         TreeBuilder::Root root_kind = TreeBuilder::Root::kDocument) {
  // Aliases copy the anchored node; this many nodes in all keeps "billion laughs" small.
  constexpr size_t kMaxAliasNodes = 1000000;
  auto syntax_error = [&](const yaml_mark_t& mark, const std::string& message) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}malformed YAML: {}", source, Location(mark), message));
  };
  YamlParser p;
  yaml_parser_set_input_string(&p.parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  ManifestStream stream;
  std::vector<size_t> starts;  // each document's first line
  // The skipped fields can hold an anchor another field's alias uses: skip only without '&'.
  const bool skip_unread = text.find('&') == std::string_view::npos;
  std::unique_ptr<TreeBuilder> builder;
  // Per open collection: a list, or a map whose next event is a key or a value.
  enum class Frame : uint8_t { kList, kMapKey, kMapValue };
  std::vector<Frame> frames;
  std::map<std::string, ManifestNode, std::less<>> anchors;
  std::vector<std::string> open_anchors;  // the anchor of each open collection ("" = none)
  size_t alias_nodes = 0;
  bool root_seen = false;
  // After a value is complete, its map waits for the next key.
  auto value_done = [&] {
    if (!frames.empty() && frames.back() == Frame::kMapValue) frames.back() = Frame::kMapKey;
  };
  auto keep_anchor = [&](const yaml_char_t* anchor, const ManifestNode* node) {
    if (anchor != nullptr && node != nullptr) {
      anchors[reinterpret_cast<const char*>(anchor)] = *node;
    }
  };
  for (;;) {
    YamlEvent e;
    if (!yaml_parser_parse(&p.parser, &e.event)) {
      std::string message = p.parser.problem != nullptr ? p.parser.problem : "unreadable input";
      if (p.parser.context != nullptr) {
        message += fmt::format(" ({} that starts at line {}, column {})", p.parser.context,
                               p.parser.context_mark.line + 1, p.parser.context_mark.column + 1);
      }
      return syntax_error(p.parser.problem_mark, message);
    }
    e.filled = true;
    const yaml_event_t& ev = e.event;
    const bool is_key = !frames.empty() && frames.back() == Frame::kMapKey;
    if (builder != nullptr && !root_seen &&
        (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT ||
         ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT)) {
      root_seen = true;
      starts.push_back(ev.start_mark.line);
    }
    switch (ev.type) {
      case YAML_STREAM_END_EVENT: {
        if (text.find("# Source: ") != std::string_view::npos) {
          std::vector<std::string> sources = HelmSources(text, starts);
          for (size_t i = 0; i < sources.size(); ++i) stream.documents[i].helm_source = sources[i];
        }
        return stream;
      }
      case YAML_DOCUMENT_START_EVENT:
        stream.documents.emplace_back();
        builder =
            std::make_unique<TreeBuilder>(&stream.documents.back().root, skip_unread, root_kind);
        root_seen = false;
        break;
      case YAML_DOCUMENT_END_EVENT:
        builder.reset();
        anchors.clear();
        break;
      case YAML_SCALAR_EVENT: {
        const std::string_view value(reinterpret_cast<const char*>(ev.data.scalar.value),
                                     ev.data.scalar.length);
        const bool plain = ev.data.scalar.tag == nullptr && ev.data.scalar.plain_implicit &&
                           ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        const ManifestNode::Type type = plain ? ClassifyPlain(value) : ManifestNode::Type::kString;
        if (is_key) {
          if (type == ManifestNode::Type::kNull) {
            return absl::InvalidArgumentError(fmt::format(
                "{}: {}map keys must be strings, got null", source, Location(ev.start_mark)));
          }
          if (ev.data.scalar.anchor != nullptr) {
            ManifestNode key;
            key.type = type;
            key.text = std::string(value);
            keep_anchor(ev.data.scalar.anchor, &key);
          }
          builder->Key(std::string(value));
          frames.back() = Frame::kMapValue;
          break;
        }
        // Nothing is skipped when the text has anchors (skip_unread), so an anchored scalar
        // always has its node.
        if (ManifestNode* n = builder->NextValue()) {
          n->type = type;
          n->yaml_plain_number = type == ManifestNode::Type::kNumber;
          n->text = value;
          keep_anchor(ev.data.scalar.anchor, n);
        }
        value_done();
        break;
      }
      case YAML_ALIAS_EVENT: {
        auto it = anchors.find(reinterpret_cast<const char*>(ev.data.alias.anchor));
        if (it == anchors.end()) {
          return syntax_error(ev.start_mark,
                              fmt::format("the alias *{} names no anchor defined before it",
                                          reinterpret_cast<const char*>(ev.data.alias.anchor)));
        }
        alias_nodes += CountNodes(it->second);
        if (alias_nodes > kMaxAliasNodes) {
          return syntax_error(ev.start_mark, fmt::format("aliases expand to more than {} nodes",
                                                         kMaxAliasNodes));
        }
        if (is_key) {
          if (!it->second.IsScalar()) {
            return absl::InvalidArgumentError(fmt::format(
                "{}: {}map keys must be strings, got {}", source, Location(ev.start_mark),
                it->second.IsMap() ? "a map" : it->second.IsList() ? "a list" : "null"));
          }
          builder->Key(it->second.text);
          frames.back() = Frame::kMapValue;
          break;
        }
        if (ManifestNode* n = builder->NextValue()) *n = it->second;
        value_done();
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        const bool map = ev.type == YAML_MAPPING_START_EVENT;
        if (is_key) {
          return absl::InvalidArgumentError(fmt::format("{}: {}map keys must be strings, got {}",
                                                        source, Location(ev.start_mark),
                                                        map ? "a map" : "a list"));
        }
        if (!builder->Open(map ? ManifestNode::Type::kMap : ManifestNode::Type::kList)) {
          return absl::InvalidArgumentError(fmt::format(
              "{}: {}malformed YAML: {}", source, Location(ev.start_mark), builder->error()));
        }
        const yaml_char_t* anchor =
            map ? ev.data.mapping_start.anchor : ev.data.sequence_start.anchor;
        open_anchors.push_back(anchor != nullptr ? reinterpret_cast<const char*>(anchor) : "");
        frames.push_back(map ? Frame::kMapKey : Frame::kList);
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        const ManifestNode* closed = builder->Close();
        if (!open_anchors.back().empty() && closed != nullptr) {
          anchors[open_anchors.back()] = *closed;
        }
        open_anchors.pop_back();
        frames.pop_back();
        value_done();
        break;
      }
      default:  // STREAM_START, NO_EVENT
        break;
    }
  }
}

// The root of a List read without its items (the parallel paths): its `items`, an empty
// list; null when `items` is missing, written twice (one pass says what that means) or not
// an empty list.
ManifestNode* EmptyItems(ManifestNode& root) {
  ManifestNode* items = nullptr;
  for (auto& [key, value] : root.entries) {
    if (key != "items") continue;
    if (items != nullptr) return nullptr;
    items = &value;
  }
  if (items == nullptr || !items->IsList() || !items->items.empty()) return nullptr;
  return items;
}

// kubectl's List as `-o yaml` writes it: a root map whose `items:` key, at column 0, holds a
// block sequence written at column 0, one item per line starting with `-`. Where the items
// are; nullopt for any other text, and for text with anything that could tie one item to
// another or make a line at column 0 mean something else: anchors (`&`), directives and
// document markers (lines starting with `%`, `---` or `...`), tabs, Helm's `# Source:`.
// The items are then read on several threads, each a run of items parsed as a list of its
// own: an item's scalars, quoted or not, cannot go on past a `-` at column 0 (any text cut
// there does not parse, and the caller reads the whole text again in one pass).
struct YamlListSpans {
  size_t value_begin = 0;           // just after `items:`
  size_t end = 0;                   // the first line after the items
  std::vector<size_t> item_begins;  // each item's `-` line
};

std::optional<YamlListSpans> FindYamlListItems(std::string_view text) {
  if (text.find('&') != std::string_view::npos || text.find('\t') != std::string_view::npos ||
      text.find("# Source: ") != std::string_view::npos) {
    return std::nullopt;
  }
  YamlListSpans spans;
  enum class State { kBefore, kItems, kAfter } state = State::kBefore;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    const size_t next = eol == std::string_view::npos ? text.size() : eol + 1;
    // Most lines are indented lines inside an item: nothing below looks further at them.
    if (text[pos] == ' ' && (state != State::kItems || !spans.item_begins.empty())) {
      pos = next;
      continue;
    }
    std::string_view line = text.substr(pos, next - pos);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (line.starts_with('%') || line.starts_with("---") || line.starts_with("...")) {
      return std::nullopt;
    }
    const bool column0 = !line.empty() && line[0] != ' ' && line[0] != '#';
    const bool dash = line == "-" || line.starts_with("- ");
    switch (state) {
      case State::kBefore:
        if (line == "items:") {
          state = State::kItems;
          spans.value_begin = pos + line.size();
        }
        break;
      case State::kItems:
        if (dash) {
          spans.item_begins.push_back(pos);
        } else if (column0) {
          spans.end = pos;
          state = State::kAfter;
        } else if (spans.item_begins.empty() && !line.empty() && line[0] == ' ') {
          return std::nullopt;  // an indented sequence or a map: not kubectl's layout
        }
        break;
      case State::kAfter:
        if (dash) return std::nullopt;
        break;
    }
    pos = next;
  }
  if (state == State::kBefore || spans.item_begins.empty()) return std::nullopt;
  if (state == State::kItems) spans.end = text.size();
  return spans;
}

// The YAML List read with its items spread over threads; nullopt when the text is not such a
// List or any part does not parse alone (the caller then reads it in one pass).
std::optional<ManifestStream> ParseYamlListInParallel(const std::string& text,
                                                      const std::string& source) {
  std::optional<YamlListSpans> spans = FindYamlListItems(text);
  if (!spans.has_value() || spans->item_begins.size() < 2) return std::nullopt;
  // The root without its items.
  std::string rest = text.substr(0, spans->value_begin) + " []\n" + text.substr(spans->end);
  absl::StatusOr<ManifestStream> root_stream = ParseYaml(rest, source);
  if (!root_stream.ok() || root_stream->documents.size() != 1) return std::nullopt;
  ManifestNode& root = root_stream->documents[0].root;
  ManifestNode* items = EmptyItems(root);
  if (items == nullptr) return std::nullopt;
  const size_t count = spans->item_begins.size();
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<std::optional<ManifestStream>> parts(threads);
  auto parse_range = [&](size_t t) {
    const size_t first = count * t / threads, last = count * (t + 1) / threads;
    if (first == last) return;
    const size_t begin = spans->item_begins[first];
    const size_t end = last < count ? spans->item_begins[last] : spans->end;
    absl::StatusOr<ManifestStream> part = ParseYaml(
        std::string_view(text).substr(begin, end - begin), source, TreeBuilder::Root::kListItems);
    if (part.ok() && part->documents.size() == 1 && part->documents[0].root.IsList() &&
        part->documents[0].root.items.size() == last - first) {
      parts[t] = std::move(*part);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(parse_range, t);
  parse_range(0);
  for (auto& th : pool) th.join();
  items->items.reserve(count);
  for (size_t t = 0; t < threads; ++t) {
    if (count * t / threads == count * (t + 1) / threads) continue;
    if (!parts[t].has_value()) return std::nullopt;
    auto& part_items = parts[t]->documents[0].root.items;
    items->items.insert(items->items.end(), std::make_move_iterator(part_items.begin()),
                        std::make_move_iterator(part_items.end()));
  }
  return std::move(*root_stream);
}

// ---------------------------------------------------------------------------------------
// JSON, straight into the tree (nlohmann-json's SAX interface: no intermediate DOM).

class JsonSax {
 public:
  using json = nlohmann::json;
  explicit JsonSax(ManifestNode* root, bool list_item = false)
      : tree_(root, true, list_item ? TreeBuilder::Root::kListItem : TreeBuilder::Root::kDocument) {}

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
  bool start_object(size_t) { return tree_.Open(ManifestNode::Type::kMap); }
  bool key(json::string_t& k) {
    tree_.Key(std::move(k));
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(size_t) { return tree_.Open(ManifestNode::Type::kList); }
  bool end_array() { return Close(); }
  bool parse_error(size_t position, const std::string&, const nlohmann::detail::exception& e) {
    error_position_ = position;
    error_ = e.what();
    return false;
  }

  const TreeBuilder& tree() const { return tree_; }
  size_t error_position() const { return error_position_; }
  const std::string& error() const { return error_; }

 private:
  bool Scalar(ManifestNode::Type type, std::string text) {
    tree_.Scalar(type, std::move(text));
    return true;
  }
  bool Close() {
    tree_.Close();
    return true;
  }

  TreeBuilder tree_;
  size_t error_position_ = 0;
  std::string error_;
};

// One item of a big JSON List read with simdjson's DOM parser (several times faster than
// nlohmann's lexer), into the tree through the TreeBuilder calls JsonSax makes for the same
// text. It declines (false) whatever nlohmann might read otherwise, and the caller then parses
// the item with nlohmann: any simdjson error, a number simdjson does not hold as an exact
// integer (floats, which the tree keeps as written, and integers beyond 64 bits), and text
// with a `\u` escape (nlohmann's own rules for lone surrogates decide). Integers are written
// as JsonSax writes them (std::to_string of the value), strings are the unescaped UTF-8 both
// parsers give, and keys written twice stay twice, in order.
class SimdjsonItemReader {
 public:
  bool Read(std::string_view json, ManifestNode* root) {
    if (json.find("\\u") != std::string_view::npos) return false;
    simdjson::dom::element doc;
    if (parser_.parse(json.data(), json.size(), /*realloc_if_needed=*/true).get(doc) !=
        simdjson::SUCCESS) {
      return false;
    }
    TreeBuilder tree(root, true, TreeBuilder::Root::kListItem);
    if (Walk(doc, tree)) return true;
    *root = ManifestNode();
    return false;
  }

 private:
  bool Walk(const simdjson::dom::element& e, TreeBuilder& tree) {
    using simdjson::dom::element_type;
    switch (e.type()) {
      case element_type::ARRAY:
        if (!tree.Open(ManifestNode::Type::kList)) return false;
        for (simdjson::dom::element child : simdjson::dom::array(e)) {
          if (!Walk(child, tree)) return false;
        }
        tree.Close();
        return true;
      case element_type::OBJECT:
        if (!tree.Open(ManifestNode::Type::kMap)) return false;
        for (simdjson::dom::key_value_pair field : simdjson::dom::object(e)) {
          tree.Key(std::string(field.key));
          if (!Walk(field.value, tree)) return false;
        }
        tree.Close();
        return true;
      case element_type::INT64:
        tree.Scalar(ManifestNode::Type::kNumber, std::to_string(int64_t(e)));
        return true;
      case element_type::UINT64:
        tree.Scalar(ManifestNode::Type::kNumber, std::to_string(uint64_t(e)));
        return true;
      case element_type::STRING:
        tree.Scalar(ManifestNode::Type::kString, std::string(std::string_view(e)));
        return true;
      case element_type::BOOL:
        tree.Scalar(ManifestNode::Type::kBool, bool(e) ? "true" : "false");
        return true;
      case element_type::NULL_VALUE:
        tree.Scalar(ManifestNode::Type::kNull, "");
        return true;
      case element_type::DOUBLE:
        return false;
    }
    return false;
  }

  simdjson::dom::parser parser_;
};

// kubectl's List of many objects, `{..., "items": [{...}, {...}, ...], ...}`: where the
// top-level `items` array is and where each of its elements starts and ends. A structural
// scan only (strings and nesting); the parsing is nlohmann's.
struct ListSpans {
  size_t items_begin = 0, items_end = 0;              // the '[' and one past the ']'
  std::vector<std::pair<size_t, size_t>> elements;  // [begin, end) of each item
};

std::optional<ListSpans> FindListItems(const std::string& text) {
  const size_t n = text.size();
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i == std::string::npos || text[i] != '{') return std::nullopt;
  int depth = 0;
  ListSpans spans;
  bool in_items = false;
  size_t element_begin = std::string::npos;
  std::string_view last_string;  // the last string at depth 1 (a key when ':' follows)
  auto skip_ws = [&](size_t at) {
    while (at < n && (text[at] == ' ' || text[at] == '\t' || text[at] == '\r' || text[at] == '\n')) ++at;
    return at;
  };
  for (; i < n; ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t begin = i + 1;
      for (++i; i < n && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i >= n) return std::nullopt;
      if (depth == 1) last_string = std::string_view(text.data() + begin, i - begin);
      if (in_items && depth == 2 && element_begin == std::string::npos) element_begin = begin - 1;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (in_items && depth == 2 && element_begin == std::string::npos && c != ']' && c != ',') {
      element_begin = i;
    }
    switch (c) {
      case '{':
      case '[':
        ++depth;
        break;
      case '}':
      case ']':
        if (in_items && depth == 2) {
          if (c != ']') return std::nullopt;
          if (element_begin != std::string::npos) {
            spans.elements.emplace_back(element_begin, i);
          } else if (!spans.elements.empty()) {
            return std::nullopt;  // `[1, ]`
          }
          spans.items_end = i + 1;
          return spans;
        }
        --depth;
        if (depth == 0) return std::nullopt;  // the root ended without items
        break;
      case ',':
        if (in_items && depth == 2) {
          if (element_begin == std::string::npos) return std::nullopt;
          spans.elements.emplace_back(element_begin, i);
          element_begin = std::string::npos;
        }
        break;
      case ':':
        if (depth == 1 && !in_items && last_string == "items") {
          const size_t v = skip_ws(i + 1);
          if (v >= n || text[v] != '[') return std::nullopt;
          in_items = true;
          spans.items_begin = v;
          i = v;
          ++depth;
        }
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

// The JSON List read with its items spread over threads; nullopt when the text is not such a
// List or any part does not parse (the caller then reads it in one pass, for the error).
std::optional<ManifestStream> ParseJsonListInParallel(const std::string& text) {
  std::optional<ListSpans> spans = FindListItems(text);
  if (!spans.has_value() || spans->elements.size() < 2) return std::nullopt;
  // The root without its items.
  std::string rest = text.substr(0, spans->items_begin) + "[]" + text.substr(spans->items_end);
  ManifestStream stream;
  stream.json = true;
  stream.documents.resize(1);
  ManifestNode& root = stream.documents[0].root;
  JsonSax root_sax(&root);
  if (!nlohmann::json::sax_parse(rest, &root_sax)) return std::nullopt;
  ManifestNode* items = EmptyItems(root);
  if (items == nullptr) return std::nullopt;
  const size_t count = spans->elements.size();
  items->items.resize(count);
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<char> ok(threads, 1);
  auto parse_range = [&](size_t t) {
    SimdjsonItemReader fast;
    for (size_t k = count * t / threads; k < count * (t + 1) / threads && ok[t]; ++k) {
      const auto [begin, end] = spans->elements[k];
      if (fast.Read(std::string_view(text).substr(begin, end - begin), &items->items[k])) {
        continue;
      }
      JsonSax sax(&items->items[k], /*list_item=*/true);
      ok[t] = nlohmann::json::sax_parse(text.data() + begin, text.data() + end, &sax);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(parse_range, t);
  parse_range(0);
  for (auto& th : pool) th.join();
  if (std::find(ok.begin(), ok.end(), 0) != ok.end()) return std::nullopt;
  return stream;
}

// True when the JSON error at `position` (nlohmann's, 1-based) is a `}` or `]` right after a
// comma (blanks between).
bool TrailingComma(const std::string& text, size_t position) {
  if (position < 2 || position > text.size()) return false;
  const char closing = text[position - 1];
  if (closing != '}' && closing != ']') return false;
  const size_t before = text.find_last_not_of(" \t\r\n", position - 2);
  return before != std::string::npos && text[before] == ',';
}

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
                                                 const std::string& source_name,
                                                 const ManifestParseOptions& options) {
  // go-yaml and encoding/json refuse what is not UTF-8 (kubectl and the API server never see
  // it); yaml-cpp would take the bytes, and every JSON podtopo writes of the pod would throw.
  if (std::optional<InvalidUtf8> bad = FindInvalidUtf8(text)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: line {}, column {}: invalid UTF-8 (byte 0x{:02x})", source_name,
                    bad->line, bad->column, bad->byte));
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && (text[first] == '{' || text[first] == '[')) {
    if (text.size() >= options.parallel_json_bytes) {
      if (std::optional<ManifestStream> list = ParseJsonListInParallel(text)) return std::move(*list);
    }
    ManifestStream stream;
    stream.json = true;
    stream.documents.resize(1);
    JsonSax sax(&stream.documents[0].root);
    if (nlohmann::json::sax_parse(text, &sax)) return stream;
    if (sax.tree().too_deep()) {
      return absl::InvalidArgumentError(
          fmt::format("{}: malformed JSON: {}", source_name, sax.tree().error()));
    }
    // Flow-style YAML also starts with `{`: read it as YAML when it is that. Not past a
    // trailing comma (`"image": "x",}`), which YAML's flow collections allow and JSON does
    // not: kubectl reads such a file as JSON and refuses it.
    const bool trailing_comma = TrailingComma(text, sax.error_position());
    if (!trailing_comma) {
      absl::StatusOr<ManifestStream> yaml = ParseYaml(text, source_name);
      if (yaml.ok()) return yaml;
    }
    std::string message = sax.error();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
    if (size_t colon = message.find("column "); colon != std::string::npos) {
      if (size_t next = message.find(": ", colon); next != std::string::npos) {
        message = message.substr(next + 2);
      }
    }
    if (trailing_comma) {
      message = fmt::format("a trailing comma before '{}' (JSON allows none, and kubectl "
                            "refuses it; remove the comma): {}",
                            text[sax.error_position() - 1], message);
    }
    return absl::InvalidArgumentError(fmt::format("{}: {}malformed JSON: {}", source_name,
                                                  JsonLocation(text, sax.error_position()),
                                                  message));
  }
  if (text.size() >= options.parallel_yaml_bytes) {
    if (std::optional<ManifestStream> list = ParseYamlListInParallel(text, source_name)) {
      return std::move(*list);
    }
  }
  return ParseYaml(text, source_name);
}

void FreeManifestStream(ManifestStream stream) {
  constexpr size_t kParallelItems = 1000;
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  if (threads < 2) return;
  for (ManifestDocument& doc : stream.documents) {
    for (auto& [key, value] : doc.root.entries) {
      if (!value.IsList() || value.items.size() < kParallelItems) continue;
      std::vector<ManifestNode>& items = value.items;
      auto free_range = [&](size_t t) {
        for (size_t k = items.size() * t / threads; k < items.size() * (t + 1) / threads; ++k) {
          items[k] = ManifestNode();
        }
      };
      std::vector<std::thread> pool;
      for (size_t t = 1; t < threads; ++t) pool.emplace_back(free_range, t);
      free_range(0);
      for (auto& th : pool) th.join();
    }
  }
}

}  // namespace podtopo
