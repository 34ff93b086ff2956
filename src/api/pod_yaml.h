// Pod manifests: YAML or JSON -> api/pod.h Pods, defaulted and validated as the API server does.
//
// Inputs: one or more YAML documents (`---`, Helm's `# Source:` comments are kept for
// messages), or JSON (text starting with `{` or `[`, read with nlohmann-json: the fast path
// for `kubectl get pods -A -o json`); both are read into one tree (api/manifest_tree.h), so
// fields, types and errors are the same. Objects read:
//  * `v1 Pod`; `v1 List` (kubectl get -o yaml|json) and typed lists (PodList,
//    DeploymentList, ...) whose items are any of these objects;
//  * workload controllers, expanded to the pods their controllers create (pod template
//    defaulted and validated like a pod, in the controller's namespace, `controller_kind` /
//    `controller_name` set), replica counts defaulted as the API server does:
//    - apps/v1 Deployment: `replicas` (default 1) pods `<name>-<hash>-<suffix>`, where
//      `<name>-<hash>` is its ReplicaSet (label pod-template-hash=<hash>);
//    - apps/v1 ReplicaSet and v1 ReplicationController: `replicas` (default 1) pods
//      `<name>-<suffix>`;
//    - apps/v1 StatefulSet: `replicas` (default 1) pods `<name>-<ordinal>`, ordinals from
//      spec.ordinals.start (default 0);
//    - apps/v1 DaemonSet: one pod `<name>-<suffix>` per name in PodLoadOptions::node_names
//      (spec.nodeName set to it), or one pod without a node when no names are given;
//    - batch/v1 Job: min(parallelism, completions) pods (parallelism defaults to 1; both
//      unset: 1; only parallelism set: parallelism; suspend: true: none), `<job>-<suffix>`,
//      or `<job>-<index>-<suffix>` with completionMode: Indexed;
//    - batch/v1 CronJob: its jobTemplate as a Job named `<cronjob>-<number>`;
//    - v1 PodTemplate: one pod named after the template.
//    Generated names follow names.SimpleNameGenerator (base cut to 57 characters, `-`, five
//    characters of "bcdfghjklmnpqrstvwxz2456789"); podtopo derives them from a hash, so the
//    same manifest always gives the same names. The hash and the CronJob's number are not
//    the controllers' own values (docs/differences.md).
//  * a controller that another object of the same input names as its controller (an
//    ownerReference with controller: true, same namespace, kind and name, and uid when both
//    have one) is not expanded: its dependents stand for it. `kubectl get all -o yaml` lists
//    a Deployment, its ReplicaSet and their pods; podtopo reads the pods (with their real
//    nodeName) once, and expands a ReplicaSet only when its pods are not in the input, a
//    Deployment only when its ReplicaSets are not. Counted in PodLoadOptions::not_expanded.
//  * any other kind is skipped and counted in PodLoadOptions::skipped_kinds, or is an error
//    with PodLoadOptions::strict.
// Fields read: metadata.{name,namespace,uid,labels,annotations}, spec.resources,
// spec.os.name, spec.nodeName, spec.{initContainers,containers,ephemeralContainers}[] with
// name, image, command, args, restartPolicy, resources.{requests,limits}. The other fields of
// the API objects (status, managedFields, volumes, env, probes, ...) are ignored; a field we
// read with the wrong type is an error. A field that is no field of the object at all (a
// misspelling such as `resource:` or `initcontainers:`, api/known_fields.h) is reported in
// PodLoadOptions::unknown_fields, or is an error with PodLoadOptions::strict, as the API
// server's strict field validation refuses it. Types follow kubectl (go-yaml v2, YAML 1.1): an
// unquoted `8080`, `true` or `yes` where a string belongs is an error (as the API server's
// "cannot unmarshal number into ... of type string"), and unquoted integer quantities are
// read as kubectl sends them (`cpu: 010` is 8, `0x10` is 16, `1_000` 1000).
//
//   absl::StatusOr<std::vector<Pod>> pods =
//       LoadPods("pods.yaml", {.gates = PodGatesFromConfig(cfg), .node_names = {"a", "b"}});
//   // error: `pods.yaml: document 2: spec.containers[1].resources.requests.cpu: "2x":
//   //          quantities must match the regular expression ...`
//   //        `deploy.yaml: document 1 (chart/templates/web.yaml): Deployment web:
//   //          spec.template.spec.containers[0].resources.limits.cpu: ...`
//
// API-server defaulting applied, in the API server's order (api/pod.h PodGates):
//  * container requests default to limits, per resource (init and app containers);
//  * pod-level (KEP-2837), only when spec.resources is present and PodLevelResources is on:
//    - PodLevelResourcesFixDefaulting on (v1.37, k/k #140514), once any pod-level request
//      or limit is set: a hugepages-* limit missing at pod level (with no pod-level request
//      for it) defaults to the containers' aggregated limit; a missing cpu/memory request
//      to the containers' aggregated request (sidecar formula, AggregateContainerRequests),
//      any request still missing to the pod-level limit; a missing cpu/memory limit, when
//      every init and app container sets that limit, to max(pod-level request, aggregated
//      container limits). Container values are rounded before they are aggregated.
//    - off (the v1.36 rules): hugepages as above; requests only when pod-level limits are
//      set; a missing cpu/memory limit only when no pod-level limit is set and requests
//      are, to the aggregated container limit (so a pod request above the containers'
//      limits is then invalid).
//  * every quantity is rounded up to milli precision (SetDefaults_ResourceList);
//  * metadata.namespace defaults to "default"; a missing metadata.uid is generated
//    deterministically: the RFC 4122 version-5 (SHA-1) UUID of the name
//    "podtopo://pods/<namespace>/<name>" in the URL namespace
//    (6ba7b811-9dad-11d1-80b4-00c04fd430c8), e.g. `uuidgen --sha1 --namespace @url
//    --name podtopo://pods/default/demo`, so the same manifest always gets the same uid.
//
// Validation (all problems of the failing document are reported, one per line, each naming
// the source, the document, the controller object when there is one, and the field path):
// malformed YAML or JSON (with its line), wrong field types, apiVersion/kind,
// missing/invalid/duplicate pod and container names (container names are unique across
// init, app and ephemeral containers), invalid or negative quantities and replica counts,
// unknown container resource names, request > limit, hugepages (and extended resources)
// whose request differs from the limit or that have no limit, hugepages sizes, "HugePages
// require cpu or memory", pod-level resources other than cpu/memory/hugepages-*,
// aggregated container requests above the pod-level request, an app container limit above
// the pod-level limit, aggregated hugepages limits above the pod-level one, pod-level
// resources on a windows pod, resources or restartPolicy on an ephemeral container, an
// unknown restartPolicy, two pods with the same namespace/name in one file, and "no pods".
// With PodLevelResources off, spec.resources is neither defaulted nor validated (the API
// server drops it).
//
// Container restartPolicy: `Always` on an init container makes it a sidecar (restartable
// init container). `Always`, `OnFailure` and `Never` are otherwise accepted and ignored
// (KEP-5307 container restart rules); any other value is an error.
#ifndef PODTOPO_API_POD_YAML_H_
#define PODTOPO_API_POD_YAML_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/manifest_tree.h"
#include "api/pod.h"

namespace podtopo {

// A field of a manifest that is no field of its Kubernetes object (api/known_fields.h).
struct UnknownField {
  std::string source;      // the file, as errors name it ("pods.yaml", "<stdin>")
  std::string where;       // "document 2", "document 1 (chart/x.yaml): Deployment web"
  std::string field;       // "spec.containers[0].resource"
  std::string name;        // "resource"
  std::string suggestion;  // the known field it is closest to ("resources"), or ""

  // `unknown field "resource" (did you mean resources?)`
  std::string Message() const;
  // `pods.yaml: document 2: spec.containers[0].resource: unknown field "resource" (did you
  // mean resources?)`
  std::string ToString() const;
};

// How pods are read. The defaults are v1.37's gates, no nodes and lenient kinds.
struct PodLoadOptions {
  PodGates gates = {};                  // defaulting and validation (PodGatesFromConfig)
  std::vector<std::string> node_names = {};  // DaemonSets: one pod per node
  // Kinds podtopo does not read, and fields that are no field of their object, are errors
  // (kubectl's strict field validation).
  bool strict = false;
  // When set, each kind skipped (not strict) is counted here (kind -> objects), so that a
  // command prints one line per kind.
  std::map<std::string, int>* skipped_kinds = nullptr;
  // When set, each controller not expanded because its dependents are in the input (see
  // the banner) is counted here (kind -> objects).
  std::map<std::string, int>* not_expanded = nullptr;
  // When set (and not strict), each unknown field of the objects read is added here, in
  // input order; when not set they are not looked for.
  std::vector<UnknownField>* unknown_fields = nullptr;
  // With strict: each object of a kind podtopo does not read is added here, in input order
  // ("document 2: Service web"), and reading goes on. PodsFromManifest sets it and then fails
  // naming every such object, not only the first.
  std::vector<std::string>* unsupported_objects = nullptr;
  // A List of at least this many items has its items read on several threads
  // (std::thread::hardware_concurrency, at most 8); the pods, the counts and the first error
  // are those of one thread.
  size_t parallel_items = 2048;
};

// Reads and parses `path` ("-" reads standard input, named "<stdin>" in messages).
// Errors: those of util/file.h ReadFile, and those of ParsePods (kInvalidArgument).
absl::StatusOr<std::vector<Pod>> LoadPods(const std::string& path,
                                          const PodLoadOptions& options = {});

// Parses the YAML or JSON text of a manifest file; `source_name` names it in messages and in
// each Pod's `source` ("pods.yaml" when the file gives one pod, else "pods.yaml#2" for the
// pods of document 2 and "pods.yaml#1.items[3]" for a List item). Pods come back in file
// order (a controller's in replica order), defaulted. Errors: kInvalidArgument, message
// starting with `source_name`.
absl::StatusOr<std::vector<Pod>> ParsePods(const std::string& text,
                                           const std::string& source_name,
                                           const PodLoadOptions& options = {});

// The pods of a manifest already read with api/manifest_tree.h ParseManifestText(text,
// source_name): ParsePods without the reading, so that one file is parsed once and its pods
// are read under several sets of gates (`podtopo compare`). Same results and errors as
// ParsePods.
absl::StatusOr<std::vector<Pod>> PodsFromManifest(const ManifestStream& stream,
                                                  const std::string& source_name,
                                                  const PodLoadOptions& options = {});

// The uid LoadPods gives a pod whose manifest has none (see the banner).
std::string DeterministicPodUid(const std::string& namespace_name, const std::string& name);

}  // namespace podtopo

#endif  // PODTOPO_API_POD_YAML_H_
