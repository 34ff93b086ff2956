// Test-only helpers for the topologymanager tests: reading the vector files' hint encoding and
// running rapidcheck properties with more cases than the default 100.
//
// Vector encoding (../shared/vectors/topology_merge_cases.json): a hint is
// {"affinity": [ids] | null, "preferred": bool}; providers are a list of null (nil map) or
// {resource: null (nil list) | [hints]}.
#ifndef PODTOPO_TOPOLOGYMANAGER_TEST_HELPERS_H_
#define PODTOPO_TOPOLOGYMANAGER_TEST_HELPERS_H_

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rapidcheck.h"
#include "testing/property.h"
#include "topologymanager/policy.h"

namespace podtopo::topologymanager::test {

inline BitMask MaskFromJson(const nlohmann::json& ids) {
  BitMask mask;
  for (const auto& id : ids) mask.Or(BitMask::FromUint64(uint64_t{1} << id.get<int>()));
  return mask;
}

inline TopologyHint HintFromJson(const nlohmann::json& j) {
  TopologyHint hint;
  if (!j.at("affinity").is_null()) hint.affinity = MaskFromJson(j.at("affinity"));
  hint.preferred = j.at("preferred").get<bool>();
  return hint;
}

inline std::vector<TopologyHint> HintsFromJson(const nlohmann::json& list) {
  std::vector<TopologyHint> hints;
  for (const auto& h : list) hints.push_back(HintFromJson(h));
  return hints;
}

inline ProvidersHints ProvidersFromJson(const nlohmann::json& providers) {
  ProvidersHints out;
  for (const auto& p : providers) {
    if (p.is_null()) {
      out.push_back(std::nullopt);
      continue;
    }
    std::map<std::string, HintList> resources;
    for (const auto& [name, list] : p.items()) {
      if (list.is_null()) {
        resources[name] = std::nullopt;
      } else {
        resources[name] = HintsFromJson(list);
      }
    }
    out.push_back(std::move(resources));
  }
  return out;
}

inline std::string Describe(const ProvidersHints& providers) {
  std::ostringstream os;
  os << "[";
  for (const auto& p : providers) {
    if (!p) {
      os << "null ";
      continue;
    }
    os << "{";
    for (const auto& [name, list] : *p) {
      os << name << ": ";
      if (!list) {
        os << "null";
      } else {
        os << "[";
        for (const auto& h : list->Enumerate()) os << h << " ";
        os << "]";
      }
      os << " ";
    }
    os << "} ";
  }
  os << "]";
  return os.str();
}

// The property runner every property test uses (testing/property.h).
using ::podtopo::testing::CheckProperty;

}  // namespace podtopo::topologymanager::test

#endif  // PODTOPO_TOPOLOGYMANAGER_TEST_HELPERS_H_
