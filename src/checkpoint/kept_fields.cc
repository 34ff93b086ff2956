#include "checkpoint/kept_fields.h"

#include <algorithm>

#include "checkpoint/go_json.h"
#include "fmt/format.h"

namespace podtopo::checkpoint {
namespace {

using gojson::Value;

// The schema member a key selects: exact name first, then Go's case fold (as DecodeStruct).
const std::pair<std::string, const Schema*>* Match(const Schema& schema, std::string_view key) {
  for (const auto& m : schema.members) {
    if (m.first == key) return &m;
  }
  for (const auto& m : schema.members) {
    if (gojson::GoFoldEqual(key, m.first)) return &m;
  }
  return nullptr;
}

void Walk(const Value& v, const Schema& schema, const std::string& path,
          std::vector<std::string>& unkept) {
  switch (schema.kind) {
    case Schema::Kind::kScalar:
      return;
    case Schema::Kind::kObject:
      if (v.kind != Value::Kind::kObject) return;
      for (const auto& [key, member] : v.object) {
        const auto* m = Match(schema, key);
        std::string sub = fmt::format("{}.{}", path, key);
        if (m == nullptr) {
          if (std::find(unkept.begin(), unkept.end(), sub) == unkept.end()) unkept.push_back(sub);
          continue;
        }
        Walk(member, *m->second, sub, unkept);
      }
      return;
    case Schema::Kind::kMap:
      if (v.kind != Value::Kind::kObject) return;
      for (const auto& [key, member] : v.object) {
        Walk(member, *schema.element, fmt::format("{}.{}", path, key), unkept);
      }
      return;
    case Schema::Kind::kArray:
      if (v.kind != Value::Kind::kArray) return;
      for (size_t i = 0; i < v.array.size(); ++i) {
        Walk(v.array[i], *schema.element, fmt::format("{}[{}]", path, i), unkept);
      }
      return;
  }
}

}  // namespace

void CollectKeptMembers(const Value& object, const Schema& schema, std::string_view path,
                        std::vector<std::pair<std::string, std::string>>& members,
                        std::vector<std::string>& order, std::vector<std::string>& unkept) {
  if (object.kind != Value::Kind::kObject) return;
  auto note = [&](const std::string& key) {
    if (std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
  };
  for (const auto& [key, member] : object.object) {
    const auto* m = Match(schema, key);
    if (m != nullptr) {
      note(m->first);
      Walk(member, *m->second, path.empty() ? m->first : fmt::format("{}.{}", path, m->first),
           unkept);
      continue;
    }
    note(key);
    // Duplicate keys: Go applies them in order, the last value wins.
    auto it = std::find_if(members.begin(), members.end(),
                           [&name = key](const auto& kv) { return kv.first == name; });
    if (it != members.end()) {
      it->second = gojson::Marshal(member);
    } else {
      members.emplace_back(key, gojson::Marshal(member));
    }
  }
  // Known members in the schema's (json.Marshal's) order need no record.
  size_t next = 0;
  bool canonical = true;
  for (const auto& key : order) {
    auto at = std::find_if(schema.members.begin() + static_cast<long>(next), schema.members.end(),
                           [&](const auto& m) { return m.first == key; });
    if (at == schema.members.end()) {
      canonical = false;
      break;
    }
    next = static_cast<size_t>(at - schema.members.begin()) + 1;
  }
  if (canonical) order.clear();
}

const Schema kScalarSchema = Schema::Scalar();

void CollectKeptFields(std::string_view contents, const Schema& top, const std::string* data,
                       const Schema& data_schema, KeptFields& kept) {
  if (absl::StatusOr<Value> doc = gojson::Parse(contents); doc.ok()) {
    CollectKeptMembers(*doc, top, "", kept.top, kept.top_order, kept.unkept);
  }
  if (data == nullptr) return;
  if (absl::StatusOr<Value> d = gojson::Parse(*data); d.ok()) {
    CollectKeptMembers(*d, data_schema, "data", kept.data, kept.data_order, kept.unkept);
  }
}

std::string WriteWithKept(const std::string& canonical,
                          const std::vector<std::pair<std::string, std::string>>& members,
                          const std::vector<std::string>& order) {
  if (members.empty() && order.empty()) return canonical;
  absl::StatusOr<Value> parsed = gojson::Parse(canonical);
  if (!parsed.ok() || parsed->kind != Value::Kind::kObject) return canonical;
  const auto& known = parsed->object;
  auto is_known = [&](const std::string& k) {
    return std::any_of(known.begin(), known.end(), [&](const auto& kv) { return kv.first == k; });
  };
  auto is_member = [&](const std::string& k) {
    return std::any_of(members.begin(), members.end(),
                       [&](const auto& kv) { return kv.first == k; });
  };
  std::vector<std::string> seq;
  auto in_seq = [&](const std::string& k) { return std::find(seq.begin(), seq.end(), k); };
  for (const auto& k : order) {
    if ((is_known(k) || is_member(k)) && in_seq(k) == seq.end()) seq.push_back(k);
  }
  // Known members the file did not have go after the known member before them.
  for (size_t i = 0; i < known.size(); ++i) {
    const std::string& k = known[i].first;
    if (in_seq(k) != seq.end()) continue;
    auto pos = seq.begin();
    for (size_t j = i; j-- > 0;) {
      auto prev = in_seq(known[j].first);
      if (prev != seq.end()) {
        pos = prev + 1;
        break;
      }
    }
    seq.insert(pos, k);
  }
  for (const auto& [k, _] : members) {
    if (in_seq(k) == seq.end()) seq.push_back(k);
  }
  if (members.empty()) {
    bool same = seq.size() == known.size();
    for (size_t i = 0; same && i < seq.size(); ++i) same = seq[i] == known[i].first;
    if (same) return canonical;
  }
  std::string out = "{";
  for (size_t i = 0; i < seq.size(); ++i) {
    if (i > 0) out.push_back(',');
    gojson::AppendQuoted(out, seq[i]);
    out.push_back(':');
    auto k = std::find_if(known.begin(), known.end(),
                          [&](const auto& kv) { return kv.first == seq[i]; });
    if (k != known.end()) {
      gojson::AppendMarshalled(out, k->second);
    } else {
      out += std::find_if(members.begin(), members.end(),
                          [&](const auto& kv) { return kv.first == seq[i]; })
                 ->second;
    }
  }
  out.push_back('}');
  return out;
}

absl::Status ErrorIfUnkept(const KeptFields& kept, std::string_view what) {
  if (kept.unkept.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(fmt::format(
      "podtopo does not rewrite this {} checkpoint: it holds fields podtopo does not model and "
      "cannot keep ({}; written by a newer kubelet?), and a rewrite would drop them",
      what, fmt::join(kept.unkept, ", ")));
}

}  // namespace podtopo::checkpoint
