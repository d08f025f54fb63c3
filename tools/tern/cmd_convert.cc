// Placeholder until the convert command lands: says so instead of pretending to work.
#include <cstdio>

#include "commands.h"

namespace tern::cli {
int CmdConvert(int, char**) {
  std::fprintf(stderr, "tern convert: not available in this build yet\n");
  return 1;
}
}  // namespace tern::cli
