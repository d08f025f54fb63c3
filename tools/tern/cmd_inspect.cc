// Placeholder until the inspect command lands: says so instead of pretending to work.
#include <cstdio>

#include "commands.h"

namespace tern::cli {
int CmdInspect(int, char**) {
  std::fprintf(stderr, "tern inspect: not available in this build yet\n");
  return 1;
}
}  // namespace tern::cli
