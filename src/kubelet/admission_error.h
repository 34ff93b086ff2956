// Admission errors that carry the kubelet's rejection reason (cm/admission/errors.go).
//
// The kubelet's resource managers return Go errors; those with a Type() method (for example
// SMTAlignmentError, TopologyAffinityError, EmptyPodSharedPoolError) reject the pod with
// Reason = Type() and Message = Error(). Any other error becomes UnexpectedAdmissionError with
// the message "Allocate failed due to <err>, which is unexpected".
//
// podtopo carries the reason as a payload on absl::Status:
//   absl::Status s = TypedAdmissionError("SMTAlignmentError", "SMT Alignment Error: ...");
//   AdmitResult r = GetPodAdmitResult(s);   // {false, "SMTAlignmentError", "SMT Alignment ..."}
//   GetPodAdmitResult(absl::InternalError("boom")).message
//       // "Allocate failed due to boom, which is unexpected"
#ifndef PODTOPO_KUBELET_ADMISSION_ERROR_H_
#define PODTOPO_KUBELET_ADMISSION_ERROR_H_

#include <string>

#include "absl/status/status.h"

namespace podtopo {

inline constexpr char kReasonTopologyAffinity[] = "TopologyAffinityError";
inline constexpr char kReasonSmtAlignment[] = "SMTAlignmentError";
inline constexpr char kReasonEmptyPodSharedPool[] = "EmptyPodSharedPoolError";
inline constexpr char kReasonUnexpectedAdmission[] = "UnexpectedAdmissionError";
// podtopo's word, not the kubelet's: the kubelet version predicted never answers this
// admission (k/k #140730), so the pod has no reason and stays Pending, and the kubelet's pod
// admission is stuck for every pod after it.
inline constexpr char kReasonKubeletHang[] = "KubeletHang";

// TypedAdmissionError(kReasonKubeletHang, "the kubelet hangs in admission: <what>").
absl::Status KubeletHangError(const std::string& what);

// A failed-precondition Status whose payload names the kubelet's rejection reason.
absl::Status TypedAdmissionError(const std::string& reason, const std::string& message);

// The reason carried by `status`, or "" when it has none (or is OK).
std::string AdmissionReasonOf(const absl::Status& status);

struct AdmitResult {
  bool admit = true;
  std::string reason;
  std::string message;
};

// admission.GetPodAdmitResult: OK -> admit; typed -> {false, reason, message};
// anything else -> {false, "UnexpectedAdmissionError", "Allocate failed due to <msg>, which
// is unexpected"}.
AdmitResult GetPodAdmitResult(const absl::Status& status);

}  // namespace podtopo

#endif  // PODTOPO_KUBELET_ADMISSION_ERROR_H_
