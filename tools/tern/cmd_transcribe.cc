// Placeholder until the transcribe command lands: says so instead of pretending to work.
#include <cstdio>

#include "commands.h"

namespace tern::cli {
int CmdTranscribe(int, char**) {
  std::fprintf(stderr, "tern transcribe: not available in this build yet\n");
  return 1;
}
}  // namespace tern::cli
