// tern-dev: developer tools (GGUF inspection and type-id rewriting, synthetic checkpoints,
// the encoder alone). `tern-dev help` lists the commands.
#include <cstdio>
#include <cstring>
#include <exception>

#include "commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* help;
};

constexpr Command kCommands[] = {
    {"inspect", tern::cli::CmdInspect, "print GGUF files' KV pairs and tensor tables"},
    {"convert", tern::cli::CmdConvert, "rewrite I2_S/I8_S type ids between 36/37 and 43/42"},
    {"synth", tern::cli::CmdSynth, "write a synthetic VibeASR checkpoint package"},
    {"encode", tern::cli::CmdEncode, "run only the audio encoder, dump features"},
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: tern-dev <command> [options]   (tern-dev <command> --help for its "
               "options)\n\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-11s %s\n", c.name, c.help);
  std::fprintf(out, "\n  --version   version, git hash and the kernel ISAs this CPU runs\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  const char* cmd = argv[1];
  if (std::strcmp(cmd, "--version") == 0) return tern::cli::PrintVersion();
  if (std::strcmp(cmd, "help") == 0 || std::strcmp(cmd, "--help") == 0 ||
      std::strcmp(cmd, "-h") == 0) {
    PrintUsage(stdout);
    return 0;
  }
  for (const Command& c : kCommands) {
    if (std::strcmp(cmd, c.name) != 0) continue;
    try {
      return c.run(argc - 1, argv + 1);
    } catch (const std::exception& e) {  // third-party exceptions stop here, at the tool edge
      std::fprintf(stderr, "tern-dev %s: %s\n", cmd, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "tern-dev: unknown command '%s'\n\n", cmd);
  PrintUsage(stderr);
  return 2;
}
