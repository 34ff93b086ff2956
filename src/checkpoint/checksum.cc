#include "checkpoint/checksum.h"

#include "fmt/format.h"

namespace podtopo::checkpoint {

uint32_t Fnv1a32(std::string_view bytes) {
  uint32_t h = 2166136261u;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

uint64_t DataChecksum(std::string_view data) {
  uint32_t h = 2166136261u;
  for (unsigned char c : std::string_view("(string)")) {
    h ^= c;
    h *= 16777619u;
  }
  for (unsigned char c : data) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::string ReplaceFirst(std::string_view s, std::string_view from, std::string_view to) {
  std::string out(s);
  if (from.empty()) return out;
  size_t at = out.find(from);
  if (at != std::string::npos) out.replace(at, from.size(), to);
  return out;
}

uint64_t LegacyChecksum(std::string_view dump, std::string_view versioned_name,
                        std::string_view legacy_name) {
  if (versioned_name.empty()) return Fnv1a32(dump);
  return Fnv1a32(ReplaceFirst(dump, versioned_name, legacy_name));
}

SpewWriter& SpewWriter::Type(std::string_view go_type) {
  out_->push_back('(');
  out_->append(go_type);
  out_->push_back(')');
  return *this;
}

SpewWriter& SpewWriter::String(std::string_view s) {
  out_->append(s);
  return *this;
}

SpewWriter& SpewWriter::Int(int64_t v) {
  fmt::format_to(std::back_inserter(*out_), "{}", v);
  return *this;
}

SpewWriter& SpewWriter::Uint(uint64_t v) {
  fmt::format_to(std::back_inserter(*out_), "{}", v);
  return *this;
}

SpewWriter& SpewWriter::Nil() {
  out_->append("<nil>");
  return *this;
}

SpewWriter& SpewWriter::PointerMarker() {
  out_->append("<*>");
  return *this;
}

void SpewWriter::Separator() {
  if (first_.empty()) return;
  if (!first_.back()) out_->push_back(' ');
  first_.back() = false;
}

SpewWriter& SpewWriter::OpenStruct() {
  out_->push_back('{');
  first_.push_back(true);
  return *this;
}

SpewWriter& SpewWriter::FieldName(std::string_view name) {
  Separator();
  out_->append(name);
  out_->push_back(':');
  return *this;
}

SpewWriter& SpewWriter::CloseStruct() {
  out_->push_back('}');
  if (!first_.empty()) first_.pop_back();
  return *this;
}

SpewWriter& SpewWriter::OpenMap() {
  out_->append("map[");
  first_.push_back(true);
  return *this;
}

SpewWriter& SpewWriter::Key() {
  Separator();
  return *this;
}

SpewWriter& SpewWriter::Colon() {
  out_->push_back(':');
  return *this;
}

SpewWriter& SpewWriter::CloseMap() {
  out_->push_back(']');
  if (!first_.empty()) first_.pop_back();
  return *this;
}

SpewWriter& SpewWriter::OpenSlice() {
  out_->push_back('[');
  first_.push_back(true);
  return *this;
}

SpewWriter& SpewWriter::Elem() {
  Separator();
  return *this;
}

SpewWriter& SpewWriter::CloseSlice() {
  out_->push_back(']');
  if (!first_.empty()) first_.pop_back();
  return *this;
}

void SpewCheckpointHead(SpewWriter& w, std::string_view type_name, std::string_view policy_name) {
  w.Type(fmt::format("*state.{}", type_name)).OpenStruct();
  w.FieldName("PolicyName").Type("string").String(policy_name);
}

void SpewZeroChecksumTail(SpewWriter& w) {
  w.FieldName("Checksum").Type("checksum.Checksum").Uint(0);
  w.CloseStruct();
}

void SpewCpuSetBody(SpewWriter& w, const std::vector<int>& ids) {
  w.OpenStruct().FieldName("elems").Type("map[int]struct {}").OpenMap();
  for (int id : ids) w.Key().Int(id).Colon().String("{}");
  w.CloseMap().CloseStruct();
}

}  // namespace podtopo::checkpoint
