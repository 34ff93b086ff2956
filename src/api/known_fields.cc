#include "api/known_fields.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "fmt/format.h"
#include "util/suggest.h"

namespace podtopo {
namespace {

// The API types on the way to the fields podtopo reads. kOpaque: a field whose value is not
// looked into (another type, a map of free keys, a scalar).
enum class Type : uint8_t {
  kOpaque,
  kTypeMeta,
  kObjectMeta,
  kPod,
  kPodSpec,
  kContainer,
  kEphemeralContainer,
  kResourceRequirements,
  kPodOS,
  kPodTemplateSpec,
  kPodTemplate,
  kReplicationController,
  kReplicationControllerSpec,
  kDeployment,
  kDeploymentSpec,
  kReplicaSet,
  kReplicaSetSpec,
  kStatefulSet,
  kStatefulSetSpec,
  kStatefulSetOrdinals,
  kDaemonSet,
  kDaemonSetSpec,
  kJob,
  kJobSpec,
  kCronJob,
  kCronJobSpec,
  kJobTemplateSpec,
  kList,
  kCount,
};

struct Field {
  Type in;
  std::string_view name;  // "" = the fields of `type` are inlined (Go's `json:",inline"`)
  Type type = Type::kOpaque;
};

// The one table: k8s.io/api core/v1, apps/v1 and batch/v1 types.go, json names.
constexpr Field kFields[] = {
    {Type::kTypeMeta, "apiVersion"},
    {Type::kTypeMeta, "kind"},

    {Type::kObjectMeta, "name"},
    {Type::kObjectMeta, "generateName"},
    {Type::kObjectMeta, "namespace"},
    {Type::kObjectMeta, "selfLink"},
    {Type::kObjectMeta, "uid"},
    {Type::kObjectMeta, "resourceVersion"},
    {Type::kObjectMeta, "generation"},
    {Type::kObjectMeta, "creationTimestamp"},
    {Type::kObjectMeta, "deletionTimestamp"},
    {Type::kObjectMeta, "deletionGracePeriodSeconds"},
    {Type::kObjectMeta, "labels"},
    {Type::kObjectMeta, "annotations"},
    {Type::kObjectMeta, "ownerReferences"},
    {Type::kObjectMeta, "finalizers"},
    {Type::kObjectMeta, "managedFields"},

    {Type::kPod, "", Type::kTypeMeta},
    {Type::kPod, "metadata", Type::kObjectMeta},
    {Type::kPod, "spec", Type::kPodSpec},
    {Type::kPod, "status"},

    {Type::kPodSpec, "volumes"},
    {Type::kPodSpec, "initContainers", Type::kContainer},
    {Type::kPodSpec, "containers", Type::kContainer},
    {Type::kPodSpec, "ephemeralContainers", Type::kEphemeralContainer},
    {Type::kPodSpec, "restartPolicy"},
    {Type::kPodSpec, "terminationGracePeriodSeconds"},
    {Type::kPodSpec, "activeDeadlineSeconds"},
    {Type::kPodSpec, "dnsPolicy"},
    {Type::kPodSpec, "nodeSelector"},
    {Type::kPodSpec, "serviceAccountName"},
    {Type::kPodSpec, "serviceAccount"},
    {Type::kPodSpec, "automountServiceAccountToken"},
    {Type::kPodSpec, "nodeName"},
    {Type::kPodSpec, "hostNetwork"},
    {Type::kPodSpec, "hostPID"},
    {Type::kPodSpec, "hostIPC"},
    {Type::kPodSpec, "shareProcessNamespace"},
    {Type::kPodSpec, "securityContext"},
    {Type::kPodSpec, "imagePullSecrets"},
    {Type::kPodSpec, "hostname"},
    {Type::kPodSpec, "subdomain"},
    {Type::kPodSpec, "affinity"},
    {Type::kPodSpec, "schedulerName"},
    {Type::kPodSpec, "tolerations"},
    {Type::kPodSpec, "hostAliases"},
    {Type::kPodSpec, "priorityClassName"},
    {Type::kPodSpec, "priority"},
    {Type::kPodSpec, "dnsConfig"},
    {Type::kPodSpec, "readinessGates"},
    {Type::kPodSpec, "runtimeClassName"},
    {Type::kPodSpec, "enableServiceLinks"},
    {Type::kPodSpec, "preemptionPolicy"},
    {Type::kPodSpec, "overhead"},
    {Type::kPodSpec, "topologySpreadConstraints"},
    {Type::kPodSpec, "setHostnameAsFQDN"},
    {Type::kPodSpec, "os", Type::kPodOS},
    {Type::kPodSpec, "hostUsers"},
    {Type::kPodSpec, "schedulingGates"},
    {Type::kPodSpec, "resourceClaims"},
    {Type::kPodSpec, "resources", Type::kResourceRequirements},
    {Type::kPodSpec, "hostnameOverride"},
    {Type::kPodSpec, "workloadRef"},
    {Type::kPodSpec, "schedulingGroup"},
    {Type::kPodSpec, "evictionResponders"},

    {Type::kContainer, "name"},
    {Type::kContainer, "image"},
    {Type::kContainer, "command"},
    {Type::kContainer, "args"},
    {Type::kContainer, "workingDir"},
    {Type::kContainer, "ports"},
    {Type::kContainer, "envFrom"},
    {Type::kContainer, "env"},
    {Type::kContainer, "resources", Type::kResourceRequirements},
    {Type::kContainer, "resizePolicy"},
    {Type::kContainer, "restartPolicy"},
    {Type::kContainer, "restartPolicyRules"},
    {Type::kContainer, "volumeMounts"},
    {Type::kContainer, "volumeDevices"},
    {Type::kContainer, "livenessProbe"},
    {Type::kContainer, "readinessProbe"},
    {Type::kContainer, "startupProbe"},
    {Type::kContainer, "lifecycle"},
    {Type::kContainer, "terminationMessagePath"},
    {Type::kContainer, "terminationMessagePolicy"},
    {Type::kContainer, "imagePullPolicy"},
    {Type::kContainer, "securityContext"},
    {Type::kContainer, "stdin"},
    {Type::kContainer, "stdinOnce"},
    {Type::kContainer, "tty"},

    // EphemeralContainerCommon has the Container's fields.
    {Type::kEphemeralContainer, "", Type::kContainer},
    {Type::kEphemeralContainer, "targetContainerName"},

    {Type::kResourceRequirements, "limits"},
    {Type::kResourceRequirements, "requests"},
    {Type::kResourceRequirements, "claims"},

    {Type::kPodOS, "name"},

    {Type::kPodTemplateSpec, "metadata", Type::kObjectMeta},
    {Type::kPodTemplateSpec, "spec", Type::kPodSpec},

    {Type::kPodTemplate, "", Type::kTypeMeta},
    {Type::kPodTemplate, "metadata", Type::kObjectMeta},
    {Type::kPodTemplate, "template", Type::kPodTemplateSpec},

    {Type::kReplicationController, "", Type::kTypeMeta},
    {Type::kReplicationController, "metadata", Type::kObjectMeta},
    {Type::kReplicationController, "spec", Type::kReplicationControllerSpec},
    {Type::kReplicationController, "status"},
    {Type::kReplicationControllerSpec, "replicas"},
    {Type::kReplicationControllerSpec, "minReadySeconds"},
    {Type::kReplicationControllerSpec, "selector"},
    {Type::kReplicationControllerSpec, "templateRef"},
    {Type::kReplicationControllerSpec, "template", Type::kPodTemplateSpec},

    {Type::kDeployment, "", Type::kTypeMeta},
    {Type::kDeployment, "metadata", Type::kObjectMeta},
    {Type::kDeployment, "spec", Type::kDeploymentSpec},
    {Type::kDeployment, "status"},
    {Type::kDeploymentSpec, "replicas"},
    {Type::kDeploymentSpec, "selector"},
    {Type::kDeploymentSpec, "template", Type::kPodTemplateSpec},
    {Type::kDeploymentSpec, "strategy"},
    {Type::kDeploymentSpec, "minReadySeconds"},
    {Type::kDeploymentSpec, "revisionHistoryLimit"},
    {Type::kDeploymentSpec, "paused"},
    {Type::kDeploymentSpec, "progressDeadlineSeconds"},

    {Type::kReplicaSet, "", Type::kTypeMeta},
    {Type::kReplicaSet, "metadata", Type::kObjectMeta},
    {Type::kReplicaSet, "spec", Type::kReplicaSetSpec},
    {Type::kReplicaSet, "status"},
    {Type::kReplicaSetSpec, "replicas"},
    {Type::kReplicaSetSpec, "minReadySeconds"},
    {Type::kReplicaSetSpec, "selector"},
    {Type::kReplicaSetSpec, "template", Type::kPodTemplateSpec},

    {Type::kStatefulSet, "", Type::kTypeMeta},
    {Type::kStatefulSet, "metadata", Type::kObjectMeta},
    {Type::kStatefulSet, "spec", Type::kStatefulSetSpec},
    {Type::kStatefulSet, "status"},
    {Type::kStatefulSetSpec, "replicas"},
    {Type::kStatefulSetSpec, "selector"},
    {Type::kStatefulSetSpec, "template", Type::kPodTemplateSpec},
    {Type::kStatefulSetSpec, "volumeClaimTemplates"},
    {Type::kStatefulSetSpec, "serviceName"},
    {Type::kStatefulSetSpec, "podManagementPolicy"},
    {Type::kStatefulSetSpec, "updateStrategy"},
    {Type::kStatefulSetSpec, "revisionHistoryLimit"},
    {Type::kStatefulSetSpec, "minReadySeconds"},
    {Type::kStatefulSetSpec, "persistentVolumeClaimRetentionPolicy"},
    {Type::kStatefulSetSpec, "ordinals", Type::kStatefulSetOrdinals},
    {Type::kStatefulSetOrdinals, "start"},

    {Type::kDaemonSet, "", Type::kTypeMeta},
    {Type::kDaemonSet, "metadata", Type::kObjectMeta},
    {Type::kDaemonSet, "spec", Type::kDaemonSetSpec},
    {Type::kDaemonSet, "status"},
    {Type::kDaemonSetSpec, "selector"},
    {Type::kDaemonSetSpec, "template", Type::kPodTemplateSpec},
    {Type::kDaemonSetSpec, "updateStrategy"},
    {Type::kDaemonSetSpec, "minReadySeconds"},
    {Type::kDaemonSetSpec, "revisionHistoryLimit"},

    {Type::kJob, "", Type::kTypeMeta},
    {Type::kJob, "metadata", Type::kObjectMeta},
    {Type::kJob, "spec", Type::kJobSpec},
    {Type::kJob, "status"},
    {Type::kJobSpec, "parallelism"},
    {Type::kJobSpec, "completions"},
    {Type::kJobSpec, "activeDeadlineSeconds"},
    {Type::kJobSpec, "podFailurePolicy"},
    {Type::kJobSpec, "successPolicy"},
    {Type::kJobSpec, "backoffLimit"},
    {Type::kJobSpec, "backoffLimitPerIndex"},
    {Type::kJobSpec, "maxFailedIndexes"},
    {Type::kJobSpec, "failedPodsLimit"},
    {Type::kJobSpec, "selector"},
    {Type::kJobSpec, "manualSelector"},
    {Type::kJobSpec, "template", Type::kPodTemplateSpec},
    {Type::kJobSpec, "ttlSecondsAfterFinished"},
    {Type::kJobSpec, "completionMode"},
    {Type::kJobSpec, "suspend"},
    {Type::kJobSpec, "podReplacementPolicy"},
    {Type::kJobSpec, "managedBy"},
    {Type::kJobSpec, "scheduling"},

    {Type::kCronJob, "", Type::kTypeMeta},
    {Type::kCronJob, "metadata", Type::kObjectMeta},
    {Type::kCronJob, "spec", Type::kCronJobSpec},
    {Type::kCronJob, "status"},
    {Type::kCronJobSpec, "schedule"},
    {Type::kCronJobSpec, "timeZone"},
    {Type::kCronJobSpec, "startingDeadlineSeconds"},
    {Type::kCronJobSpec, "concurrencyPolicy"},
    {Type::kCronJobSpec, "suspend"},
    {Type::kCronJobSpec, "jobTemplate", Type::kJobTemplateSpec},
    {Type::kCronJobSpec, "successfulJobsHistoryLimit"},
    {Type::kCronJobSpec, "failedJobsHistoryLimit"},
    {Type::kJobTemplateSpec, "metadata", Type::kObjectMeta},
    {Type::kJobTemplateSpec, "spec", Type::kJobSpec},

    // kind: List and the typed lists; each item is an object of its own kind.
    {Type::kList, "", Type::kTypeMeta},
    {Type::kList, "metadata"},
    {Type::kList, "items"},
};

constexpr std::pair<std::string_view, Type> kKinds[] = {
    {"Pod", Type::kPod},
    {"PodTemplate", Type::kPodTemplate},
    {"ReplicationController", Type::kReplicationController},
    {"Deployment", Type::kDeployment},
    {"ReplicaSet", Type::kReplicaSet},
    {"StatefulSet", Type::kStatefulSet},
    {"DaemonSet", Type::kDaemonSet},
    {"Job", Type::kJob},
    {"CronJob", Type::kCronJob},
    {"List", Type::kList},
};

// Each type's fields (inlined types expanded), sorted by name, built once from kFields.
struct TypeFields {
  std::vector<std::string_view> names;  // sorted, for the lookup and the suggestion
  std::vector<Type> types;              // in the order of `names`
};

void AddFields(Type in, std::vector<std::pair<std::string_view, Type>>& out) {
  for (const Field& f : kFields) {
    if (f.in != in) continue;
    if (f.name.empty()) {
      AddFields(f.type, out);
    } else {
      out.emplace_back(f.name, f.type);
    }
  }
}

const std::array<TypeFields, static_cast<size_t>(Type::kCount)>& AllTypeFields() {
  static const auto* all = [] {
    auto* types = new std::array<TypeFields, static_cast<size_t>(Type::kCount)>();
    for (size_t t = 0; t < types->size(); ++t) {
      std::vector<std::pair<std::string_view, Type>> fields;
      AddFields(static_cast<Type>(t), fields);
      std::sort(fields.begin(), fields.end());
      for (const auto& [name, type] : fields) {
        (*types)[t].names.push_back(name);
        (*types)[t].types.push_back(type);
      }
    }
    return types;
  }();
  return *all;
}

std::optional<Type> KindType(std::string_view kind) {
  for (const auto& [k, type] : kKinds) {
    if (k == kind) return type;
  }
  if (kind.size() > 4 && kind.ends_with("List")) return Type::kList;  // PodList, ...
  return std::nullopt;
}

std::string FieldPath(const std::string& path, std::string_view field) {
  return path.empty() ? std::string(field) : fmt::format("{}.{}", path, field);
}

void Walk(const ManifestNode& node, Type type, const std::string& path,
          std::vector<UnknownFieldPath>* out) {
  if (type == Type::kOpaque) return;
  if (node.IsList()) {
    // The list fields of the table (containers) hold maps of their type.
    for (size_t i = 0; i < node.items.size(); ++i) {
      if (node.items[i].IsMap()) Walk(node.items[i], type, fmt::format("{}[{}]", path, i), out);
    }
    return;
  }
  if (!node.IsMap()) return;
  const TypeFields& known = AllTypeFields()[static_cast<size_t>(type)];
  for (const auto& [key, value] : node.entries) {
    auto it = std::lower_bound(known.names.begin(), known.names.end(), key);
    if (it != known.names.end() && *it == key) {
      Walk(value, known.types[static_cast<size_t>(it - known.names.begin())], FieldPath(path, key),
           out);
      continue;
    }
    out->push_back(UnknownFieldPath{FieldPath(path, key), key,
                                    SuggestName(key, std::span(known.names)).value_or("")});
  }
}

}  // namespace

void FindUnknownFields(const ManifestNode& object, std::string_view kind, const std::string& base,
                       std::vector<UnknownFieldPath>* out) {
  if (std::optional<Type> type = KindType(kind); type.has_value() && object.IsMap()) {
    Walk(object, *type, base, out);
  }
}

}  // namespace podtopo
