// podtopo: see src/cli/cli.h for the command line and ../shared/DESIGN.md for its contract.
#include <iostream>

#include "cli/cli.h"

int main(int argc, char** argv) { return podtopo::cli::Run(argc, argv, std::cout, std::cerr); }
