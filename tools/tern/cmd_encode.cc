// Placeholder until the encode command lands: says so instead of pretending to work.
#include <cstdio>

#include "commands.h"

namespace tern::cli {
int CmdEncode(int, char**) {
  std::fprintf(stderr, "tern encode: not available in this build yet\n");
  return 1;
}
}  // namespace tern::cli
