// tern: quantized speech recognition on CPUs. `tern help` lists the commands.
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
    {"transcribe", tern::cli::CmdTranscribe, "audio files in, transcripts out"},
};

void PrintUsage(FILE* out) {
  std::fprintf(out,
               "usage: tern <command> [options]   (tern <command> --help for its options)\n\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-11s %s\n", c.name, c.help);
  std::fprintf(out, "\n  --system-info  CPU features and the kernel ISA chosen\n");
  std::fprintf(out, "  --version      version, git hash and the kernel ISAs this CPU runs\n");
  std::fprintf(out,
               "\nDeveloper tools (inspect, convert, synth, encode) are in tern-dev, "
               "benchmarks in tern-bench.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  const char* cmd = argv[1];
  if (std::strcmp(cmd, "--system-info") == 0) return tern::cli::PrintSystemInfo();
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
      std::fprintf(stderr, "tern %s: %s\n", cmd, e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "tern: unknown command '%s'\n\n", cmd);
  PrintUsage(stderr);
  return 2;
}
