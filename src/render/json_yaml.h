// JSON -> YAML text with yaml-cpp's emitter, in kubectl's `-o yaml` shape: block style, keys in
// their JSON order, strings double-quoted (so that "16" stays a string, as a Quantity must).
//
// Example:
//   JsonToYaml({{"name", "cpu"}, {"capacity", "16"}});   // "name: \"cpu\"\ncapacity: \"16\"\n"
#ifndef PODTOPO_RENDER_JSON_YAML_H_
#define PODTOPO_RENDER_JSON_YAML_H_

#include <string>

#include "nlohmann/json.hpp"

namespace podtopo {

// One YAML document, ending with a newline.
std::string JsonToYaml(const nlohmann::ordered_json& j);

}  // namespace podtopo

#endif  // PODTOPO_RENDER_JSON_YAML_H_
