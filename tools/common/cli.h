// What every tern binary's commands share (tern, tern-dev, tern-bench): flag parsing with its
// exit codes, a batch of inputs where one failure does not stop the others, writing an output
// file, and --version. Only the public API (tern/status.h, tern/tern.h) and CLI11 below it.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tern/status.h"

namespace CLI {
class App;
}

namespace tern::cli {

// Writes `bytes` bytes to `path` (created or truncated); errors name the file.
Status WriteFile(const std::string& path, const void* data, size_t bytes);

// Parses argv into `app` (--help and bad flags exit as CLI11 says: 0 or 2), then runs `run`;
// a failure is printed as "<app name>: <error>" and exits 2 for an invalid argument (a
// usage error), 1 for anything else.
int ParseAndRun(CLI::App& app, int argc, char** argv, const std::function<Status()>& run);

// As ParseAndRun, with the exit codes README gives: `check` validates the options (an
// invalid argument there is a usage error: exit 2), then `run` does the work, whose every
// failure (a file, its audio, the model) exits 1 whatever its code: "audio is silent" is
// not a bad option even when the library calls it an invalid argument.
int ParseCheckAndRun(CLI::App& app, int argc, char** argv, const std::function<Status()>& check,
                     const std::function<Status()>& run);

// Runs `one` on every input. A failing input does not stop the others (a batch of hundreds
// of files): its error is printed as "<command>: <error>", and the result is the first
// failure's code with "N of M inputs failed". With one input, its own status.
Status ForEachInput(const std::vector<std::string>& inputs, const std::string& command,
                    const std::function<Status(const std::string&)>& one);

// `--version`: prints tern::VersionString() and a newline on stdout; returns exit code 0.
int PrintVersion();

}  // namespace tern::cli
