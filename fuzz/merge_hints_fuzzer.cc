// merge-hints JSON (`podtopo debug merge-hints`): a document either parses or fails naming the
// JSON path; a request that merges gives what the kubelet's exhaustive walk over every hint
// permutation gives (internal::MergeExhaustive, the reference kept for tests) when the product
// is small enough to walk; and the output JSON is the MergeHintsJson text.
#include <string>

#include "fmt/format.h"
#include "fuzz/fuzz_target.h"
#include "topologymanager/merge_json.h"
#include "topologymanager/numa_info.h"
#include "topologymanager/policy.h"
#include "topologymanager/policy_internal.h"
#include "topologymanager/policy_options.h"

PODTOPO_FUZZ_TARGET(merge_hints) {
  using namespace podtopo::topologymanager;
  const std::string text(AsText(data, size));
  absl::StatusOr<MergeRequest> request = ParseMergeRequest(text);
  if (!request.ok()) {
    FUZZ_CHECK(!request.status().message().empty(), "an error without a message");
    return 0;
  }
  absl::StatusOr<MergeResult> fast = RunMergeRequest(*request);
  absl::StatusOr<std::string> json = MergeHintsJson(text);
  FUZZ_CHECK(fast.ok() == json.ok(), "RunMergeRequest and MergeHintsJson disagree on success");
  if (!fast.ok()) return 0;
  FUZZ_CHECK(MergeResultToJson(*fast).dump() == *json, "MergeHintsJson is not the merged result");
  const std::string& policy = *request->policy;
  if (policy == kPolicyNone) return 0;
  // The exhaustive walk visits the product of the hint lists' sizes.
  double product = 1;
  for (const auto& lists : internal::FilterProvidersHints(request->providers)) {
    product *= static_cast<double>(std::max<size_t>(lists.size(), 1));
  }
  if (product > 20000) return 0;
  absl::StatusOr<PolicyOptions> opts = NewPolicyOptions(request->options);
  FUZZ_CHECK(opts.ok(), "the policy was built but its options do not parse");
  absl::StatusOr<NUMAInfo> numa = NUMAInfo::Create(MergeRequestTopology(*request),
                                                   opts->prefer_closest_numa);
  FUZZ_CHECK(numa.ok(), fmt::format("the policy was built but NUMAInfo is not: {}",
                                    numa.status().ToString()));
  MergeResult want = internal::MergeExhaustive(policy, *numa, *opts, request->providers);
  FUZZ_CHECK(want.hint == fast->hint && want.admit == fast->admit,
             fmt::format("fast merge {} vs the kubelet's walk {}\n{}",
                         MergeResultToJson(*fast).dump(), MergeResultToJson(want).dump(), text));
  return 0;
}
