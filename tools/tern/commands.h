// The `tern` subcommands. Each lives in its own cmd_<name>.cc and parses its own flags
// (CLI11); main.cc only dispatches. Return value is the process exit code. `tern` is a client
// of the public API only (include/tern); the developer tools are `tern-dev` (tools/dev), the
// benchmarks `tern-bench` (bench/tern-bench).
#pragma once

#include "common/cli.h"

namespace tern::cli {

int CmdTranscribe(int argc, char** argv);

// Prints CPU features, the ISAs this binary can run and the one chosen.
int PrintSystemInfo();

}  // namespace tern::cli
