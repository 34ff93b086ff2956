// KubeletConfiguration YAML: decoding never fails hard (problems are findings that name the
// file), the kubelet's checks run on whatever decoded, and a configuration without errors
// survives printing: ParseKubeletConfig(ToYaml()) has no errors and the same settings.
#include <string>

#include "config/kubelet_config.h"
#include "fmt/format.h"
#include "fuzz/fuzz_target.h"

PODTOPO_FUZZ_TARGET(kubelet_config) {
  using namespace podtopo::config;
  ParsedKubeletConfig parsed = ParseKubeletConfig(AsText(data, size), "fuzz.yaml");
  for (const Finding& f : parsed.findings) {
    FUZZ_CHECK(f.source == "fuzz.yaml" && !f.message.empty(),
               fmt::format("a finding without its file or message: {}", f.ToString()));
  }
  std::vector<Finding> invalid = parsed.config.Validate();
  (void)parsed.config.NumReservedCpus();
  (void)parsed.config.ReservedSystemCpuSet();
  ResourceList capacity{{"cpu", Quantity::FromInt(64)},
                        {"memory", Quantity::FromInt(int64_t{256} << 30, Quantity::Format::kBinarySI)}};
  (void)parsed.config.NodeAllocatableReservation(capacity);
  (void)parsed.config.Validate(&capacity);
  if (HasErrors(parsed.findings)) return 0;
  std::string yaml = parsed.config.ToYaml();
  ParsedKubeletConfig again = ParseKubeletConfig(yaml, "printed.yaml");
  std::string errors;
  for (const Finding& f : again.findings) {
    if (f.severity == Finding::Severity::kError) errors += f.ToString() + "\n";
  }
  FUZZ_CHECK(errors.empty(), fmt::format("ToYaml() does not read back:\n{}\n{}", yaml, errors));
  FUZZ_CHECK(again.config.SameSettings(parsed.config),
             fmt::format("settings differ after ToYaml():\n{}\n---\n{}", yaml, again.config.ToYaml()));
  return 0;
}
