#include "kubelet/admission_error.h"

#include "absl/strings/cord.h"

namespace podtopo {
namespace {
constexpr char kReasonPayload[] = "type.podtopo.dev/admission-reason";
}  // namespace

absl::Status TypedAdmissionError(const std::string& reason, const std::string& message) {
  absl::Status s = absl::FailedPreconditionError(message);
  s.SetPayload(kReasonPayload, absl::Cord(reason));
  return s;
}

absl::Status KubeletHangError(const std::string& what) {
  return TypedAdmissionError(kReasonKubeletHang, "the kubelet hangs in admission: " + what);
}

std::string AdmissionReasonOf(const absl::Status& status) {
  if (status.ok()) return "";
  auto payload = status.GetPayload(kReasonPayload);
  return payload.has_value() ? std::string(*payload) : std::string();
}

AdmitResult GetPodAdmitResult(const absl::Status& status) {
  if (status.ok()) return {};
  std::string reason = AdmissionReasonOf(status);
  if (!reason.empty()) return {false, reason, std::string(status.message())};
  return {false, kReasonUnexpectedAdmission,
          "Allocate failed due to " + std::string(status.message()) + ", which is unexpected"};
}

}  // namespace podtopo
