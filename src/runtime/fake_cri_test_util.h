// FakeCri: an in-memory CRI RuntimeService + ImageService on a unix socket, for unit tests of
// CriRuntime without containerd. It behaves like containerd + runc where CriRuntime looks:
// labels and filters, container states (a container whose command is ["true"] exits with 0 at
// once, ["false"] with 1; others run), and the cgroup v1 cpuset.cpus file of every started
// container under a fake cgroup mount (written on start and on UpdateContainerResources).
#ifndef PODTOPO_RUNTIME_FAKE_CRI_TEST_UTIL_H_
#define PODTOPO_RUNTIME_FAKE_CRI_TEST_UTIL_H_

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "cri/runtime/v1/api.grpc.pb.h"
#include "fmt/format.h"

namespace podtopo::runtime::testing {

namespace v1 = ::runtime::v1;

class FakeCri final : public v1::RuntimeService::Service, public v1::ImageService::Service {
 public:
  FakeCri(std::string socket, std::string cgroup_mount)
      : socket_(std::move(socket)), mount_(std::move(cgroup_mount)) {}
  ~FakeCri() override { Stop(); }

  void Serve() {
    grpc::ServerBuilder b;
    b.AddListeningPort("unix://" + socket_, grpc::InsecureServerCredentials());
    b.RegisterService(static_cast<v1::RuntimeService::Service*>(this));
    b.RegisterService(static_cast<v1::ImageService::Service*>(this));
    server_ = b.BuildAndStart();
  }
  void Stop() {
    if (server_) {
      server_->Shutdown(std::chrono::system_clock::now());
      server_.reset();
    }
  }

  std::set<std::string> images = {"busybox"};
  int updates = 0;
  int sandboxes_created = 0;
  // Sandboxes whose removal fails as containerd's does when a task was left running in them
  // (containerd#11037: a StartContainer cancelled half-way).
  std::set<std::string> unremovable;
  // Sandbox names (NAME_NAMESPACE_UID_ATTEMPT) containerd holds for a RunPodSandbox whose
  // caller went away, with no sandbox listed.
  std::set<std::string> reserved_names;

  std::mutex mu;
  std::map<std::string, v1::PodSandbox> sandboxes;
  struct C {
    v1::Container c;
    std::string parent;
    std::string cpus;
    int exit_code = 0;
  };
  std::map<std::string, C> containers;

  std::string CpusetPath(const C& c) const {
    return fmt::format("{}/cpuset{}/{}/cpuset.cpus", mount_, c.parent, c.c.id());
  }
  // The container named `name` in the pod with `uid` ("" if none).
  std::string Find(const std::string& uid, const std::string& name) {
    std::lock_guard<std::mutex> l(mu);
    for (auto& [id, c] : containers) {
      if (c.c.labels().at("io.kubernetes.pod.uid") == uid &&
          c.c.labels().at("io.kubernetes.container.name") == name) {
        return id;
      }
    }
    return "";
  }

  grpc::Status Version(grpc::ServerContext*, const v1::VersionRequest*,
                       v1::VersionResponse* r) override {
    r->set_runtime_name("fake");
    r->set_runtime_api_version("v1");
    return grpc::Status::OK;
  }
  grpc::Status ImageStatus(grpc::ServerContext*, const v1::ImageStatusRequest* q,
                           v1::ImageStatusResponse* r) override {
    if (images.count(q->image().image())) r->mutable_image()->set_id("sha256:" + q->image().image());
    return grpc::Status::OK;
  }
  grpc::Status RunPodSandbox(grpc::ServerContext*, const v1::RunPodSandboxRequest* q,
                             v1::RunPodSandboxResponse* r) override {
    std::lock_guard<std::mutex> l(mu);
    // containerd reserves NAME_NAMESPACE_UID_ATTEMPT for as long as the sandbox exists.
    const v1::PodSandboxMetadata& m = q->config().metadata();
    if (std::string name = fmt::format("{}_{}_{}_{}", m.name(), m.namespace_(), m.uid(), m.attempt());
        reserved_names.count(name)) {
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          fmt::format("failed to reserve sandbox name \"{}\": name \"{}\" is "
                                      "reserved for \"abandoned\"", name, name));
    }
    for (const auto& [other, sb] : sandboxes) {
      const v1::PodSandboxMetadata& o = sb.metadata();
      if (o.name() == m.name() && o.namespace_() == m.namespace_() && o.uid() == m.uid() &&
          o.attempt() == m.attempt()) {
        return grpc::Status(grpc::StatusCode::UNKNOWN,
                            fmt::format("failed to reserve sandbox name \"{}_{}_{}_{}\": name is "
                                        "reserved for \"{}\"",
                                        m.name(), m.namespace_(), m.uid(), m.attempt(), other));
      }
    }
    std::string id = fmt::format("sb{}", ++next_);
    v1::PodSandbox& s = sandboxes[id];
    s.set_id(id);
    *s.mutable_metadata() = q->config().metadata();
    *s.mutable_labels() = q->config().labels();
    s.set_state(v1::SANDBOX_READY);
    s.set_created_at(next_);
    parents_[id] = q->config().linux().cgroup_parent();
    ++sandboxes_created;
    r->set_pod_sandbox_id(id);
    return grpc::Status::OK;
  }
  grpc::Status StopPodSandbox(grpc::ServerContext*, const v1::StopPodSandboxRequest* q,
                              v1::StopPodSandboxResponse*) override {
    std::lock_guard<std::mutex> l(mu);
    if (auto it = sandboxes.find(q->pod_sandbox_id()); it != sandboxes.end()) {
      it->second.set_state(v1::SANDBOX_NOTREADY);
    }
    for (auto& [id, c] : containers) {
      if (c.c.pod_sandbox_id() == q->pod_sandbox_id()) c.c.set_state(v1::CONTAINER_EXITED);
    }
    return grpc::Status::OK;
  }
  grpc::Status RemovePodSandbox(grpc::ServerContext*, const v1::RemovePodSandboxRequest* q,
                                v1::RemovePodSandboxResponse*) override {
    std::lock_guard<std::mutex> l(mu);
    if (unremovable.count(q->pod_sandbox_id())) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                          "failed to delete containers in sandbox: cannot delete running task");
    }
    sandboxes.erase(q->pod_sandbox_id());
    for (auto it = containers.begin(); it != containers.end();) {
      if (it->second.c.pod_sandbox_id() == q->pod_sandbox_id()) {
        std::filesystem::remove_all(std::filesystem::path(CpusetPath(it->second)).parent_path());
        it = containers.erase(it);
      } else {
        ++it;
      }
    }
    return grpc::Status::OK;
  }
  static bool Match(const google::protobuf::Map<std::string, std::string>& labels,
                    const google::protobuf::Map<std::string, std::string>& selector) {
    for (const auto& [k, v] : selector) {
      auto it = labels.find(k);
      if (it == labels.end() || it->second != v) return false;
    }
    return true;
  }
  grpc::Status ListPodSandbox(grpc::ServerContext*, const v1::ListPodSandboxRequest* q,
                              v1::ListPodSandboxResponse* r) override {
    std::lock_guard<std::mutex> l(mu);
    for (const auto& [id, s] : sandboxes) {
      if (Match(s.labels(), q->filter().label_selector())) *r->add_items() = s;
    }
    return grpc::Status::OK;
  }
  grpc::Status CreateContainer(grpc::ServerContext*, const v1::CreateContainerRequest* q,
                               v1::CreateContainerResponse* r) override {
    std::lock_guard<std::mutex> l(mu);
    if (!sandboxes.count(q->pod_sandbox_id())) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "no sandbox");
    }
    // containerd reserves NAME_POD_NAMESPACE_UID_ATTEMPT, across the pod's sandboxes.
    const std::string& uid = q->config().labels().at("io.kubernetes.pod.uid");
    for (const auto& [other, oc] : containers) {
      if (oc.c.labels().at("io.kubernetes.pod.uid") == uid &&
          oc.c.metadata().name() == q->config().metadata().name() &&
          oc.c.metadata().attempt() == q->config().metadata().attempt()) {
        return grpc::Status(grpc::StatusCode::UNKNOWN,
                            fmt::format("failed to reserve container name \"{}_{}_{}\": name is "
                                        "reserved for \"{}\"",
                                        q->config().metadata().name(), uid,
                                        q->config().metadata().attempt(), other));
      }
    }
    std::string id = fmt::format("c{}", ++next_);
    C& c = containers[id];
    c.c.set_id(id);
    c.c.set_pod_sandbox_id(q->pod_sandbox_id());
    *c.c.mutable_metadata() = q->config().metadata();
    *c.c.mutable_labels() = q->config().labels();
    c.c.set_state(v1::CONTAINER_CREATED);
    c.c.set_created_at(next_);
    c.parent = parents_[q->pod_sandbox_id()];
    c.cpus = q->config().linux().resources().cpuset_cpus();
    const auto& cmd = q->config().command();
    if (cmd.size() == 1 && cmd[0] == "true") c.exit_code = 0;
    else if (cmd.size() == 1 && cmd[0] == "false") c.exit_code = 1;
    else c.exit_code = -1;  // runs
    r->set_container_id(id);
    return grpc::Status::OK;
  }
  grpc::Status StartContainer(grpc::ServerContext*, const v1::StartContainerRequest* q,
                              v1::StartContainerResponse*) override {
    std::lock_guard<std::mutex> l(mu);
    auto it = containers.find(q->container_id());
    if (it == containers.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no container");
    C& c = it->second;
    if (c.exit_code >= 0) {
      c.c.set_state(v1::CONTAINER_EXITED);
    } else {
      c.c.set_state(v1::CONTAINER_RUNNING);
      std::filesystem::create_directories(std::filesystem::path(CpusetPath(c)).parent_path());
      std::ofstream(CpusetPath(c)) << c.cpus << "\n";
    }
    return grpc::Status::OK;
  }
  grpc::Status StopContainer(grpc::ServerContext*, const v1::StopContainerRequest* q,
                             v1::StopContainerResponse*) override {
    std::lock_guard<std::mutex> l(mu);
    if (auto it = containers.find(q->container_id()); it != containers.end()) {
      it->second.c.set_state(v1::CONTAINER_EXITED);
    }
    return grpc::Status::OK;
  }
  grpc::Status RemoveContainer(grpc::ServerContext*, const v1::RemoveContainerRequest* q,
                               v1::RemoveContainerResponse*) override {
    std::lock_guard<std::mutex> l(mu);
    if (auto it = containers.find(q->container_id()); it != containers.end()) {
      std::filesystem::remove_all(std::filesystem::path(CpusetPath(it->second)).parent_path());
      containers.erase(it);
    }
    return grpc::Status::OK;
  }
  grpc::Status ListContainers(grpc::ServerContext*, const v1::ListContainersRequest* q,
                              v1::ListContainersResponse* r) override {
    std::lock_guard<std::mutex> l(mu);
    for (const auto& [id, c] : containers) {
      if (!q->filter().pod_sandbox_id().empty() &&
          c.c.pod_sandbox_id() != q->filter().pod_sandbox_id()) {
        continue;
      }
      if (Match(c.c.labels(), q->filter().label_selector())) *r->add_containers() = c.c;
    }
    return grpc::Status::OK;
  }
  grpc::Status ContainerStatus(grpc::ServerContext*, const v1::ContainerStatusRequest* q,
                               v1::ContainerStatusResponse* r) override {
    std::lock_guard<std::mutex> l(mu);
    auto it = containers.find(q->container_id());
    if (it == containers.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no container");
    auto* s = r->mutable_status();
    s->set_id(it->first);
    *s->mutable_metadata() = it->second.c.metadata();
    s->set_state(it->second.c.state());
    s->set_exit_code(it->second.exit_code < 0 ? 0 : it->second.exit_code);
    s->mutable_resources()->mutable_linux()->set_cpuset_cpus(it->second.cpus);
    return grpc::Status::OK;
  }
  grpc::Status UpdateContainerResources(grpc::ServerContext*,
                                        const v1::UpdateContainerResourcesRequest* q,
                                        v1::UpdateContainerResourcesResponse*) override {
    std::lock_guard<std::mutex> l(mu);
    auto it = containers.find(q->container_id());
    if (it == containers.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no container");
    ++updates;
    it->second.cpus = q->linux().cpuset_cpus();
    if (it->second.c.state() == v1::CONTAINER_RUNNING) {
      std::ofstream(CpusetPath(it->second)) << it->second.cpus << "\n";
    }
    return grpc::Status::OK;
  }

 private:
  std::string socket_, mount_;
  std::unique_ptr<grpc::Server> server_;
  std::map<std::string, std::string> parents_;
  int next_ = 0;
};

}  // namespace podtopo::runtime::testing

#endif  // PODTOPO_RUNTIME_FAKE_CRI_TEST_UTIL_H_
