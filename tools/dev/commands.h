// The `tern-dev` subcommands: tools for people working on tern itself (GGUF files, synthetic
// checkpoints, encoder features). Unlike `tern` they reach below the public API, which is why
// they live here and not in tools/tern (tests/layering_test.cc).
#pragma once

#include "common/cli.h"

namespace tern::cli {

int CmdInspect(int argc, char** argv);
int CmdConvert(int argc, char** argv);
int CmdSynth(int argc, char** argv);
int CmdEncode(int argc, char** argv);

}  // namespace tern::cli
