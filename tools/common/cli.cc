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

namespace {

// CLI11's own errors (a missing argument, a value that does not convert) as every other
// message: prefixed with the command; --help and its kin print as CLI11 says. True when the
// arguments parsed; otherwise *rc is the exit code (0 for --help, 2 for a usage error).
bool Parse(CLI::App& app, int argc, char** argv, int* rc) {
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      *rc = app.exit(e);
      return false;
    }
    std::fprintf(stderr, "%s: %s\n(%s --help lists the options)\n", app.get_name().c_str(),
                 e.what(), app.get_name().c_str());
    *rc = 2;
    return false;
  }
}

}  // namespace

int ParseAndRun(CLI::App& app, int argc, char** argv, const std::function<Status()>& run) {
  int rc = 0;
  if (!Parse(app, argc, argv, &rc)) return rc;
  const Status s = run();
  if (s.ok()) return 0;
  std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), s.ToString().c_str());
  return s.code() == ErrorCode::kInvalidArgument ? 2 : 1;
}

int ParseCheckAndRun(CLI::App& app, int argc, char** argv, const std::function<Status()>& check,
                     const std::function<Status()>& run) {
  int rc = 0;
  if (!Parse(app, argc, argv, &rc)) return rc;
  Status s = check();
  if (s.ok())
    s = run();
  else
    rc = s.code() == ErrorCode::kInvalidArgument ? 2 : 1;
  if (s.ok()) return 0;
  std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), s.ToString().c_str());
  return rc != 0 ? rc : 1;
}

Status ForEachInput(const std::vector<std::string>& inputs, const std::string& command,
                    const std::function<Status(const std::string&)>& one) {
  Status first_failure;
  size_t failed = 0;
  for (const std::string& input : inputs) {
    Status s = one(input);
    if (s.ok()) continue;
    if (inputs.size() == 1) return s;
    std::fprintf(stderr, "%s: %s\n", command.c_str(), s.ToString().c_str());
    if (failed++ == 0) first_failure = s;
  }
  if (failed == 0) return Status::Ok();
  return Status(first_failure.code(),
                std::to_string(failed) + " of " + std::to_string(inputs.size()) + " inputs failed");
}

int PrintVersion() {
  std::printf("%s\n", VersionString().c_str());
  return 0;
}

}  // namespace tern::cli
