// KubeNode: a simulated node on a real control plane (`podtopo serve --kubeconfig FILE
// --node-name NAME`, issue 25 item 3; docs/serve.md "A simulated node on a real control plane").
//
// It plays a kubelet against an API server, as kwok does, but admits pods with podtopo's exact
// resource managers: the same admission::Node (admission/node.h) every command uses, under the
// kubelet configuration and version it is given.
//
//   1. Register. POST /api/v1/nodes with the Node of kubenode/api_objects.h (capacity and
//      allocatable from the topology and the configuration, Ready, nodeInfo); when the Node
//      exists (409), it is adopted: its labels are merged and its status replaced
//      (PUT nodes/NAME/status). Then the Lease kube-node-lease/NAME is created or taken over.
//      Before all this, a live Lease of another process (kubenode/api_objects.h LeaseConflict)
//      makes Start fail: one process plays a node. Stop marks the Lease released.
//   2. Watch the pods bound to it: kube/informer.h on
//      /api/v1/pods?fieldSelector=spec.nodeName%3DNAME. Every event, and every pod of the
//      informer's cache once per `heartbeat` (so that a lost write is made again), goes through
//      Reconcile, which compares what the pod is with what the node made of it:
//        - a pod not yet seen, neither Failed nor Succeeded nor terminating: read with the
//          commands' pod reader (PodFromApi) and admitted (Node::Admit); rejected, it gets
//          status.phase Failed with the kubelet's reason and message, admitted, Running;
//        - a pod the node holds whose status is not Running yet: the status is written again;
//        - a pod with metadata.deletionTimestamp: released (Node::Remove), then deleted with
//          grace period 0 and its uid as a precondition, as a kubelet does once the pod's
//          containers stopped;
//        - a pod that is gone (DELETED, or absent from a re-list), or whose uid changed (deleted
//          and created again under its name): released; the new one is admitted.
//      A pod that the reader refuses is Failed with reason "PodtopoInvalidPod" and the reader's
//      message (naming the field).
//   3. Publish its NodeResourceTopology with the agent's publisher (agent/nrt_publisher.h),
//      after every change: the object is the agent's (BuildNodeResourceTopology, podtopo's
//      attributes) and its zones come from the agent's accounting (agent/observation.h
//      AccountZones), fed with what this node would answer on the PodResources API: each
//      admitted pod reported by podresources/report.h BuildPodResources and read back with
//      client::BuildPodView, the allocatable resources by BuildAllocatable. So a pod-level
//      allocation is counted once, and the object equals what `podtopo agent` publishes for
//      a `podtopo serve` holding the same pods (kubenode/node_nrt.h; node_nrt_test checks it).
//   4. Heartbeat: every `heartbeat` the Lease's renewTime is renewed (the node lifecycle
//      controller reads the Lease), and every `status_report` the Node's conditions are written
//      again with a new lastHeartbeatTime, so nothing marks the node NotReady.
// With a state dir, the node's checkpoints and its record of pods are kept there as by plain
// `serve` (admission/node.h): a restart restores the pods, finds them in the first list and
// leaves them Running; pods deleted meanwhile are released once the informer has synced. The
// directory is locked for the process's lifetime.
//
// Requests that fail (the API server away, a conflict) are logged and made again at the next
// heartbeat; the node keeps running. Start fails only when the node cannot be built or
// registered (bad configuration, the API server unreachable or refusing the Node), naming why.
//
// Example:
//   auto node = KubeNode::Start(LoadKubeconfig("cp/admin.kubeconfig").value(),
//                               LoadNode("preset:demo").value(), config, {.node_name = "n1"});
//   ...                          // the scheduler binds pods to n1; they become Running or Failed
//   (*node)->Stats().admitted;
//   (*node)->Stop();
//
// Thread safety: every public method may be called from any thread. Internally one mutex
// serialises the admission::Node and the pod status writes (the informer's thread and the
// heartbeat's thread both reconcile).
#ifndef PODTOPO_KUBENODE_KUBE_NODE_H_
#define PODTOPO_KUBENODE_KUBE_NODE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admission/node.h"
#include "config/kubelet_config.h"
#include "kube/kubeconfig.h"
#include "topology/node_topology.h"

namespace podtopo::kubenode {

struct KubeNodeOptions {
  std::string node_name;                  // required
  std::string state_dir;                  // "" = state in memory only
  std::string address = "127.0.0.1";      // the Node's InternalIP and the pods' hostIP
  std::chrono::milliseconds heartbeat{std::chrono::seconds(10)};      // Lease, pod resync
  std::chrono::milliseconds status_report{std::chrono::seconds(60)};  // Node conditions
  std::chrono::milliseconds nrt_resync{std::chrono::minutes(5)};      // NRT written again
  bool publish_nrt = true;
};

struct KubeNodeStats {
  uint64_t admitted = 0;       // pods admitted (Running)
  uint64_t rejected = 0;       // pods rejected (Failed)
  uint64_t released = 0;       // pods released (deleted, gone, terminating)
  uint64_t deleted = 0;        // terminating pods deleted with grace 0
  uint64_t status_writes = 0;  // successful pod status patches
  uint64_t errors = 0;         // failed requests (each made again later)
  std::string last_error;
  size_t pods = 0;             // pods the node holds now
};

class KubeNode {
 public:
  static absl::StatusOr<std::unique_ptr<KubeNode>> Start(kube::Credentials credentials,
                                                         NodeTopology topology,
                                                         config::KubeletConfig config,
                                                         KubeNodeOptions options);
  ~KubeNode();  // Stop()
  KubeNode(const KubeNode&) = delete;
  KubeNode& operator=(const KubeNode&) = delete;

  // True once the informer delivered its first list (restored pods were reconciled with it).
  bool WaitForSync(std::chrono::milliseconds timeout);
  // Stops watching, the heartbeat and the publisher; the Node and its pods stay as they are
  // (as when a kubelet exits). Idempotent.
  void Stop();

  KubeNodeStats Stats() const;
  std::vector<PodAllocation> Pods() const;  // admitted pods, in admission order

  class Impl;

 private:
  explicit KubeNode(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace podtopo::kubenode

#endif  // PODTOPO_KUBENODE_KUBE_NODE_H_
