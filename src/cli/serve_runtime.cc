// PLACEHOLDER: the CRI runtime integration (issue 6) is being written.
#include "serve/runtime_hooks.h"

namespace podtopo::serve {

absl::StatusOr<std::unique_ptr<RuntimeHooks>> MakeRuntimeHooks(const RuntimeOptions& options) {
  return absl::UnimplementedError("--cri: the CRI runtime integration is not built yet");
}

}  // namespace podtopo::serve
