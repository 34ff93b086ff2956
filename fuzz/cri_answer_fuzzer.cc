// CRI answers as `podtopo serve --cri` reads them (cri/answers.h): byte 0 picks which pods are
// wanted, then ListPodSandbox's answer and ListContainers' answer, each behind a varint length,
// then a ContainerStatus answer (the rest), all protobuf encodings as a runtime (containerd, or
// a broken one) could send them. Checked: every sandbox with an id is kept or removed, exactly
// once; a kept sandbox is READY, of a wanted pod, the newest of its pod (an id listed twice
// counts as its first entry); nothing kept is removed; the newest container of each name
// belongs to its sandbox and no container of that name there is newer; the reported cpuset is
// canonical when it parses, the runtime's text otherwise.
#include <map>
#include <set>
#include <string>

#include "cpuset/cpuset.h"
#include "cri/answers.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"

namespace podtopo::fuzz {
namespace {

namespace criv1 = ::runtime::v1;

constexpr char kUid[] = "io.kubernetes.pod.uid";
constexpr char kName[] = "io.kubernetes.container.name";

// The next part of the input: a varint length, then that many bytes (clamped to what is left).
std::string_view NextPart(std::string_view& in) {
  uint64_t n = 0;
  for (int shift = 0; !in.empty() && shift < 64; shift += 7) {
    uint8_t b = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    n |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) break;
  }
  std::string_view part = in.substr(0, std::min<uint64_t>(n, in.size()));
  in.remove_prefix(part.size());
  return part;
}

void CheckSandboxes(const criv1::ListPodSandboxResponse& r, uint8_t salt) {
  auto wanted = [salt](const std::string& uid) {
    return (static_cast<uint8_t>(uid[0]) + salt) % 3 != 0;
  };
  cri::SandboxChoice c = cri::ChooseSandboxes(r, kUid, wanted);
  std::set<std::string> listed, decided;
  for (const auto& sb : r.items()) {
    if (!sb.id().empty()) listed.insert(sb.id());
  }
  for (const auto& [uid, sb] : c.kept) {
    FUZZ_CHECK(decided.insert(sb->id()).second, fmt::format("sandbox {} kept twice", sb->id()));
    FUZZ_CHECK(sb->state() == criv1::SANDBOX_READY,
               fmt::format("sandbox {} kept but not READY", sb->id()));
    auto l = sb->labels().find(kUid);
    FUZZ_CHECK(l != sb->labels().end() && l->second == uid && wanted(uid),
               fmt::format("sandbox {} kept for pod {} it is not of, or not wanted", sb->id(),
                           uid));
  }
  for (const auto& [uid, id] : c.removed) {
    FUZZ_CHECK(decided.insert(id).second,
               fmt::format("sandbox {} removed twice, or kept and removed", id));
  }
  FUZZ_CHECK(listed == decided, fmt::format("{} sandboxes listed, {} decided", listed.size(),
                                            decided.size()));
  // The kept one is the newest ready sandbox of its pod. An id listed twice counts once, as
  // its first entry (answers.h): a later entry with that id is the same sandbox, not a rival.
  std::set<std::string> first;
  for (const auto& sb : r.items()) {
    if (sb.id().empty() || !first.insert(sb.id()).second) continue;
    auto l = sb.labels().find(kUid);
    if (l == sb.labels().end() || sb.state() != criv1::SANDBOX_READY) continue;
    auto k = c.kept.find(l->second);
    if (k == c.kept.end()) continue;
    FUZZ_CHECK(sb.created_at() <= k->second->created_at(),
               fmt::format("pod {}: sandbox {} is newer than the kept {}", l->second, sb.id(),
                           k->second->id()));
  }
}

void CheckContainers(const criv1::ListContainersResponse& r, const std::string& sandbox) {
  auto newest = cri::NewestContainers(r, sandbox, kName);
  for (const auto& [name, c] : newest) {
    auto l = c->labels().find(kName);
    FUZZ_CHECK(c->pod_sandbox_id() == sandbox && !c->id().empty() &&
                   l != c->labels().end() && l->second == name,
               fmt::format("container {} is not {}'s {}", c->id(), sandbox, name));
  }
  for (const auto& c : r.containers()) {
    auto l = c.labels().find(kName);
    if (c.pod_sandbox_id() != sandbox || c.id().empty() || l == c.labels().end()) continue;
    auto n = newest.find(l->second);
    FUZZ_CHECK(n != newest.end(), fmt::format("container name {} of {} lost", l->second,
                                              sandbox));
    FUZZ_CHECK(c.created_at() <= n->second->created_at(),
               fmt::format("{}: container {} is newer than the chosen {}", l->second, c.id(),
                           n->second->id()));
  }
}

void CheckCpuset(const criv1::ContainerStatusResponse& r) {
  std::string got = cri::ReportedCpuset(r);
  if (!r.status().has_resources() || !r.status().resources().has_linux()) {
    FUZZ_CHECK(got.empty(), "a cpuset reported without resources: " + got);
    return;
  }
  const std::string& text = r.status().resources().linux().cpuset_cpus();
  absl::StatusOr<CpuSet> parsed = CpuSet::Parse(text);
  if (!parsed.ok()) {
    FUZZ_CHECK(got == text, fmt::format("unparsable cpuset {:?} reported as {:?}", text, got));
    return;
  }
  absl::StatusOr<CpuSet> again = CpuSet::Parse(got);
  FUZZ_CHECK(again.ok() && *again == *parsed && again->String() == got,
             fmt::format("cpuset {:?} reported as {:?}, not canonical", text, got));
}

}  // namespace
}  // namespace podtopo::fuzz

PODTOPO_FUZZ_TARGET(cri_answer) {
  if (size == 0) return 0;
  std::string_view in = AsText(data + 1, size - 1);
  criv1::ListPodSandboxResponse sandboxes;
  criv1::ListContainersResponse containers;
  criv1::ContainerStatusResponse status;
  std::string_view s = NextPart(in);
  std::string_view c = NextPart(in);
  if (sandboxes.ParseFromArray(s.data(), static_cast<int>(s.size()))) {
    CheckSandboxes(sandboxes, data[0]);
  }
  if (containers.ParseFromArray(c.data(), static_cast<int>(c.size()))) {
    std::set<std::string> ids;
    for (const auto& sb : sandboxes.items()) ids.insert(sb.id());
    for (const auto& ct : containers.containers()) ids.insert(ct.pod_sandbox_id());
    int n = 0;
    for (const std::string& id : ids) {
      if (++n > 16) break;
      CheckContainers(containers, id);
    }
  }
  if (status.ParseFromArray(in.data(), static_cast<int>(in.size()))) CheckCpuset(status);
  return 0;
}
