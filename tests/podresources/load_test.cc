// podresources_load: load and robustness test of `podtopo serve`'s PodResources v1 server.
//
// Runs inside tests/podresources/with_serve.sh, which starts the server and sets
// PODRESOURCES_SOCKET, PODRESOURCES_PODS_DIR and PODRESOURCES_TMP.
//
//   podresources_load --mode unlimited [--clients 64] [--calls 2000]
//       (server with --rate-limit-qps 0) CLIENTS threads, each with its own connection, make
//       CALLS calls each, cycling List / Get / GetAllocatableResources, while a churn thread
//       adds and removes pod manifests in the pods directory. Every answer is checked: the
//       documentation's pod is always there with its 4-CPU bubble, no two pods of one List share
//       a CPU, the allocatable CPUs never change. Passes with zero errors; afterwards every churn
//       pod is removed and List must come back to the one pod.
//   podresources_load --mode limited [--clients 64] [--calls 40]
//       (server with the kubelet's limit, 100 qps burst 10) excess calls must fail with
//       RESOURCE_EXHAUSTED "rejected by rate limit" and nothing else; after a pause the server
//       answers again.
//   podresources_load --mode malformed
//       garbage bytes, an HTTP/2 frame of 16 MiB, a bad SETTINGS frame, garbage HPACK, half
//       prefaces, 200 connections dropped at once, an unparsable request message and requests of
//       5 and 64 MiB; after each, the server must still answer List correctly.
// Prints one summary line: wall time, calls/s and errors. Exit status 0 on success.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "podresources/v1/api.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) {
    std::fprintf(stderr, "podresources_load: %s is not set (run under with_serve.sh)\n", name);
    std::exit(2);
  }
  return v;
}

std::shared_ptr<grpc::Channel> NewChannel(const std::string& socket) {
  grpc::ChannelArguments args;
  // Every client its own connection (no subchannel sharing between channels).
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetMaxReceiveMessageSize(16 * 1024 * 1024);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel("unix://" + socket, grpc::InsecureChannelCredentials(), args);
}

void SetDeadline(grpc::ClientContext* ctx, int seconds = 60) {
  ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

class Errors {
 public:
  void Add(const std::string& what) {
    ++count_;
    std::lock_guard<std::mutex> lock(mu_);
    if (samples_.size() < 10) samples_.push_back(what);
  }
  long count() const { return count_; }
  void Print() const {
    for (const auto& s : samples_) std::fprintf(stderr, "  error: %s\n", s.c_str());
  }

 private:
  std::atomic<long> count_{0};
  std::mutex mu_;
  std::vector<std::string> samples_;
};

std::string StatusText(const grpc::Status& s) {
  return std::to_string(static_cast<int>(s.error_code())) + " " + s.error_message();
}

const v1::PodResources* FindMixed(const v1::ListPodResourcesResponse& r) {
  for (const auto& p : r.pod_resources()) {
    if (p.namespace_() == "default" && p.name() == "pod-scope-mixed") return &p;
  }
  return nullptr;
}

// Checks one List answer; returns "" or what is wrong.
std::string CheckList(const v1::ListPodResourcesResponse& r) {
  const v1::PodResources* mixed = FindMixed(r);
  if (mixed == nullptr) return "List lacks default/pod-scope-mixed";
  if (mixed->cpu_ids_size() != 4)
    return "pod-scope-mixed has " + std::to_string(mixed->cpu_ids_size()) + " pod CPUs";
  std::set<int64_t> seen;
  for (const auto& p : r.pod_resources()) {
    std::set<int64_t> cpus(p.cpu_ids().begin(), p.cpu_ids().end());
    for (const auto& c : p.containers()) cpus.insert(c.cpu_ids().begin(), c.cpu_ids().end());
    for (int64_t id : cpus) {
      if (!seen.insert(id).second) return "CPU " + std::to_string(id) + " is reported by two pods";
    }
  }
  return "";
}

// Waits until List answers with the documentation's pod (the server admits it at start).
bool WaitReady(v1::PodResourcesLister::Stub& stub, int seconds) {
  auto until = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < until) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx, 5);
    v1::ListPodResourcesResponse r;
    if (stub.List(&ctx, {}, &r).ok() && FindMixed(r) != nullptr) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string ChurnPod(int i) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: churn-" + std::to_string(i) +
         "\n  namespace: load\nspec:\n  containers:\n  - name: c\n    image: pause\n"
         "    resources:\n      requests: {cpu: \"1\", memory: 64Mi}\n"
         "      limits: {cpu: \"1\", memory: 64Mi}\n";
}

// Adds and removes pod manifests (written outside the directory, then renamed in) until stop.
void Churn(const std::string& pods_dir, const std::string& tmp, std::atomic<bool>& stop,
           std::atomic<long>& events) {
  const int kSlots = 8;
  int i = 0;
  while (!stop) {
    int slot = i % kSlots;
    std::string name = pods_dir + "/churn-" + std::to_string(slot) + ".yaml";
    if (std::filesystem::exists(name)) {
      std::filesystem::remove(name);
    } else {
      std::string staged = tmp + "/churn.staged";
      std::ofstream(staged) << ChurnPod(slot);
      std::filesystem::rename(staged, name);
    }
    ++events;
    ++i;
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
}

int Unlimited(const std::string& socket, int clients, long calls) {
  const std::string pods_dir = Env("PODRESOURCES_PODS_DIR");
  const std::string tmp = Env("PODRESOURCES_TMP");
  auto probe_channel = NewChannel(socket);
  auto probe = v1::PodResourcesLister::NewStub(probe_channel);
  if (!WaitReady(*probe, 30)) {
    std::fprintf(stderr, "podresources_load: server never listed pod-scope-mixed\n");
    return 1;
  }
  size_t allocatable_cpus = 0;
  {
    grpc::ClientContext ctx;
    SetDeadline(&ctx);
    v1::AllocatableResourcesResponse r;
    grpc::Status s = probe->GetAllocatableResources(&ctx, {}, &r);
    if (!s.ok()) {
      std::fprintf(stderr, "GetAllocatableResources: %s\n", StatusText(s).c_str());
      return 1;
    }
    allocatable_cpus = r.cpu_ids_size();
  }

  Errors errors;
  std::atomic<bool> stop{false};
  std::atomic<long> churn_events{0};
  std::atomic<long> done{0};
  std::atomic<long> max_pods{0};
  std::thread churn(Churn, pods_dir, tmp, std::ref(stop), std::ref(churn_events));
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&, t] {
      auto channel = NewChannel(socket);
      auto stub = v1::PodResourcesLister::NewStub(channel);
      for (long i = 0; i < calls; ++i) {
        grpc::ClientContext ctx;
        SetDeadline(&ctx);
        switch ((i + t) % 3) {
          case 0: {
            v1::ListPodResourcesResponse r;
            grpc::Status s = stub->List(&ctx, {}, &r);
            if (!s.ok()) {
              errors.Add("List: " + StatusText(s));
            } else if (std::string e = CheckList(r); !e.empty()) {
              errors.Add(e);
            } else {
              long n = r.pod_resources_size();
              long m = max_pods.load();
              while (n > m && !max_pods.compare_exchange_weak(m, n)) {
              }
            }
            break;
          }
          case 1: {
            v1::GetPodResourcesRequest req;
            req.set_pod_namespace("default");
            req.set_pod_name("pod-scope-mixed");
            v1::GetPodResourcesResponse r;
            grpc::Status s = stub->Get(&ctx, req, &r);
            if (!s.ok()) {
              errors.Add("Get: " + StatusText(s));
            } else if (r.pod_resources().cpu_ids_size() != 4) {
              errors.Add("Get: pod-scope-mixed without its 4 pod CPUs");
            }
            break;
          }
          default: {
            v1::AllocatableResourcesResponse r;
            grpc::Status s = stub->GetAllocatableResources(&ctx, {}, &r);
            if (!s.ok()) {
              errors.Add("GetAllocatableResources: " + StatusText(s));
            } else if (static_cast<size_t>(r.cpu_ids_size()) != allocatable_cpus) {
              errors.Add("GetAllocatableResources: the allocatable CPUs changed");
            }
          }
        }
        ++done;
      }
    });
  }
  for (auto& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  stop = true;
  churn.join();

  // Release every churn pod; List must come back to the documentation's pod alone.
  for (int slot = 0; slot < 8; ++slot) {
    std::filesystem::remove(pods_dir + "/churn-" + std::to_string(slot) + ".yaml");
  }
  bool settled = false;
  auto until = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < until && !settled) {
    grpc::ClientContext ctx;
    SetDeadline(&ctx, 5);
    v1::ListPodResourcesResponse r;
    settled = probe->List(&ctx, {}, &r).ok() && r.pod_resources_size() == 1 && FindMixed(r);
    if (!settled) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!settled)
    errors.Add("after the churn stopped, List did not come back to pod-scope-mixed alone");

  std::printf(
      "podresources_load unlimited: %d clients x %ld calls = %ld calls in %.2f s (%.0f calls/s), "
      "%ld pod add/remove events (up to %ld pods listed), %ld errors\n",
      clients, calls, done.load(), seconds, done.load() / seconds, churn_events.load(),
      max_pods.load(), errors.count());
  errors.Print();
  if (churn_events.load() < 2) {
    std::fprintf(stderr, "podresources_load: the churn thread did not run\n");
    return 1;
  }
  return errors.count() == 0 ? 0 : 1;
}

int Limited(const std::string& socket, int clients, long calls) {
  auto probe = v1::PodResourcesLister::NewStub(NewChannel(socket));
  // Readiness probes themselves may be rate limited: WaitReady retries.
  if (!WaitReady(*probe, 30)) {
    std::fprintf(stderr, "podresources_load: server never listed pod-scope-mixed\n");
    return 1;
  }
  std::atomic<long> ok{0}, exhausted{0};
  Errors errors;
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < clients; ++t) {
    threads.emplace_back([&] {
      auto stub = v1::PodResourcesLister::NewStub(NewChannel(socket));
      for (long i = 0; i < calls; ++i) {
        grpc::ClientContext ctx;
        SetDeadline(&ctx);
        v1::ListPodResourcesResponse r;
        grpc::Status s = stub->List(&ctx, {}, &r);
        if (s.ok()) {
          ++ok;
        } else if (s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          ++exhausted;
          if (s.error_message() != "rejected by rate limit") {
            errors.Add("RESOURCE_EXHAUSTED with message \"" + s.error_message() + "\"");
          }
        } else {
          errors.Add("List: " + StatusText(s));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // The bucket refills: the server serves again.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  v1::ListPodResourcesResponse r;
  grpc::Status after = probe->List(&ctx, {}, &r);
  std::printf(
      "podresources_load limited: %ld calls in %.2f s: %ld served, %ld RESOURCE_EXHAUSTED, "
      "%ld other errors; after a pause: %s\n",
      ok.load() + exhausted.load() + errors.count(), seconds, ok.load(), exhausted.load(),
      errors.count(), after.ok() ? "served" : StatusText(after).c_str());
  errors.Print();
  bool pass = errors.count() == 0 && exhausted > 0 && ok > 0 && after.ok() && FindMixed(r);
  if (exhausted == 0) std::fprintf(stderr, "  no call was rejected by the rate limit\n");
  return pass ? 0 : 1;
}

// --- malformed input ----------------------------------------------------------------------

int RawConnect(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  return fd;
}

// Sends bytes, then reads whatever the server answers until it closes or 2 s pass.
void SendRaw(const std::string& path, const std::string& bytes) {
  int fd = RawConnect(path);
  if (fd < 0) return;
  ssize_t ignored = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  (void)ignored;
  char buf[4096];
  while (recv(fd, buf, sizeof(buf), 0) > 0) {
  }
  close(fd);
}

const std::string kPreface("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);

std::string Frame(uint32_t length, uint8_t type, uint8_t flags, uint32_t stream,
                  const std::string& payload) {
  std::string f;
  f.push_back(static_cast<char>((length >> 16) & 0xff));
  f.push_back(static_cast<char>((length >> 8) & 0xff));
  f.push_back(static_cast<char>(length & 0xff));
  f.push_back(static_cast<char>(type));
  f.push_back(static_cast<char>(flags));
  f.push_back(static_cast<char>((stream >> 24) & 0x7f));
  f.push_back(static_cast<char>((stream >> 16) & 0xff));
  f.push_back(static_cast<char>((stream >> 8) & 0xff));
  f.push_back(static_cast<char>(stream & 0xff));
  return f + payload;
}

// A generic call of /v1.PodResourcesLister/List with arbitrary request bytes.
grpc::Status RawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& payload) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  SetDeadline(&ctx, 30);
  grpc::Slice slice(payload);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/v1.PodResourcesLister/List", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(s); });
  return done.get_future().get();
}

int Malformed(const std::string& socket) {
  auto channel = NewChannel(socket);
  auto stub = v1::PodResourcesLister::NewStub(channel);
  if (!WaitReady(*stub, 30)) {
    std::fprintf(stderr, "podresources_load: server never listed pod-scope-mixed\n");
    return 1;
  }
  Errors errors;
  auto still_serving = [&](const std::string& after) {
    // A fresh connection each time: the server, not just one connection, must be alive.
    auto fresh = v1::PodResourcesLister::NewStub(NewChannel(socket));
    grpc::ClientContext ctx;
    SetDeadline(&ctx, 10);
    v1::ListPodResourcesResponse r;
    grpc::Status s = fresh->List(&ctx, {}, &r);
    if (!s.ok()) {
      errors.Add("after " + after + ": List " + StatusText(s));
    } else if (std::string e = CheckList(r); !e.empty()) {
      errors.Add("after " + after + ": " + e);
    } else {
      std::printf("  %s: server still serving\n", after.c_str());
    }
  };
  std::string garbage(4096, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919) & 0xff);
  SendRaw(socket, garbage);
  still_serving("4 KiB of garbage instead of the HTTP/2 preface");
  SendRaw(socket,
          kPreface + Frame(0, 4, 0, 0, "") + Frame(0xffffff, 0, 0, 1, std::string(65536, 'x')));
  still_serving("an HTTP/2 DATA frame announcing 16 MiB");
  SendRaw(socket, kPreface + Frame(7, 4, 0, 0, std::string(7, '\1')));
  still_serving("a SETTINGS frame of 7 bytes");
  SendRaw(socket, kPreface + Frame(0, 4, 0, 0, "") + Frame(64, 1, 0x5, 1, std::string(64, '\xff')));
  still_serving("a HEADERS frame of garbage HPACK");
  SendRaw(socket, kPreface + Frame(0, 4, 0, 0, "") +
                      Frame(16384, 1, 0x0, 1, std::string(16384, '\x40')) +
                      std::string(1 << 20, '\0'));
  still_serving("a HEADERS frame without END_HEADERS and 1 MiB of zeros");
  SendRaw(socket, kPreface.substr(0, 10));
  {
    std::vector<int> fds;
    for (int i = 0; i < 200; ++i) {
      int fd = RawConnect(socket);
      if (fd >= 0) {
        ssize_t ignored = send(fd, kPreface.data(), i % 24, MSG_NOSIGNAL);
        (void)ignored;
        fds.push_back(fd);
      }
    }
    for (int fd : fds) close(fd);
  }
  still_serving("half prefaces and 200 connections dropped at once");
  grpc::Status s = RawCall(channel, std::string("\xff\xff\xff\xff\xff", 5));
  if (s.ok()) errors.Add("an unparsable List request was answered OK");
  std::printf("  unparsable request message: %s\n", StatusText(s).c_str());
  still_serving("an unparsable request message");
  for (size_t mib : {5, 64}) {
    // Field 1000 (unknown to ListPodResourcesRequest), length-delimited, MiB of bytes.
    std::string payload("\xc2\x3e", 2);
    size_t n = mib << 20;
    for (size_t v = n;; v >>= 7) {
      if (v < 0x80) {
        payload.push_back(static_cast<char>(v));
        break;
      }
      payload.push_back(static_cast<char>((v & 0x7f) | 0x80));
    }
    payload += std::string(n, 'x');
    s = RawCall(channel, payload);
    std::printf("  %zu MiB request: %s\n", mib, StatusText(s).c_str());
    if (s.ok() && mib == 64) errors.Add("a 64 MiB request was accepted");
    still_serving(std::to_string(mib) + " MiB request");
  }
  std::printf("podresources_load malformed: %ld errors\n", errors.count());
  errors.Print();
  return errors.count() == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = "unlimited";
  int clients = 64;
  long calls = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "podresources_load: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--mode") {
      mode = next();
    } else if (a == "--clients") {
      clients = std::atoi(next().c_str());
    } else if (a == "--calls") {
      calls = std::atol(next().c_str());
    } else {
      std::fprintf(stderr,
                   "usage: podresources_load --mode unlimited|limited|malformed [--clients N] "
                   "[--calls N]\n");
      return 2;
    }
  }
  if (clients < 1 || calls == 0 || calls < -1) {
    std::fprintf(stderr, "podresources_load: --clients and --calls must be positive\n");
    return 2;
  }
  const std::string socket = Env("PODRESOURCES_SOCKET");
  if (mode == "unlimited") return Unlimited(socket, clients, calls < 0 ? 2000 : calls);
  if (mode == "limited") return Limited(socket, clients, calls < 0 ? 40 : calls);
  if (mode == "malformed") return Malformed(socket);
  std::fprintf(stderr, "podresources_load: unknown --mode %s\n", mode.c_str());
  return 2;
}
