#include "render/json_yaml.h"

#include "yaml-cpp/yaml.h"

namespace podtopo {
namespace {

void Emit(YAML::Emitter& out, const nlohmann::ordered_json& j) {
  if (j.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [k, v] : j.items()) {
      out << YAML::Key << k << YAML::Value;
      Emit(out, v);
    }
    out << YAML::EndMap;
  } else if (j.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& v : j) Emit(out, v);
    out << YAML::EndSeq;
  } else if (j.is_null()) {
    out << YAML::Null;
  } else if (j.is_boolean()) {
    out << j.get<bool>();
  } else if (j.is_number_unsigned()) {
    out << j.get<uint64_t>();
  } else if (j.is_number_integer()) {
    out << j.get<int64_t>();
  } else if (j.is_number_float()) {
    out << j.get<double>();
  } else {
    out << YAML::DoubleQuoted << j.get<std::string>();
  }
}

}  // namespace

std::string JsonToYaml(const nlohmann::ordered_json& j) {
  YAML::Emitter out;
  Emit(out, j);
  return std::string(out.c_str()) + "\n";
}

}  // namespace podtopo
