// PLACEHOLDER: `podtopo explain` is being written (registers no command yet).
#include "cli/cli.h"

namespace podtopo::cli {

void AddExplainCommand(CLI::App& app, Context& ctx) {}

}  // namespace podtopo::cli
