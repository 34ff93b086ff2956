// PLACEHOLDER: `podtopo state` is being written (registers no command yet).
#include "cli/cli.h"

namespace podtopo::cli {

void AddStateCommands(CLI::App& app, Context& ctx) {}

}  // namespace podtopo::cli
