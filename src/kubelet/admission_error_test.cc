#include "kubelet/admission_error.h"

#include "gtest/gtest.h"

namespace podtopo {
namespace {

TEST(AdmissionErrorTest, TypedErrorKeepsReasonAndMessage) {
  AdmitResult r = GetPodAdmitResult(TypedAdmissionError(kReasonSmtAlignment, "SMT Alignment Error"));
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "SMTAlignmentError");
  EXPECT_EQ(r.message, "SMT Alignment Error");
}

TEST(AdmissionErrorTest, UntypedErrorIsUnexpected) {
  AdmitResult r = GetPodAdmitResult(absl::InternalError("not enough cpus"));
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "UnexpectedAdmissionError");
  EXPECT_EQ(r.message, "Allocate failed due to not enough cpus, which is unexpected");
}

TEST(AdmissionErrorTest, OkAdmits) {
  AdmitResult r = GetPodAdmitResult(absl::OkStatus());
  EXPECT_TRUE(r.admit);
  EXPECT_EQ(AdmissionReasonOf(absl::OkStatus()), "");
}

}  // namespace
}  // namespace podtopo
