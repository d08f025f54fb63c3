// Placeholder until the bench command lands: says so instead of pretending to work.
#include <cstdio>

#include "commands.h"

namespace tern::cli {
int CmdBench(int, char**) {
  std::fprintf(stderr, "tern bench: not available in this build yet\n");
  return 1;
}
}  // namespace tern::cli
