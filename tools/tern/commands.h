// The `tern` subcommands. Each lives in its own cmd_<name>.cc and parses its own flags
// (CLI11); main.cc only dispatches. Return value is the process exit code.
#pragma once

namespace tern::cli {

int CmdInspect(int argc, char** argv);
int CmdConvert(int argc, char** argv);
int CmdSynth(int argc, char** argv);
int CmdBench(int argc, char** argv);
int CmdEncode(int argc, char** argv);
int CmdTranscribe(int argc, char** argv);

// Prints CPU features, the ISAs this binary can run and the one chosen.
int PrintSystemInfo();

}  // namespace tern::cli
