// PLACEHOLDER: `podtopo client` is being written (registers no command yet).
#include "cli/cli.h"

namespace podtopo::cli {

void AddClientCommands(CLI::App& app, Context& ctx) {}

}  // namespace podtopo::cli
