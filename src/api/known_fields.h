// The field names of the Kubernetes API objects podtopo reads, to find the fields that are
// none of them: `resource:` for `resources:` (a Guaranteed pod read as BestEffort),
// `initcontainers:` for `initContainers:` (a sidecar lost). The API server refuses such a
// field (kubectl's strict field validation: `strict decoding error: unknown field
// "spec.containers[0].resource"`); podtopo, which reads only some fields, would otherwise
// ignore it silently.
//
// One table (known_fields.cc) lists every field of the types on the way from an object to
// the fields podtopo reads, as k8s.io/api defines them (core/v1, apps/v1, batch/v1, newest
// release): TypeMeta, ObjectMeta, Pod, PodSpec, Container, EphemeralContainer,
// ResourceRequirements, PodOS, PodTemplateSpec, the workload objects and their specs, List.
// Fields of other types (volumes, env, probes, affinity, status, ...) are known by name and
// not looked into; maps of free keys (labels, annotations, requests, limits, nodeSelector)
// neither.
//
//   std::vector<UnknownFieldPath> unknown;
//   FindUnknownFields(object_node, "Deployment", "", &unknown);
//   // {"spec.template.spec.containers[0].resource", "resources"}
#ifndef PODTOPO_API_KNOWN_FIELDS_H_
#define PODTOPO_API_KNOWN_FIELDS_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/manifest_tree.h"

namespace podtopo {

struct UnknownFieldPath {
  std::string path;        // "spec.containers[0].resource" (below the object's `base`)
  std::string name;        // "resource"
  std::string suggestion;  // the closest known field ("resources"), or ""
};

// Appends to `out` every field of `object` (an object of kind `kind`: Pod, a workload kind
// podtopo expands, PodTemplate, List or a typed list such as PodList; other kinds have none)
// that is not a field of its type, recursively through the types of the table, in document order. `base`
// prefixes the paths ("items[3]"). A node of the wrong type (a list where a map belongs) is
// not looked into: the readers report it.
void FindUnknownFields(const ManifestNode& object, std::string_view kind, const std::string& base,
                       std::vector<UnknownFieldPath>* out);

}  // namespace podtopo

#endif  // PODTOPO_API_KNOWN_FIELDS_H_
