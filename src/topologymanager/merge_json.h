// The `podtopo debug merge-hints` contract (DESIGN.md): JSON in, the merged hint out.
//
// Input (standard input of the command):
//   {"policy": "restricted", "options": {"prefer-closest-numa-nodes": "true"},
//    "numaNodes": [0, 1, 2, 3],
//    "distances": [[10,20,20,20],[20,10,20,20],[20,20,10,20],[20,20,20,10]],
//    "providers": [{"cpu": [{"affinity": [0], "preferred": true}]}, {"memory": null}, {}, null]}
//   - policy: none | best-effort | restricted | single-numa-node (or the --policy flag).
//   - options: the kubelet's topologyManagerPolicyOptions; values may be strings, booleans or
//     integers (written as the kubelet would read their text).
//   - numaNodes: the machine's NUMA node ids (0..63, each once), required.
//   - distances: optional; row i belongs to numaNodes[i] and its entry j is the distance to
//     numaNodes[j] (as in the topology JSON). Only read with prefer-closest-numa-nodes.
//   - providers: in provider order; a provider maps resource -> hint list. `null` list = no
//     preference, `[]` = no possible hint, `{}` or `null` provider = no resources. A hint is
//     {"affinity": [ids] | null, "preferred": bool}; a missing field takes Go's zero value
//     (nil affinity, not preferred). Affinity ids must be listed in numaNodes.
// Output: {"affinity":[0],"preferred":true,"admit":true}; affinity null = the kubelet's nil mask.
//
// Errors name the JSON path: `providers[0]["cpu"][1].affinity[0]: NUMA node 5 is not in
// numaNodes [0, 1]`. Policy construction errors are the kubelet's own (unknown policy, bad
// options, "unsupported on machines with more than 8 NUMA Nodes", ...).
//
// Example:
//   absl::StatusOr<std::string> out = MergeHintsJson(stdin_text, {.policy = "best-effort"});
#ifndef PODTOPO_TOPOLOGYMANAGER_MERGE_JSON_H_
#define PODTOPO_TOPOLOGYMANAGER_MERGE_JSON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "topologymanager/policy.h"

namespace podtopo::topologymanager {

// The parsed stdin document.
struct MergeRequest {
  std::optional<std::string> policy;
  std::map<std::string, std::string> options;
  std::vector<int> numa_nodes;
  // Row i / column j follow numa_nodes[i] / numa_nodes[j]; nullopt when absent.
  std::optional<std::vector<std::vector<uint64_t>>> distances;
  ProvidersHints providers;
};

// Command-line flags; each one replaces the stdin field of the same name (options key by key).
struct MergeOverrides {
  std::optional<std::string> policy = std::nullopt;
  std::map<std::string, std::string> options = {};
};

// Parses and validates the stdin text. Errors: invalid JSON, a non-object document, unknown
// fields, wrong types, NUMA ids outside 0..63 or listed twice, a distances matrix that is not
// numaNodes x numaNodes, hint affinities naming nodes outside numaNodes.
absl::StatusOr<MergeRequest> ParseMergeRequest(const std::string& text);
absl::StatusOr<MergeRequest> MergeRequestFromJson(const nlohmann::json& doc);

// The machine's NUMA nodes as the policy sees them: numaNodes in input order, each with its
// distance row indexed by node id (when the request has distances).
std::vector<NUMANode> MergeRequestTopology(const MergeRequest& request);

// Builds the policy as the kubelet's NewManager does (policy.h NewPolicy) from the request
// with `overrides` applied, and merges the providers' hints. Error when no policy is given.
absl::StatusOr<MergeResult> RunMergeRequest(const MergeRequest& request,
                                            const MergeOverrides& overrides = {});

// {"affinity": [ids] | null, "preferred": bool, "admit": bool}, keys in that order.
nlohmann::ordered_json MergeResultToJson(const MergeResult& result);

// Parse + run + serialise (compact, one line, no trailing newline).
absl::StatusOr<std::string> MergeHintsJson(const std::string& text,
                                           const MergeOverrides& overrides = {});

}  // namespace podtopo::topologymanager

#endif  // PODTOPO_TOPOLOGYMANAGER_MERGE_JSON_H_
