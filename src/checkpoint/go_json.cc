#include "checkpoint/go_json.h"

#include <cstring>

#include "fmt/format.h"
#include "util/go_strconv.h"

namespace podtopo::checkpoint::gojson {
namespace {

constexpr int kMaxNestingDepth = 10000;  // Go's maxNestingDepth
constexpr char kUnexpectedEnd[] = "unexpected end of JSON input";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

Value::~Value() {
  if (array.empty() && object.empty()) return;
  // Children are moved out before they are destroyed, so that each destructor sees no
  // children of its own: the depth of the tree never becomes the depth of the native stack.
  std::vector<Value> pending;
  auto take_children = [&pending](Value& v) {
    for (Value& e : v.array) pending.push_back(std::move(e));
    for (auto& member : v.object) pending.push_back(std::move(member.second));
    v.array.clear();
    v.object.clear();
  };
  take_children(*this);
  while (!pending.empty()) {
    Value v = std::move(pending.back());
    pending.pop_back();
    take_children(v);
  }
}

namespace {

// ---------------------------------------------------------------------------------------
// Parser: checkValid and decoding in one pass. Errors follow Go's scanner texts, including
// its end-of-input rule (a truncated number or literal reports "invalid character ' '").

class Parser {
 public:
  explicit Parser(std::string_view data) : s_(data) {}

  absl::StatusOr<Value> ParseDocument() {
    Value v;
    if (!ParseNested(v)) return absl::InvalidArgumentError(error_);
    SkipSpace();
    if (pos_ < s_.size()) {
      return absl::InvalidArgumentError(
          fmt::format("invalid character {} after top-level value", QuoteChar(Cur())));
    }
    return v;
  }

 private:
  unsigned char Cur() const { return static_cast<unsigned char>(s_[pos_]); }
  bool AtEnd() const { return pos_ >= s_.size(); }
  void SkipSpace() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
  }
  bool Fail(std::string msg) {
    error_ = std::move(msg);
    return false;
  }
  bool FailChar(unsigned char c, std::string_view context) {
    return Fail(fmt::format("invalid character {} {}", QuoteChar(c), context));
  }
  bool FailEnd() { return Fail(kUnexpectedEnd); }

  // One value and everything nested in it, with an explicit stack of the open arrays and
  // objects rather than recursion: Go's limit of 10,000 levels would otherwise take 10,000
  // native frames (too many for a sanitizer build's stack).
  bool ParseNested(Value& root) {
    std::vector<Value*> open;  // innermost last; each is an element of the one before it
    Value* target = &root;     // where the next value goes
    while (true) {
      SkipSpace();
      if (AtEnd()) return FailEnd();
      unsigned char c = Cur();
      if (c == '{' || c == '[') {
        if (open.size() + 1 > static_cast<size_t>(kMaxNestingDepth)) {
          return FailChar(c, "exceeded max depth");
        }
        ++pos_;
        target->kind = c == '{' ? Value::Kind::kObject : Value::Kind::kArray;
        SkipSpace();
        if (AtEnd()) return FailEnd();
        if (Cur() != (c == '{' ? '}' : ']')) {
          open.push_back(target);
          if (!OpenMember(*target, target)) return false;
          continue;
        }
        ++pos_;  // an empty array or object
      } else if (!ParseScalar(*target, c)) {
        return false;
      }
      // After a complete value: close the containers it completes, then open the next member.
      while (true) {
        if (open.empty()) return true;
        Value& parent = *open.back();
        bool object = parent.kind == Value::Kind::kObject;
        SkipSpace();
        if (AtEnd()) return FailEnd();
        if (Cur() == ',') {
          ++pos_;
          if (!OpenMember(parent, target)) return false;
          break;
        }
        if (Cur() == (object ? '}' : ']')) {
          ++pos_;
          open.pop_back();
          continue;
        }
        return FailChar(Cur(), object ? "after object key:value pair" : "after array element");
      }
    }
  }

  // Appends the next member of an open array or object (for an object, after reading its key
  // and ':') and points `target` at it.
  bool OpenMember(Value& parent, Value*& target) {
    if (parent.kind == Value::Kind::kArray) {
      target = &parent.array.emplace_back();
      return true;
    }
    SkipSpace();
    if (AtEnd()) return FailEnd();
    if (Cur() != '"') return FailChar(Cur(), "looking for beginning of object key string");
    std::string key;
    if (!ParseString(key)) return false;
    SkipSpace();
    if (AtEnd()) return FailEnd();
    if (Cur() != ':') return FailChar(Cur(), "after object key");
    ++pos_;
    target = &parent.object.emplace_back(std::move(key), Value()).second;
    return true;
  }

  bool ParseScalar(Value& out, unsigned char c) {
    switch (c) {
      case '"':
        out.kind = Value::Kind::kString;
        return ParseString(out.text);
      case 't':
        return ParseLiteral(out, "true");
      case 'f':
        return ParseLiteral(out, "false");
      case 'n':
        return ParseLiteral(out, "null");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
        return FailChar(c, "looking for beginning of value");
    }
  }

  bool ParseLiteral(Value& out, std::string_view word) {
    for (size_t k = 1; k < word.size(); ++k) {
      unsigned char c = pos_ + k < s_.size() ? static_cast<unsigned char>(s_[pos_ + k]) : ' ';
      if (c != static_cast<unsigned char>(word[k])) {
        return FailChar(c, fmt::format("in literal {} (expecting '{}')", word, word[k]));
      }
    }
    pos_ += word.size();
    if (word == "null") {
      out.kind = Value::Kind::kNull;
    } else {
      out.kind = Value::Kind::kBool;
      out.boolean = word == "true";
    }
    return true;
  }

  // Go's number states; at end of input the scanner is fed ' '.
  bool ParseNumber(Value& out) {
    size_t start = pos_;
    auto peek = [&]() -> unsigned char { return AtEnd() ? ' ' : Cur(); };
    auto digit = [](unsigned char c) { return c >= '0' && c <= '9'; };
    if (peek() == '-') {
      ++pos_;
      if (!digit(peek())) return FailChar(peek(), "in numeric literal");
    }
    if (peek() == '0') {
      ++pos_;
    } else {
      while (digit(peek()) && !AtEnd()) ++pos_;
    }
    if (!AtEnd() && Cur() == '.') {
      ++pos_;
      if (!digit(peek()) || AtEnd()) {
        return FailChar(peek(), "after decimal point in numeric literal");
      }
      while (!AtEnd() && digit(Cur())) ++pos_;
    }
    if (!AtEnd() && (Cur() == 'e' || Cur() == 'E')) {
      ++pos_;
      if (!AtEnd() && (Cur() == '+' || Cur() == '-')) ++pos_;
      if (AtEnd() || !digit(Cur())) return FailChar(peek(), "in exponent of numeric literal");
      while (!AtEnd() && digit(Cur())) ++pos_;
    }
    out.kind = Value::Kind::kNumber;
    out.text = std::string(s_.substr(start, pos_ - start));
    return true;
  }

  // Validates and unquotes a string starting at the opening quote (Go's unquoteBytes).
  bool ParseString(std::string& out) {
    ++pos_;  // opening quote
    out.clear();
    while (true) {
      if (AtEnd()) return FailEnd();
      unsigned char c = Cur();
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return FailChar(c, "in string literal");
      if (c == '\\') {
        ++pos_;
        if (AtEnd()) return FailEnd();
        unsigned char e = Cur();
        switch (e) {
          case '"':
          case '\\':
          case '/':
            out.push_back(static_cast<char>(e));
            ++pos_;
            break;
          case 'b':
            out.push_back('\b');
            ++pos_;
            break;
          case 'f':
            out.push_back('\f');
            ++pos_;
            break;
          case 'n':
            out.push_back('\n');
            ++pos_;
            break;
          case 'r':
            out.push_back('\r');
            ++pos_;
            break;
          case 't':
            out.push_back('\t');
            ++pos_;
            break;
          case 'u': {
            ++pos_;
            int r = ReadHex4();
            if (r < 0) return false;
            uint32_t rune = static_cast<uint32_t>(r);
            if (rune >= 0xD800 && rune < 0xE000) {
              // Go: try to combine with a following \uXXXX; else U+FFFD and keep the rest.
              uint32_t combined = 0xFFFD;
              if (rune < 0xDC00 && pos_ + 6 <= s_.size() && s_[pos_] == '\\' &&
                  s_[pos_ + 1] == 'u') {
                int r2 = 0;
                bool ok = true;
                for (int k = 0; k < 4; ++k) {
                  int h = HexValue(s_[pos_ + 2 + static_cast<size_t>(k)]);
                  if (h < 0) ok = false;
                  r2 = r2 * 16 + (h < 0 ? 0 : h);
                }
                if (ok && r2 >= 0xDC00 && r2 < 0xE000) {
                  combined = 0x10000 + ((rune - 0xD800) << 10) + (static_cast<uint32_t>(r2) - 0xDC00);
                  pos_ += 6;
                }
              }
              GoAppendRune(out, combined);
            } else {
              GoAppendRune(out, rune);
            }
            break;
          }
          default:
            return FailChar(e, "in string escape code");
        }
        continue;
      }
      if (c < 0x80) {
        out.push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      auto [rune, size] = GoDecodeRune(s_, pos_);
      if (rune == 0xFFFD && size == 1) {
        GoAppendRune(out, 0xFFFD);
      } else {
        out.append(s_.substr(pos_, size));
      }
      pos_ += size;
    }
  }

  int ReadHex4() {
    int r = 0;
    for (int k = 0; k < 4; ++k) {
      if (AtEnd()) {
        FailEnd();
        return -1;
      }
      int h = HexValue(s_[pos_]);
      if (h < 0) {
        FailChar(Cur(), "in \\u hexadecimal character escape");
        return -1;
      }
      r = r * 16 + h;
      ++pos_;
    }
    return r;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

// Folds one rune the way Go's appendFoldedName does, restricted to what can equal an ASCII
// field name: ASCII letters upper-cased, and the four non-ASCII runes whose
// ToUpper(ToLower(r)) is ASCII (İ ı -> I, ſ -> S, K (Kelvin) -> K). Other runes fold to
// themselves and never match an ASCII name.
uint32_t FoldRune(uint32_t r) {
  if (r >= 'a' && r <= 'z') return r - ('a' - 'A');
  if (r == 0x130 || r == 0x131) return 'I';
  if (r == 0x17F) return 'S';
  if (r == 0x212A) return 'K';
  return r;
}

}  // namespace

absl::StatusOr<Value> Parse(std::string_view data) { return Parser(data).ParseDocument(); }

std::string QuoteChar(unsigned char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  // strconv.Quote(string(c)): a Go byte converted to a string is the rune U+00cc.
  std::string rune;
  GoAppendRune(rune, c);
  const std::string quoted = GoQuote(rune);
  return "'" + quoted.substr(1, quoted.size() - 2) + "'";
}

void AppendQuoted(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      switch (b) {
        case '\\':
        case '"':
          out.push_back('\\');
          out.push_back(static_cast<char>(b));
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (b < 0x20 || b == '<' || b == '>' || b == '&') {
            out += "\\u00";
            out.push_back(kHex[b >> 4]);
            out.push_back(kHex[b & 0xF]);
          } else {
            out.push_back(static_cast<char>(b));
          }
      }
      ++i;
      continue;
    }
    auto [rune, size] = GoDecodeRune(s, i);
    if (rune == 0xFFFD && size == 1) {
      out += "\\ufffd";
    } else if (rune == 0x2028 || rune == 0x2029) {
      out += "\\u202";
      out.push_back(kHex[rune & 0xF]);
    } else {
      out.append(s.substr(i, size));
    }
    i += size;
  }
  out.push_back('"');
}

std::string Quote(std::string_view s) {
  std::string out;
  AppendQuoted(out, s);
  return out;
}

void AppendMarshalled(std::string& out, const Value& root) {
  // Depth-first with an explicit stack (Parse accepts 10,000 levels): each open array or object
  // and the index of its next member.
  struct Open {
    const Value* v;
    size_t next;
  };
  std::vector<Open> open;
  const Value* v = &root;
  while (v != nullptr) {
    switch (v->kind) {
      case Value::Kind::kNull:
        out += "null";
        break;
      case Value::Kind::kBool:
        out += v->boolean ? "true" : "false";
        break;
      case Value::Kind::kNumber:
        out += v->text;
        break;
      case Value::Kind::kString:
        AppendQuoted(out, v->text);
        break;
      case Value::Kind::kArray:
      case Value::Kind::kObject:
        out.push_back(v->kind == Value::Kind::kArray ? '[' : '{');
        open.push_back({v, 0});
        break;
    }
    // The next value to write: the next member of the innermost open value, closing those
    // that have none left.
    v = nullptr;
    while (v == nullptr && !open.empty()) {
      Open& o = open.back();
      bool object = o.v->kind == Value::Kind::kObject;
      size_t size = object ? o.v->object.size() : o.v->array.size();
      if (o.next == size) {
        out.push_back(object ? '}' : ']');
        open.pop_back();
        continue;
      }
      if (o.next > 0) out.push_back(',');
      if (object) {
        AppendQuoted(out, o.v->object[o.next].first);
        out.push_back(':');
        v = &o.v->object[o.next].second;
      } else {
        v = &o.v->array[o.next];
      }
      ++o.next;
    }
  }
}

std::string Marshal(const Value& v) {
  std::string out;
  AppendMarshalled(out, v);
  return out;
}

// ---------------------------------------------------------------------------------------
// Decoder

std::string Decoder::TypeErrorMessage(std::string_view value_desc, std::string_view go_type,
                                      std::string_view extra_field) const {
  if (has_context_ && (!struct_name_.empty() || !field_stack_.empty())) {
    std::string field;
    for (const std::string& f : field_stack_) {
      if (!field.empty()) field += '.';
      field += f;
    }
    if (!extra_field.empty()) {
      if (!field.empty()) field += '.';
      field += extra_field;
    }
    return fmt::format("json: cannot unmarshal {} into Go struct field {}.{} of type {}",
                       value_desc, struct_name_, field, go_type);
  }
  return fmt::format("json: cannot unmarshal {} into Go value of type {}", value_desc, go_type);
}

void Decoder::SaveTypeError(std::string_view value_desc, std::string_view go_type) {
  if (!saved_error_) saved_error_ = TypeErrorMessage(value_desc, go_type);
}

void Decoder::SaveError(std::string message) {
  if (!saved_error_) saved_error_ = std::move(message);
}

Decoder::FieldScope::FieldScope(Decoder& d, std::string_view struct_name,
                                const std::vector<std::string_view>& embedded_path,
                                std::string_view json_name)
    : d_(d), saved_depth_(d.field_stack_.size()), saved_struct_(d.struct_name_) {
  d_.has_context_ = true;
  for (std::string_view e : embedded_path) d_.field_stack_.emplace_back(e);
  d_.struct_name_ = std::string(struct_name);
  d_.field_stack_.emplace_back(json_name);
}

Decoder::FieldScope::~FieldScope() {
  d_.field_stack_.resize(saved_depth_);
  // Go keeps the allocated errorContext once created; only its contents are restored.
  d_.struct_name_ = saved_struct_;
}

std::string_view KindName(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kNull:
      return "null";
    case Value::Kind::kBool:
      return "bool";
    case Value::Kind::kNumber:
      return "number";
    case Value::Kind::kString:
      return "string";
    case Value::Kind::kArray:
      return "array";
    case Value::Kind::kObject:
      return "object";
  }
  return "value";
}

std::optional<uint64_t> ParseGoUint64(std::string_view s) {
  if (s.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - d) / 10) return std::nullopt;
    value = value * 10 + d;
  }
  return value;
}

std::optional<int64_t> ParseGoInt64(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  std::optional<uint64_t> u = ParseGoUint64(s);
  if (!u) return std::nullopt;
  if (negative) {
    if (*u > (uint64_t{1} << 63)) return std::nullopt;
    return static_cast<int64_t>(0 - *u);
  }
  if (*u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(*u);
}

void DecodeString(Decoder& d, const Value& v, std::string& out, std::string_view go_type) {
  if (v.kind == Value::Kind::kNull) return;
  if (v.kind == Value::Kind::kString) {
    out = v.text;
    return;
  }
  d.SaveTypeError(KindName(v), go_type);
}

void DecodeUint64(Decoder& d, const Value& v, uint64_t& out, std::string_view go_type) {
  if (v.kind == Value::Kind::kNull) return;
  if (v.kind != Value::Kind::kNumber) {
    d.SaveTypeError(KindName(v), go_type);
    return;
  }
  // Go: strconv.ParseUint(literal, 10, 64); fractions and exponents fail.
  std::optional<uint64_t> n = ParseGoUint64(v.text);
  if (!n) {
    d.SaveTypeError("number " + v.text, go_type);
    return;
  }
  out = *n;
}

void DecodeInt64(Decoder& d, const Value& v, int64_t& out, std::string_view go_type) {
  if (v.kind == Value::Kind::kNull) return;
  if (v.kind != Value::Kind::kNumber) {
    d.SaveTypeError(KindName(v), go_type);
    return;
  }
  std::optional<int64_t> n = ParseGoInt64(v.text);
  if (!n) {
    d.SaveTypeError("number " + v.text, go_type);
    return;
  }
  out = *n;
}

bool GoFoldEqual(std::string_view key, std::string_view field_name) {
  size_t i = 0, j = 0;
  while (i < key.size() && j < field_name.size()) {
    auto [r, size] = GoDecodeRune(key, i);
    uint32_t f = static_cast<unsigned char>(field_name[j]);
    if (FoldRune(r) != FoldRune(f)) return false;
    i += size;
    ++j;
  }
  return i == key.size() && j == field_name.size();
}

absl::Status DecodeStruct(Decoder& d, const Value& v, std::string_view struct_name,
                          std::string_view go_type, const std::vector<FieldSpec>& fields) {
  if (v.kind == Value::Kind::kNull) return absl::OkStatus();
  if (v.kind != Value::Kind::kObject) {
    d.SaveTypeError(KindName(v), go_type);
    return absl::OkStatus();
  }
  for (const auto& [key, member] : v.object) {
    const FieldSpec* match = nullptr;
    for (const FieldSpec& f : fields) {
      if (f.json_name == key) {
        match = &f;
        break;
      }
    }
    if (match == nullptr) {
      for (const FieldSpec& f : fields) {
        if (GoFoldEqual(key, f.json_name)) {
          match = &f;
          break;
        }
      }
    }
    if (match == nullptr) continue;  // unknown keys are ignored
    Decoder::FieldScope scope(d, struct_name, match->embedded_path, match->json_name);
    absl::Status s = match->decode(d, member);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Unmarshal(std::string_view data,
                       const std::function<absl::Status(Decoder&, const Value&)>& decode_top) {
  absl::StatusOr<Value> doc = Parse(data);
  if (!doc.ok()) return doc.status();
  Decoder d;
  absl::Status s = decode_top(d, *doc);
  if (!s.ok()) return s;
  if (d.saved_error()) return absl::InvalidArgumentError(*d.saved_error());
  return absl::OkStatus();
}

}  // namespace podtopo::checkpoint::gojson
