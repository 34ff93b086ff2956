#include <ostream>

#include "CLI/CLI.hpp"
#include "cli/cli.h"

namespace podtopo::cli {

void Context::Fail(const absl::Status& status) { Fail(std::string(status.message())); }

void Context::Fail(const std::string& message) {
  *err << "podtopo: " << message << "\n";
  exit_code = kExitBadInput;
}

int ParseAndRun(CLI::App& app, int argc, char** argv, Context& ctx) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    // Subcommand help: CLI11 raises CallForHelp from the subcommand too, and app.help() then
    // prints the subcommand's.
    *ctx.out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    *ctx.out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    *ctx.out << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    *ctx.err << "podtopo: " << e.what() << "\n";
    return kExitBadInput;
  }
  return ctx.exit_code;
}

}  // namespace podtopo::cli
