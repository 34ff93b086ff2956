// Go encoding/json, as far as the kubelet's checkpoint files need it.
//
// The kubelet reads its checkpoints with json.Unmarshal and writes them with json.Marshal,
// and the checksums are computed over the Go values that Unmarshal produces. To verify a
// file exactly as the kubelet does we must therefore decode exactly as Go does:
//   * syntax is checked over the whole input first (Go's checkValid); the first syntax
//     error is returned with Go's text, e.g. `unexpected end of JSON input` or
//     `invalid character '}' looking for beginning of object key string`;
//   * strings are unquoted as Go does (invalid UTF-8 and lone surrogates become U+FFFD);
//   * object keys match struct fields exactly first, then case-insensitively (Go's fold);
//   * unknown keys are ignored, duplicate keys are applied in order (maps merge, scalars
//     are overwritten), JSON null sets maps/slices/pointers to nil and leaves scalars alone;
//   * a value of the wrong type is skipped and the FIRST such error is reported at the end
//     (`json: cannot unmarshal string into Go struct field X.entries of type ...`), while
//     decoding continues.
// Writing mirrors json.Marshal: compact, HTML-safe string escaping (<, >, &, U+2028, U+2029
// as \u003c ...), \b \f \n \r \t short escapes, invalid UTF-8 as \ufffd.
//
// Example:
//   absl::StatusOr<gojson::Value> v = gojson::Parse(R"({"a":[1,"x",null]})");
//   gojson::Quote("<p>");   // "\"\\u003cp\\u003e\""
#ifndef PODTOPO_CHECKPOINT_GO_JSON_H_
#define PODTOPO_CHECKPOINT_GO_JSON_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace podtopo::checkpoint::gojson {

// A parsed JSON value. Object members keep their order and duplicates.
struct Value {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;  // kNumber: the literal as written; kString: the unquoted bytes
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;

  bool IsNull() const { return kind == Kind::kNull; }

  // Declared here, defaulted below: clang 14 with libstdc++ 12 cannot instantiate
  // std::pair<std::string, Value> while Value's implicit members are still pending.
  Value();
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  // Frees nested values from a worklist, not by recursion (Parse accepts 10,000 levels).
  ~Value();
};
inline Value::Value() = default;
inline Value::Value(const Value&) = default;
inline Value::Value(Value&&) noexcept = default;
inline Value& Value::operator=(const Value&) = default;
inline Value& Value::operator=(Value&&) noexcept = default;

// Parses `data` as one JSON document. Errors (kInvalidArgument) carry Go's SyntaxError text.
absl::StatusOr<Value> Parse(std::string_view data);

// json.Marshal of a Go string: the quoted, escaped form.
std::string Quote(std::string_view s);
void AppendQuoted(std::string& out, std::string_view s);

// json.Marshal of a map with string keys: {"<key>":<value>,...} in std::map order, which is
// Go's (keys sorted bytewise). append_value(out, value) writes each value.
template <class Map, class AppendValue>
void AppendObject(std::string& out, const Map& m, AppendValue&& append_value) {
  out += '{';
  bool first = true;
  for (const auto& [key, value] : m) {
    if (!first) out += ',';
    first = false;
    AppendQuoted(out, key);
    out += ':';
    append_value(out, value);
  }
  out += '}';
}

// A struct member `key` holding such a map, tagged omitempty: ,"<key>":{...}, nothing when
// the map is empty.
template <class Map, class AppendValue>
void AppendOmitEmptyObject(std::string& out, std::string_view key, const Map& m,
                           AppendValue&& append_value) {
  if (m.empty()) return;
  out += ',';
  AppendQuoted(out, key);
  out += ':';
  AppendObject(out, m, append_value);
}

// A parsed value written back compactly: members in their order, numbers as written, strings
// with json.Marshal's escaping. For compact json.Marshal output, Marshal(Parse(x)) == x.
std::string Marshal(const Value& v);
void AppendMarshalled(std::string& out, const Value& v);

// Go's quoteChar, used in syntax error texts: 'x', '\n', '"', '\''.
std::string QuoteChar(unsigned char c);

// ---------------------------------------------------------------------------------------
// Decoding into typed values with Go's json.Unmarshal semantics.
//
// A Decoder carries Go's errorContext (innermost struct name and the JSON field path) and
// the first saved type error. Decode functions return a non-OK status only for errors that
// make Go abort the whole Unmarshal (an UnmarshalTypeError returned by a custom
// UnmarshalJSON); ordinary type errors are saved and decoding goes on.
class Decoder {
 public:
  // Records a type error with the current context: Value is "string", "number",
  // "number 1.5", "array", "object" or "bool"; go_type is the Go type's String().
  void SaveTypeError(std::string_view value_desc, std::string_view go_type);
  // Records an arbitrary error text (Go's UnmarshalTypeError with Err set).
  void SaveError(std::string message);
  // Go's addErrorContext for an error that aborts decoding: formats with the context.
  std::string TypeErrorMessage(std::string_view value_desc, std::string_view go_type,
                               std::string_view extra_field = {}) const;

  // The first saved error, if any.
  const std::optional<std::string>& saved_error() const { return saved_error_; }

  // Scope of one struct member: pushes the embedded path and the field's JSON name and
  // sets the struct name; restored by the destructor (Go resets the context after each
  // member).
  class FieldScope {
   public:
    FieldScope(Decoder& d, std::string_view struct_name,
               const std::vector<std::string_view>& embedded_path, std::string_view json_name);
    ~FieldScope();
    FieldScope(const FieldScope&) = delete;
    FieldScope& operator=(const FieldScope&) = delete;

   private:
    Decoder& d_;
    size_t saved_depth_;
    std::string saved_struct_;
  };

 private:
  bool has_context_ = false;  // Go: errorContext != nil
  std::string struct_name_;   // Go: errorContext.Struct.Name() ("" = nil)
  std::vector<std::string> field_stack_;
  std::optional<std::string> saved_error_;
};

// Describes a JSON value the way Go's type errors do ("string", "number", "bool", "array",
// "object").
std::string_view KindName(const Value& v);

// Scalars. null leaves the target unchanged (Go ignores null for non-nillable types).
void DecodeString(Decoder& d, const Value& v, std::string& out, std::string_view go_type);
void DecodeUint64(Decoder& d, const Value& v, uint64_t& out, std::string_view go_type);
void DecodeInt64(Decoder& d, const Value& v, int64_t& out, std::string_view go_type);

// Go's strconv.ParseInt / ParseUint (base 10, 64 bits). nullopt on syntax or range error.
std::optional<int64_t> ParseGoInt64(std::string_view s);
std::optional<uint64_t> ParseGoUint64(std::string_view s);

// One struct member for DecodeStruct.
struct FieldSpec {
  std::string_view json_name;
  // Go names of embedded structs on the way to the field (pushed on the error path).
  std::vector<std::string_view> embedded_path;
  std::function<absl::Status(Decoder&, const Value&)> decode;
};

// Decodes a JSON object into a struct: exact key match first, then Go's case folding;
// unknown keys ignored. null: no-op. Any other kind: type error (value skipped).
absl::Status DecodeStruct(Decoder& d, const Value& v, std::string_view struct_name,
                          std::string_view go_type, const std::vector<FieldSpec>& fields);

// Go's case-insensitive key match (bytes.EqualFold-like via foldName).
bool GoFoldEqual(std::string_view key, std::string_view field_name);

// json.Unmarshal(data, &x): a syntax error (nothing decoded), else `decode_top` runs on the
// document; returns its abort error, else the first saved type error, else OK. Errors are
// kInvalidArgument with Go's message.
absl::Status Unmarshal(std::string_view data,
                       const std::function<absl::Status(Decoder&, const Value&)>& decode_top);

// A Go map with string keys (nullopt = nil map). null sets nil; an object allocates the map
// if nil and then stores every member (duplicates overwrite); each element starts from its
// zero value. Any other kind is a type error naming `go_type`.
// decode_elem: absl::Status(Decoder&, const Value&, T&).
template <class T, class DecodeElem>
absl::Status DecodeStringMap(Decoder& d, const Value& v,
                             std::optional<std::map<std::string, T>>& out,
                             std::string_view go_type, DecodeElem&& decode_elem) {
  if (v.kind == Value::Kind::kNull) {
    out.reset();
    return absl::OkStatus();
  }
  if (v.kind != Value::Kind::kObject) {
    d.SaveTypeError(KindName(v), go_type);
    return absl::OkStatus();
  }
  if (!out) out.emplace();
  for (const auto& [key, member] : v.object) {
    T elem{};
    absl::Status s = decode_elem(d, member, elem);
    if (!s.ok()) return s;
    (*out)[key] = std::move(elem);
  }
  return absl::OkStatus();
}

// A Go map with int keys (Go `int`): keys are parsed with strconv.ParseInt; a bad key is a
// type error (`number <key>` into `int`) and that member is dropped.
template <class T, class DecodeElem>
absl::Status DecodeIntMap(Decoder& d, const Value& v, std::optional<std::map<int64_t, T>>& out,
                          std::string_view go_type, DecodeElem&& decode_elem) {
  if (v.kind == Value::Kind::kNull) {
    out.reset();
    return absl::OkStatus();
  }
  if (v.kind != Value::Kind::kObject) {
    d.SaveTypeError(KindName(v), go_type);
    return absl::OkStatus();
  }
  if (!out) out.emplace();
  for (const auto& [key, member] : v.object) {
    T elem{};
    absl::Status s = decode_elem(d, member, elem);
    if (!s.ok()) return s;
    std::optional<int64_t> k = ParseGoInt64(key);
    if (!k) {
      d.SaveTypeError("number " + key, "int");
      continue;
    }
    (*out)[*k] = std::move(elem);
  }
  return absl::OkStatus();
}

// A Go slice (nullopt = nil). null sets nil; an array reuses the existing elements (Go
// decodes into them), appends zero elements as needed and truncates; [] gives an empty
// non-nil slice. decode_elem: absl::Status(Decoder&, const Value&, T&).
template <class T, class DecodeElem>
absl::Status DecodeSlice(Decoder& d, const Value& v, std::optional<std::vector<T>>& out,
                         std::string_view go_type, DecodeElem&& decode_elem) {
  if (v.kind == Value::Kind::kNull) {
    out.reset();
    return absl::OkStatus();
  }
  if (v.kind != Value::Kind::kArray) {
    d.SaveTypeError(KindName(v), go_type);
    return absl::OkStatus();
  }
  std::vector<T> next = out ? std::move(*out) : std::vector<T>{};
  if (next.size() > v.array.size()) next.resize(v.array.size());
  out = std::move(next);
  for (size_t i = 0; i < v.array.size(); ++i) {
    if (i >= out->size()) out->emplace_back();
    absl::Status s = decode_elem(d, v.array[i], (*out)[i]);
    if (!s.ok()) return s;
  }
  if (v.array.empty()) out = std::vector<T>{};
  return absl::OkStatus();
}

}  // namespace podtopo::checkpoint::gojson

#endif  // PODTOPO_CHECKPOINT_GO_JSON_H_
