// PLACEHOLDER: `podtopo serve` is being written (registers no command yet).
#include "cli/cli.h"

namespace podtopo::cli {

void AddServeCommand(CLI::App& app, Context& ctx) {}

}  // namespace podtopo::cli
