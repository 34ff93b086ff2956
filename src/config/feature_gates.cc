#include "config/feature_gates.h"

#include <span>
#include <string_view>
#include <unordered_map>

namespace podtopo::config {
namespace {

using S = GateStage;

// Every feature gate of Kubernetes v1.37 with the spec in force at 1.37 (the VersionedSpecs
// entry with the highest Version <= 1.37): default, stage, LockToDefault. AllAlpha / AllBeta
// are the registry's special toggles. Sorted by name (byte order).
//
// Base: the v1.37 "Feature Gates" reference page (kubernetes/website), plus the client-go gates
// ClientsAllowCBOR / ClientsPreferCBOR that page leaves out. The released v1.37
// pkg/features/kube_features.go is not among the stored copies the project can read (the
// newest stored kubernetes/kubernetes versions are v1.33-v1.36 development snapshots), so
// each entry changed for issue 10 cites the file and pull request it was read from:
//
// | gate                                        | v1.37 spec                  | source |
// |---------------------------------------------|-----------------------------|--------|
// | PodLevelResourcesFixDefaulting (new)        | Beta, true                  | k/k PR #140514 (merged 2026-07, "enabled by default"), PR #140853, issue #140848 |
// | PodLevelResourcesFixKubeletQOSClass (new)   | Beta, true                  | k/k PR #137150 (v1.36), PR #140631 / issue #140628 (kubelet log) |
// | DisableCPUQuotaWithExclusiveCPUs            | Deprecated, true, locked    | k/k PR #139351 "lock to default" (merged 2026-05-29, v1.37); deprecated in v1.36 (kubelet log in PR #137996); removal PR #141758 targets 1.38 |
// | KubeletPodResourcesListUseActivePods (new)  | Deprecated, true            | kube_features.go v1.36-cycle snapshot (stored copy id 378079260, dependency map); kubelet log in PR #137996 |
// | AllowOverwriteTerminationGracePeriodSeconds (new) | Deprecated, false, locked | same snapshot: {1.35, Deprecated, false, LockToDefault} "remove in 1.38" |
// | CustomCPUCFSQuotaPeriod                     | GA, true                    | k/k PR #136339 (merged 2026-01, v1.36); kubelet log "setting GA feature gate" in PR #137996 |
// | SystemdWatchdog                             | GA, true, locked            | k/k PR #134691 "Lock SystemdWatchdog feature gate" (v1.35) |
//
// Dependencies (kFeatureDependencies below): the same v1.36-cycle snapshot's
// defaultKubernetesFeatureGateDependencies (for the gates of this table), plus the v1.37
// additions PodLevelResourceManagers -> PodLevelResources (KEP-5526, e2e PR #140853),
// PodLevelResourcesFixKubeletQOSClass -> PodLevelResources (#137150, #140631),
// PodLevelResourcesFixDefaulting -> PodLevelResources (#140514, #140853), and
// CompositePodGroup -> GenericWorkload, TopologyAwareWorkloadScheduling and
// H2CContainerProbe -> NodeDeclaredFeatures (v1.37 release notes of third parties; the second
// can never fail: NodeDeclaredFeatures is GA and locked).
constexpr FeatureGateSpec kGates[] = {
    {"APIResponseCompression", true, S::kBeta, false},
    {"APIServerIdentity", true, S::kBeta, false},
    {"APIServerTracing", true, S::kGA, true},
    {"APIServerWebhookAuthenticationToken", false, S::kAlpha, false},
    {"APIServingWithRoutine", false, S::kAlpha, false},
    {"AllAlpha", false, S::kAlpha, false},
    {"AllBeta", false, S::kBeta, false},
    {"AllowDNSOnlyNodeCSR", false, S::kDeprecated, false},
    {"AllowInsecureKubeletCertificateSigningRequests", false, S::kDeprecated, false},
    {"AllowOverwriteTerminationGracePeriodSeconds", false, S::kDeprecated, true},
    {"AllowParsingUserUIDFromCertAuth", true, S::kBeta, false},
    {"AllowUnsafeMalformedObjectDeletion", true, S::kBeta, false},
    {"AnonymousAuthConfigurableEndpoints", true, S::kGA, true},
    {"AnyVolumeDataSource", true, S::kGA, true},
    {"AtomicFIFO", true, S::kBeta, false},
    {"AtomicWriteVolumeUserFields", false, S::kAlpha, false},
    {"AuthorizeNodeWithSelectors", true, S::kGA, true},
    {"AuthorizePodWebsocketUpgradeCreatePermission", true, S::kBeta, false},
    {"AuthorizeWithSelectors", true, S::kGA, true},
    {"BtreeWatchCache", true, S::kGA, true},
    {"CBORServingAndStorage", false, S::kAlpha, false},
    {"CPUManagerPolicyAlphaOptions", false, S::kAlpha, false},
    {"CPUManagerPolicyBetaOptions", true, S::kBeta, false},
    {"CPUManagerPolicyOptions", true, S::kGA, true},
    {"CRDObservedGenerationTracking", false, S::kBeta, false},
    {"CRDValidationRatcheting", true, S::kGA, true},
    {"CRIListStreaming", false, S::kAlpha, false},
    {"CSIServiceAccountTokenSecrets", true, S::kGA, true},
    {"CSIVolumeHealth", false, S::kAlpha, false},
    {"ChangeContainerStatusOnKubeletRestart", false, S::kDeprecated, false},
    {"ClearingNominatedNodeNameAfterBinding", true, S::kBeta, false},
    {"ClientsAllowCBOR", false, S::kAlpha, false},
    {"ClientsPreferCBOR", false, S::kAlpha, false},
    {"CloudControllerManagerWatchBasedRoutesReconciliation", false, S::kAlpha, false},
    {"CloudControllerManagerWebhook", false, S::kAlpha, false},
    {"ClusterTrustBundle", true, S::kGA, true},
    {"ClusterTrustBundleProjection", true, S::kGA, true},
    {"ComponentFlagz", true, S::kBeta, false},
    {"ComponentStatusz", true, S::kBeta, false},
    {"CompositePodGroup", false, S::kAlpha, false},
    {"ConcurrentWatchObjectDecode", true, S::kBeta, false},
    {"ConsistentListFromCache", true, S::kGA, true},
    {"ConstrainedImpersonation", true, S::kBeta, false},
    {"ContainerCheckpoint", true, S::kBeta, false},
    {"ContainerRestartRules", true, S::kBeta, false},
    {"ContainerStopSignals", false, S::kAlpha, false},
    {"ContextualLogging", true, S::kBeta, false},
    {"ControllerManagerReleaseLeaderElectionLockOnExit", false, S::kAlpha, false},
    {"CoordinatedLeaderElection", false, S::kBeta, false},
    {"CronJobsScheduledAnnotation", true, S::kGA, true},
    {"CrossNamespaceVolumeDataSource", false, S::kAlpha, false},
    {"CustomCPUCFSQuotaPeriod", true, S::kGA, false},
    {"CustomResourceFieldSelectors", true, S::kGA, true},
    {"DRAAdminAccess", true, S::kGA, true},
    {"DRAConsumableCapacity", true, S::kBeta, false},
    {"DRADerivedAttributes", false, S::kAlpha, false},
    {"DRADeviceBindingConditions", true, S::kBeta, false},
    {"DRADeviceCompatibilityGroups", false, S::kAlpha, false},
    {"DRADeviceTaintRules", true, S::kGA, true},
    {"DRADeviceTaints", true, S::kGA, true},
    {"DRAExtendedResource", true, S::kGA, true},
    {"DRAListTypeAttributes", false, S::kAlpha, false},
    {"DRANodeAllocatableResources", false, S::kAlpha, false},
    {"DRAOptionalNodeOperations", false, S::kAlpha, false},
    {"DRAPartitionableDevices", true, S::kBeta, false},
    {"DRAPartitionableDevicesType", false, S::kAlpha, false},
    {"DRAPrioritizedList", true, S::kGA, true},
    {"DRAResourceClaimDeviceStatus", true, S::kGA, true},
    {"DRAResourceClaimGranularStatusAuthorization", true, S::kBeta, false},
    {"DRAResourcePoolStatus", false, S::kAlpha, false},
    {"DRASchedulerFilterTimeout", false, S::kAlpha, false},
    {"DRAWorkloadResourceClaims", false, S::kBeta, false},
    {"DeclarativeValidation", true, S::kGA, true},
    {"DeclarativeValidationBeta", true, S::kBeta, false},
    {"DeclarativeValidationTakeover", false, S::kDeprecated, false},
    {"DefaultPodSysctls", false, S::kAlpha, false},
    {"DeploymentReplicaSetTerminatingReplicas", true, S::kBeta, false},
    {"DetectCacheInconsistency", true, S::kBeta, false},
    {"DisableAllocatorDualWrite", true, S::kGA, true},
    {"DisableCPUQuotaWithExclusiveCPUs", true, S::kDeprecated, true},
    {"DisableNodeKubeProxyVersion", true, S::kDeprecated, false},
    {"DynamicResourceAllocation", true, S::kGA, true},
    {"ElasticIndexedJob", true, S::kGA, true},
    {"EmptyDirVolumeMode", false, S::kAlpha, false},
    {"EnvFiles", true, S::kBeta, false},
    {"EtcdRangeStream", true, S::kBeta, false},
    {"EventedPLEG", false, S::kAlpha, false},
    {"ExcludeAdmissionWebhookVirtualResources", true, S::kBeta, false},
    {"ExecProbeTimeout", true, S::kGA, true},
    {"ExtendWebSocketsToKubelet", true, S::kBeta, false},
    {"ExternalServiceAccountTokenSigner", true, S::kGA, true},
    {"GRPCContainerProbeTLS", false, S::kAlpha, false},
    {"GenericWorkload", false, S::kBeta, false},
    {"GitRepoVolumeDriver", false, S::kDeprecated, false},
    {"GracefulNodeShutdown", true, S::kBeta, false},
    {"GracefulNodeShutdownBasedOnPodPriority", true, S::kBeta, false},
    {"H2CContainerProbe", false, S::kAlpha, false},
    {"HPAConfigurableTolerance", true, S::kGA, true},
    {"HPAScaleToZero", true, S::kBeta, false},
    {"HostnameOverride", true, S::kGA, true},
    {"HugepageAwareEviction", true, S::kBeta, false},
    {"ImageMaximumGCAge", true, S::kGA, true},
    {"ImageVolume", true, S::kGA, true},
    {"ImageVolumeWithDigest", false, S::kAlpha, false},
    {"InOrderInformers", true, S::kBeta, false},
    {"InPlacePodLevelResourcesVerticalScaling", true, S::kBeta, false},
    {"InPlacePodVerticalScaling", true, S::kGA, true},
    {"InPlacePodVerticalScalingAllocatedStatus", false, S::kDeprecated, false},
    {"InPlacePodVerticalScalingExclusiveCPUs", false, S::kAlpha, false},
    {"InPlacePodVerticalScalingExclusiveMemory", false, S::kAlpha, false},
    {"InPlacePodVerticalScalingMemoryBackedVolumes", false, S::kAlpha, false},
    {"InPlacePodVerticalScalingSchedulerPreemption", false, S::kAlpha, false},
    {"InformerResourceVersion", true, S::kGA, true},
    {"JobBackoffLimitPerIndex", true, S::kGA, true},
    {"JobManagedBy", true, S::kGA, true},
    {"JobPodReplacementPolicy", true, S::kGA, true},
    {"JobSuccessPolicy", true, S::kGA, true},
    {"KMSv1", false, S::kDeprecated, false},
    {"KubeProxyIPVS", true, S::kDeprecated, false},
    {"KubeProxyNFTablesLocalhostNodePorts", false, S::kAlpha, false},
    {"KubeletCgroupDriverFromCRI", true, S::kGA, true},
    {"KubeletCrashLoopBackOffMax", true, S::kBeta, false},
    {"KubeletEnsureSecretPulledImages", true, S::kBeta, false},
    {"KubeletFineGrainedAuthz", true, S::kGA, true},
    {"KubeletInUserNamespace", true, S::kBeta, false},
    {"KubeletPSI", true, S::kGA, true},
    {"KubeletPodResourcesDynamicResources", true, S::kGA, true},
    {"KubeletPodResourcesGet", true, S::kGA, true},
    {"KubeletPodResourcesListUseActivePods", true, S::kDeprecated, false},
    {"KubeletSeparateDiskGC", true, S::kBeta, false},
    {"KubeletServiceAccountTokenForCredentialProviders", true, S::kBeta, false},
    {"KubeletTracing", true, S::kGA, true},
    {"ListFromCacheSnapshot", true, S::kBeta, false},
    {"LocalStorageCapacityIsolationFSQuotaMonitoring", false, S::kBeta, false},
    {"LogarithmicScaleDown", true, S::kGA, true},
    {"LoggingAlphaOptions", false, S::kAlpha, false},
    {"LoggingBetaOptions", true, S::kBeta, false},
    {"ManifestBasedAdmissionControlConfig", true, S::kBeta, false},
    {"MatchLabelKeysInPodAffinity", true, S::kGA, true},
    {"MatchLabelKeysInPodTopologySpread", true, S::kBeta, false},
    {"MatchLabelKeysInPodTopologySpreadSelectorMerge", true, S::kBeta, false},
    {"MaxUnavailableStatefulSet", true, S::kBeta, false},
    {"MemoryManager", true, S::kGA, true},
    {"MemoryQoS", true, S::kBeta, false},
    {"MultiCIDRServiceAllocator", true, S::kGA, true},
    {"MutableCSINodeAllocatableCount", true, S::kGA, true},
    {"MutablePVNodeAffinity", false, S::kAlpha, false},
    {"MutablePodResourcesForSuspendedJobs", true, S::kBeta, false},
    {"MutableSchedulingDirectivesForSuspendedJobs", true, S::kBeta, false},
    {"MutatingAdmissionPolicy", true, S::kGA, true},
    {"NFTablesProxyMode", true, S::kGA, true},
    {"NativeHistograms", true, S::kBeta, false},
    {"NodeDeclaredFeatures", true, S::kGA, true},
    {"NodeInclusionPolicyInPodTopologySpread", true, S::kGA, true},
    {"NodeLifecycleConditions", false, S::kAlpha, false},
    {"NodeLogQuery", true, S::kGA, true},
    {"NodeSwap", true, S::kGA, true},
    {"NominatedNodeNameForExpectation", true, S::kBeta, false},
    {"OpenAPIEnums", true, S::kBeta, false},
    {"OpportunisticBatching", true, S::kBeta, false},
    {"OrderedNamespaceDeletion", true, S::kGA, true},
    {"PersistentVolumeClaimUnusedSinceTime", true, S::kBeta, false},
    {"PodAndContainerStatsFromCRI", false, S::kBeta, false},
    {"PodCertificateRequest", true, S::kGA, true},
    {"PodDeletionCost", true, S::kBeta, false},
    {"PodGroupPreemptionPolicy", false, S::kAlpha, false},
    {"PodIndexLabel", true, S::kGA, true},
    {"PodLevelResourceManagers", false, S::kBeta, false},
    {"PodLevelResources", true, S::kBeta, false},
    {"PodLevelResourcesFixDefaulting", true, S::kBeta, false},
    {"PodLevelResourcesFixKubeletQOSClass", true, S::kBeta, false},
    {"PodLifecycleSleepAction", true, S::kGA, true},
    {"PodLifecycleSleepActionAllowZero", true, S::kGA, true},
    {"PodLogsQuerySplitStreams", false, S::kAlpha, false},
    {"PodObservedGenerationTracking", true, S::kGA, true},
    {"PodReadyToStartContainersCondition", true, S::kGA, true},
    {"PodSchedulingReadiness", true, S::kGA, true},
    {"PodTopologyLabelsAdmission", true, S::kBeta, false},
    {"PodsAPI", true, S::kBeta, false},
    {"PortForwardWebsockets", true, S::kBeta, false},
    {"PreferSameTrafficDistribution", true, S::kGA, true},
    {"PreventStaticPodAPIReferences", true, S::kBeta, false},
    {"ProcMountType", true, S::kGA, true},
    {"QOSReserved", false, S::kAlpha, false},
    {"RecoverVolumeExpansionFailure", true, S::kGA, true},
    {"RecursiveReadOnlyMounts", true, S::kGA, true},
    {"ReduceDefaultCrashLoopBackOffDecay", false, S::kAlpha, false},
    {"RelaxedDNSSearchValidation", true, S::kGA, true},
    {"RelaxedEnvironmentVariableValidation", true, S::kGA, true},
    {"RelaxedServiceNameValidation", true, S::kGA, true},
    {"ReloadKubeletServerCertificateFile", true, S::kBeta, false},
    {"RemoteRequestHeaderUID", false, S::kAlpha, false},
    {"ResilientWatchCacheInitialization", true, S::kGA, true},
    {"ResourceHealthStatus", true, S::kBeta, false},
    {"RestartAllContainersOnContainerExits", true, S::kBeta, false},
    {"RetryGenerateName", true, S::kGA, true},
    {"RotateKubeletServerCertificate", true, S::kBeta, false},
    {"RuntimeClassInImageCriApi", false, S::kAlpha, false},
    {"SELinuxChangePolicy", true, S::kGA, true},
    {"SELinuxMount", true, S::kGA, true},
    {"SELinuxMountReadWriteOncePod", true, S::kGA, true},
    {"SchedulerAsyncAPICalls", true, S::kBeta, false},
    {"SchedulerAsyncPreemption", true, S::kBeta, false},
    {"SchedulerPopFromBackoffQ", true, S::kBeta, false},
    {"SchedulerQueueingHints", true, S::kGA, true},
    {"SeparateCacheWatchRPC", false, S::kDeprecated, false},
    {"SeparateTaintEvictionController", true, S::kGA, true},
    {"ServiceAccountNodeAudienceRestriction", true, S::kBeta, false},
    {"ServiceAccountTokenJTI", true, S::kGA, true},
    {"ServiceAccountTokenNodeBinding", true, S::kGA, true},
    {"ServiceAccountTokenNodeBindingValidation", true, S::kGA, true},
    {"ServiceAccountTokenPodNodeInfo", true, S::kGA, true},
    {"ServiceTrafficDistribution", true, S::kGA, true},
    {"ShardedListAndWatch", false, S::kAlpha, false},
    {"SidecarContainers", true, S::kGA, true},
    {"SizeBasedListCostEstimate", true, S::kBeta, false},
    {"StaleControllerConsistencyDaemonSet", true, S::kBeta, false},
    {"StaleControllerConsistencyJob", true, S::kBeta, false},
    {"StaleControllerConsistencyReplicaSet", true, S::kBeta, false},
    {"StaleControllerConsistencyStatefulSet", true, S::kBeta, false},
    {"StatefulSetAutoDeletePVC", true, S::kGA, true},
    {"StatefulSetRecreateStrategy", false, S::kAlpha, false},
    {"StatefulSetStartOrdinal", true, S::kGA, true},
    {"StorageCapacityScoring", true, S::kBeta, false},
    {"StorageNamespaceIndex", true, S::kDeprecated, false},
    {"StorageVersionAPI", false, S::kAlpha, false},
    {"StorageVersionHash", true, S::kBeta, false},
    {"StorageVersionMigrator", false, S::kBeta, false},
    {"StreamingCollectionEncodingToJSON", true, S::kGA, true},
    {"StreamingCollectionEncodingToProtobuf", true, S::kGA, true},
    {"StrictCostEnforcementForVAP", true, S::kGA, true},
    {"StrictCostEnforcementForWebhooks", true, S::kGA, true},
    {"StrictIPCIDRValidation", true, S::kBeta, false},
    {"StructuredAuthenticationConfiguration", true, S::kGA, true},
    {"StructuredAuthenticationConfigurationEgressSelector", true, S::kBeta, false},
    {"StructuredAuthenticationConfigurationJWKSMetrics", true, S::kBeta, false},
    {"StructuredAuthorizationConfiguration", true, S::kGA, true},
    {"SupplementalGroupsPolicy", true, S::kBeta, false},
    {"SystemdWatchdog", true, S::kGA, true},
    {"TaintTolerationComparisonOperators", false, S::kAlpha, false},
    {"TokenRequestServiceAccountUIDValidation", true, S::kBeta, false},
    {"TopologyAwareHints", true, S::kGA, true},
    {"TopologyAwareWorkloadScheduling", false, S::kAlpha, false},
    {"TopologyManagerPolicyAlphaOptions", false, S::kAlpha, false},
    {"TopologyManagerPolicyBetaOptions", true, S::kBeta, false},
    {"TopologyManagerPolicyOptions", true, S::kGA, true},
    {"TranslateStreamCloseWebsocketRequests", true, S::kBeta, false},
    {"UnauthenticatedHTTP2DOSMitigation", true, S::kBeta, false},
    {"UnknownVersionInteroperabilityProxy", true, S::kBeta, false},
    {"UnlockWhileProcessingFIFO", true, S::kBeta, false},
    {"UserNamespacesHostNetworkSupport", false, S::kAlpha, false},
    {"UserNamespacesSupport", true, S::kGA, true},
    {"VolumeAttributesClass", true, S::kGA, true},
    {"VolumeBindMountOptions", false, S::kAlpha, false},
    {"VolumeLimitScaling", true, S::kBeta, false},
    {"WatchCacheInitializationPostStartHook", true, S::kGA, true},
    {"WatchFromStorageWithoutResourceVersion", false, S::kDeprecated, false},
    {"WatchList", true, S::kBeta, false},
    {"WatchListClient", true, S::kBeta, false},
    {"WinDSR", true, S::kGA, true},
    {"WinOverlay", true, S::kGA, true},
    {"WindowsCPUAndMemoryAffinity", false, S::kAlpha, false},
    {"WindowsGracefulNodeShutdown", true, S::kBeta, false},
    {"WindowsHostNetwork", false, S::kDeprecated, false},
    {"WorkloadWithJob", false, S::kAlpha, false},
};

// Sorted by gate; each list sorted (AddDependencies sorts and compacts).
constexpr std::string_view kDepAPIServerIdentity[] = {"APIServerIdentity"};
constexpr std::string_view kDepAuthorizeNodeWithSelectors[] = {"AuthorizeNodeWithSelectors"};
constexpr std::string_view kDepAuthorizeWithSelectors[] = {"AuthorizeWithSelectors"};
constexpr std::string_view kDepClusterTrustBundle[] = {"ClusterTrustBundle"};
constexpr std::string_view kDepCompositePodGroup[] = {"GenericWorkload",
                                                      "TopologyAwareWorkloadScheduling"};
constexpr std::string_view kDepDRA[] = {"DynamicResourceAllocation"};
constexpr std::string_view kDepDRABinding[] = {"DRAResourceClaimDeviceStatus",
                                               "DynamicResourceAllocation"};
constexpr std::string_view kDepDRADeviceTaints[] = {"DRADeviceTaints"};
constexpr std::string_view kDepContainerRestartRules[] = {"ContainerRestartRules",
                                                          "NodeDeclaredFeatures"};
constexpr std::string_view kDepDeclarativeValidation[] = {"DeclarativeValidation"};
constexpr std::string_view kDepGracefulNodeShutdown[] = {"GracefulNodeShutdown"};
constexpr std::string_view kDepImageVolume[] = {"ImageVolume"};
constexpr std::string_view kDepInPlace[] = {"InPlacePodVerticalScaling"};
constexpr std::string_view kDepInPlaceMemory[] = {"InPlacePodVerticalScaling", "MemoryManager"};
constexpr std::string_view kDepInPlacePodLevel[] = {"InPlacePodVerticalScaling",
                                                    "NodeDeclaredFeatures", "PodLevelResources"};
constexpr std::string_view kDepMatchLabelKeys[] = {"MatchLabelKeysInPodTopologySpread"};
constexpr std::string_view kDepMemoryManager[] = {"MemoryManager"};
constexpr std::string_view kDepMultiCIDR[] = {"MultiCIDRServiceAllocator"};
constexpr std::string_view kDepNodeDeclaredFeatures[] = {"NodeDeclaredFeatures"};
constexpr std::string_view kDepPodLevelResources[] = {"PodLevelResources"};
constexpr std::string_view kDepPodLifecycleSleepAction[] = {"PodLifecycleSleepAction"};
constexpr std::string_view kDepSATokenNodeBindingValidation[] = {
    "ServiceAccountTokenNodeBindingValidation"};
constexpr std::string_view kDepStructuredAuthn[] = {"StructuredAuthenticationConfiguration"};
constexpr std::string_view kDepUserNamespaces[] = {"UserNamespacesSupport"};

struct GateDependency {
  std::string_view gate;
  std::span<const std::string_view> depends_on;
};

constexpr GateDependency kFeatureDependencies[] = {
    {"AuthorizeNodeWithSelectors", kDepAuthorizeWithSelectors},
    {"ClusterTrustBundleProjection", kDepClusterTrustBundle},
    {"CompositePodGroup", kDepCompositePodGroup},
    {"DRAAdminAccess", kDepDRA},
    {"DRAConsumableCapacity", kDepDRA},
    {"DRADeviceBindingConditions", kDepDRABinding},
    {"DRADeviceTaintRules", kDepDRADeviceTaints},
    {"DRADeviceTaints", kDepDRA},
    {"DRAExtendedResource", kDepDRA},
    {"DRAPartitionableDevices", kDepDRA},
    {"DRAPrioritizedList", kDepDRA},
    {"DRASchedulerFilterTimeout", kDepDRA},
    {"DeclarativeValidationTakeover", kDepDeclarativeValidation},
    {"DisableAllocatorDualWrite", kDepMultiCIDR},
    {"GracefulNodeShutdownBasedOnPodPriority", kDepGracefulNodeShutdown},
    {"H2CContainerProbe", kDepNodeDeclaredFeatures},
    {"ImageVolumeWithDigest", kDepImageVolume},
    {"InPlacePodLevelResourcesVerticalScaling", kDepInPlacePodLevel},
    {"InPlacePodVerticalScalingAllocatedStatus", kDepInPlace},
    {"InPlacePodVerticalScalingExclusiveCPUs", kDepInPlace},
    {"InPlacePodVerticalScalingExclusiveMemory", kDepInPlaceMemory},
    {"MatchLabelKeysInPodTopologySpreadSelectorMerge", kDepMatchLabelKeys},
    {"PodCertificateRequest", kDepAuthorizeNodeWithSelectors},
    {"PodLevelResourceManagers", kDepPodLevelResources},
    {"PodLevelResourcesFixDefaulting", kDepPodLevelResources},
    {"PodLevelResourcesFixKubeletQOSClass", kDepPodLevelResources},
    {"PodLifecycleSleepActionAllowZero", kDepPodLifecycleSleepAction},
    {"ProcMountType", kDepUserNamespaces},
    {"ResourceHealthStatus", kDepDRA},
    {"RestartAllContainersOnContainerExits", kDepContainerRestartRules},
    {"ServiceAccountTokenNodeBinding", kDepSATokenNodeBindingValidation},
    {"StorageVersionAPI", kDepAPIServerIdentity},
    {"StructuredAuthenticationConfigurationEgressSelector", kDepStructuredAuthn},
    {"StructuredAuthenticationConfigurationJWKSMetrics", kDepStructuredAuthn},
    {"UnknownVersionInteroperabilityProxy", kDepAPIServerIdentity},
    {"UserNamespacesHostNetworkSupport", kDepUserNamespaces},
    {"WindowsCPUAndMemoryAffinity", kDepMemoryManager},
    {"WindowsGracefulNodeShutdown", kDepGracefulNodeShutdown},
};

}  // namespace

std::span<const FeatureGateSpec> KnownFeatureGates() { return kGates; }

namespace {

// Each gate's spec and dependencies by name, built once: a configuration's checks look up
// every gate of the table (GateDependencyProblems), so a linear search made them quadratic.
struct GateEntry {
  const FeatureGateSpec* spec = nullptr;
  std::span<const std::string_view> depends_on;
  bool has_dependencies = false;
};

const std::unordered_map<std::string_view, GateEntry>& GateIndex() {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, GateEntry>();
    for (const FeatureGateSpec& g : kGates) {
      GateEntry& e = (*m)[g.name];
      if (e.spec == nullptr) e.spec = &g;  // the first of a name, as a linear search finds it
    }
    for (const GateDependency& d : kFeatureDependencies) {
      GateEntry& e = (*m)[d.gate];
      if (!e.has_dependencies) {  // the first entry of a gate, as a linear search finds it
        e.depends_on = d.depends_on;
        e.has_dependencies = true;
      }
    }
    return m;
  }();
  return *index;
}

}  // namespace

const FeatureGateSpec* FindFeatureGate(std::string_view name) {
  const auto& index = GateIndex();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second.spec;
}

const FeatureGateSpec* FindFeatureGate(std::string_view name,
                                       const kubelet::KubeletVersion* version) {
  if (version != nullptr) {
    for (std::string_view unknown : version->unknown_gates) {
      if (unknown == name) return nullptr;
    }
    for (const FeatureGateSpec& changed : version->gate_changes) {
      if (changed.name == name) return &changed;
    }
  }
  return FindFeatureGate(name);
}

std::span<const std::string_view> FeatureGateDependencies(std::string_view gate) {
  const auto& index = GateIndex();
  auto it = index.find(gate);
  return it == index.end() ? std::span<const std::string_view>() : it->second.depends_on;
}

}  // namespace podtopo::config
