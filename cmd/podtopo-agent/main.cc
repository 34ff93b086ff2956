// podtopo-agent: `podtopo agent` as a program of its own, for the DaemonSet (docs/agent.md).
#include <iostream>

#include "cli/cli.h"

int main(int argc, char** argv) {
  return podtopo::cli::RunAgentProgram(argc, argv, std::cout, std::cerr);
}
