// Pod manifests: YAML -> api/pod.h Pods, defaulted and validated as the API server does.
//
// A file may hold several YAML documents (`---`) and/or `kind: List` objects (`items`), as
// `kubectl get pods -o yaml` writes them. Only `apiVersion: v1, kind: Pod` objects are read;
// any other kind is an error. Fields read: metadata.{name,namespace,uid,labels},
// spec.resources, spec.nodeName, spec.os.name,
// spec.{initContainers,containers,ephemeralContainers}[] with
// name, image, command, args, restartPolicy, resources.{requests,limits}. Unknown fields are
// ignored; a field we read with the wrong type is an error. Types follow kubectl (go-yaml
// v2, YAML 1.1): an unquoted `8080`, `true` or `yes` where a string belongs is an error (as
// the API server's "cannot unmarshal number into ... of type string"), and unquoted integer
// quantities are read as kubectl sends them (`cpu: 010` is 8, `0x10` is 16, `1_000` 1000).
//
//   absl::StatusOr<std::vector<Pod>> pods = LoadPods("pods.yaml");   // "-" = stdin
//   // error: `pods.yaml: document 2: spec.containers[1].resources.requests.cpu: "2x":
//   //          quantities must match the regular expression ...`
//
// API-server defaulting applied, in the API server's order (PodLevelResources on,
// PodLevelResourcesFixUpdateDefaulting on):
//  * container requests default to limits, per resource (init and app containers);
//  * pod-level (KEP-2837), only when spec.resources is present:
//    - a hugepages-* limit missing at pod level (and with no pod-level request for it)
//      defaults to the containers' aggregated limit (any pod-level request or limit set);
//    - when pod-level limits are set: a missing cpu/memory request defaults to the
//      containers' aggregated request (sidecar formula, see AggregateContainerRequests),
//      and any request still missing defaults to the pod-level limit;
//    - when pod-level requests but no limits are set: a missing cpu/memory limit defaults
//      to the aggregated container limit, if every init and app container sets that limit;
//  * every quantity is rounded up to milli precision (SetDefaults_ResourceList);
//  * metadata.namespace defaults to "default"; a missing metadata.uid is generated
//    deterministically: the RFC 4122 version-5 (SHA-1) UUID of the name
//    "podtopo://pods/<namespace>/<name>" in the URL namespace
//    (6ba7b811-9dad-11d1-80b4-00c04fd430c8), e.g. `uuidgen --sha1 --namespace @url
//    --name podtopo://pods/default/demo`, so the same manifest always gets the same uid.
//
// Validation (all problems of the failing document are reported, one per line, each naming
// the source, the document and the field path): malformed YAML (with its line), wrong field
// types, apiVersion/kind, missing/invalid/duplicate pod and container names (container names
// are unique across init, app and ephemeral containers), invalid or negative quantities,
// unknown container resource names, request > limit, hugepages (and extended resources)
// whose request differs from the limit or that have no limit, hugepages sizes, "HugePages
// require cpu or memory", pod-level resources other than cpu/memory/hugepages-*, aggregated
// container requests above the pod-level request, an app container limit above the
// pod-level limit, aggregated hugepages limits above the pod-level one, pod-level resources
// on a windows pod, resources or restartPolicy on an ephemeral container, an unknown
// restartPolicy, two pods with the same namespace/name in one file, and "no pods".
//
// Container restartPolicy: `Always` on an init container makes it a sidecar (restartable
// init container). `Always`, `OnFailure` and `Never` are otherwise accepted and ignored
// (KEP-5307 container restart rules); any other value is an error.
#ifndef PODTOPO_API_POD_YAML_H_
#define PODTOPO_API_POD_YAML_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/pod.h"

namespace podtopo {

// Reads and parses `path` ("-" reads standard input, named "<stdin>" in messages).
// Errors: those of util/file.h ReadFile, and those of ParsePods (kInvalidArgument).
absl::StatusOr<std::vector<Pod>> LoadPods(const std::string& path);

// Parses the YAML text of a manifest file; `source_name` names it in messages and in each
// Pod's `source` ("pods.yaml" when the file holds one pod, else "pods.yaml#2" for the pod of
// document 2 and "pods.yaml#1.items[3]" for a List item). Pods come back in file order,
// defaulted. Errors: kInvalidArgument, message starting with `source_name`.
absl::StatusOr<std::vector<Pod>> ParsePods(const std::string& yaml_text,
                                           const std::string& source_name);

// The uid LoadPods gives a pod whose manifest has none (see the banner).
std::string DeterministicPodUid(const std::string& namespace_name, const std::string& name);

}  // namespace podtopo

#endif  // PODTOPO_API_POD_YAML_H_
