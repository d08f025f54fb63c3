// Placeholder until the synth command lands: says so instead of pretending to work.
#include <cstdio>

#include "commands.h"

namespace tern::cli {
int CmdSynth(int, char**) {
  std::fprintf(stderr, "tern synth: not available in this build yet\n");
  return 1;
}
}  // namespace tern::cli
