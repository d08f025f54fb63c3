// What the commands of every tern binary share (cli.h).
#include "common/cli.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "tern/tern.h"

namespace tern::cli {

Status WriteFile(const std::string& path, const void* data, size_t bytes) {
  FILE* out = std::fopen(path.c_str(), "wb");
  if (out == nullptr) return IoError("%s: cannot open for writing", path.c_str());
  const bool ok = std::fwrite(data, 1, bytes, out) == bytes;
  if (std::fclose(out) != 0 || !ok) return IoError("%s: write failed", path.c_str());
  return Status::Ok();
}

int ParseAndRun(CLI::App& app, int argc, char** argv, const std::function<Status()>& run) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  const Status s = run();
  if (s.ok()) return 0;
  std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), s.ToString().c_str());
  return s.code() == ErrorCode::kInvalidArgument ? 2 : 1;
}

Status ForEachInput(const std::vector<std::string>& inputs, const std::string& command,
                    const std::function<Status(const std::string&)>& one) {
  Status first_failure;
  size_t failed = 0;
  for (const std::string& input : inputs) {
    const Status s = one(input);
    if (s.ok()) continue;
    if (inputs.size() == 1) return s;
    std::fprintf(stderr, "%s: %s\n", command.c_str(), s.ToString().c_str());
    if (failed++ == 0) first_failure = s;
  }
  if (failed == 0) return Status::Ok();
  return Status(first_failure.code(), std::to_string(failed) + " of " +
                                          std::to_string(inputs.size()) + " inputs failed");
}

int PrintVersion() {
  std::printf("%s\n", VersionString().c_str());
  return 0;
}

}  // namespace tern::cli
