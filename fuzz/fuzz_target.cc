#include "fuzz/fuzz_target.h"

namespace podtopo::fuzz {

std::map<std::string, TargetFn>& Targets() {
  static auto* targets = new std::map<std::string, TargetFn>();
  return *targets;
}

}  // namespace podtopo::fuzz
