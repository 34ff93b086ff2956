// PLACEHOLDER: `podtopo lint` is being written (registers no command yet).
#include "cli/cli.h"

namespace podtopo::cli {

void AddLintCommand(CLI::App& app, Context& ctx) {}

}  // namespace podtopo::cli
