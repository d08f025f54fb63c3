// Keeps the layer arrows of design.md honest: reads every `#include` under src/, include/,
// tools/, bench/ and python/ (the binding, held to the tools' rule) and fails on an edge that
// points up (or sideways where design.md forbids it).
//
//   base < tensor < gguf < kernels < runtime < ops < {audio, text} < models < engine < tools
//
// Allowed edges (a folder may always include itself):
//   tensor: base          gguf: base tensor           kernels: base tensor   runtime: base
//   ops: base tensor kernels runtime   (weights arrive as tensors, never as files: no gguf;
//        it is also what lets the kernel-only cross build compile ops without gguf)
//   audio: base           text: base gguf
//   models: base tensor gguf kernels runtime ops
//   engine: every layer below it
//   include/tern/*.h: only include/tern/*.h and the C++ standard library
//   tools/tern, tools/server, tools/common: the public API's users. Only include/tern/*.h,
//           headers beside them, tools/common/ (the helpers every binary shares), the C++
//           standard library and their third-party libraries (CLI11, nlohmann/json, Boost,
//           GoogleTest): what `tern` and `tern-server` do, a program outside the repository
//           can do with the installed library.
//   tools/dev, bench/: any layer. `tern-dev` reads and writes GGUF files, writes synthetic
//           checkpoints and runs the encoder alone; `tern-bench` and the micro-benchmarks time
//           kernels, ops and model stages one by one. Both exist to look below the public
//           API, so they are folders of their own that nothing else may include.
// "tern/status.h" is the public Status that base re-exports, and "tern/types.h" the plain
// data types the API shares with the layers (Audio, Features, ...): any layer may include
// them. Any other include/tern header is the engine's public API (engine and tools only).
// Third-party headers stay in the layer that wraps them (sndfile/soxr/FFmpeg: audio; pcre2: text;
// CLI11, pybind11: tools), so the kernel-only cross build never needs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Source {
  std::string path;  // relative to the repository root, '/' separated
  std::string content;
};

const std::map<std::string, std::set<std::string>>& AllowedEdges() {
  static const std::map<std::string, std::set<std::string>> m = {
      {"base", {}},
      {"tensor", {"base"}},
      {"gguf", {"base", "tensor"}},
      {"kernels", {"base", "tensor"}},
      {"runtime", {"base"}},
      {"ops", {"base", "tensor", "kernels", "runtime"}},
      {"audio", {"base"}},
      {"text", {"base", "gguf"}},
      {"models", {"base", "tensor", "gguf", "kernels", "runtime", "ops"}},
      {"engine",
       {"base", "tensor", "gguf", "kernels", "runtime", "ops", "audio", "text", "models", "api"}},
  };
  return m;
}

// Folders outside src/ that may include any layer, with the reason (the header comment).
const std::set<std::string>& InternalTools() {
  static const std::set<std::string> s = {"dev", "bench"};
  return s;
}

// Where third-party headers may appear: header prefix -> layers.
const std::map<std::string, std::set<std::string>>& ThirdPartyOwners() {
  static const std::map<std::string, std::set<std::string>> m = {
      {"sndfile.h", {"audio"}},    {"soxr.h", {"audio"}},
      {"libavformat/", {"audio"}}, {"libavcodec/", {"audio"}},
      {"libavutil/", {"audio"}},   {"libswresample/", {"audio"}},
      {"pcre2.h", {"text"}},       {"CLI/", {"tools", "dev", "bench"}},
      {"boost/", {"tools"}},       {"pybind11/", {"tools"}},
  };
  return m;
}

// The C++ standard library (and its C compatibility headers) as include/tern may use it.
const std::set<std::string>& StandardHeaders() {
  static const std::set<std::string> s = {"algorithm",
                                          "any",
                                          "array",
                                          "atomic",
                                          "bit",
                                          "bitset",
                                          "cassert",
                                          "cctype",
                                          "cerrno",
                                          "cfenv",
                                          "cfloat",
                                          "charconv",
                                          "clocale",
                                          "csetjmp",
                                          "csignal",
                                          "chrono",
                                          "cinttypes",
                                          "climits",
                                          "cmath",
                                          "compare",
                                          "complex",
                                          "concepts",
                                          "condition_variable",
                                          "cstdarg",
                                          "cstddef",
                                          "cstdint",
                                          "cstdio",
                                          "cstdlib",
                                          "cstring",
                                          "ctime",
                                          "deque",
                                          "exception",
                                          "expected",
                                          "filesystem",
                                          "format",
                                          "forward_list",
                                          "fstream",
                                          "functional",
                                          "future",
                                          "initializer_list",
                                          "iomanip",
                                          "ios",
                                          "iosfwd",
                                          "iostream",
                                          "istream",
                                          "iterator",
                                          "limits",
                                          "list",
                                          "map",
                                          "memory",
                                          "memory_resource",
                                          "mutex",
                                          "new",
                                          "numbers",
                                          "numeric",
                                          "optional",
                                          "ostream",
                                          "queue",
                                          "random",
                                          "ranges",
                                          "ratio",
                                          "regex",
                                          "set",
                                          "shared_mutex",
                                          "source_location",
                                          "span",
                                          "sstream",
                                          "stack",
                                          "stdexcept",
                                          "stop_token",
                                          "string",
                                          "string_view",
                                          "system_error",
                                          "thread",
                                          "tuple",
                                          "type_traits",
                                          "typeindex",
                                          "typeinfo",
                                          "unordered_map",
                                          "unordered_set",
                                          "utility",
                                          "valarray",
                                          "variant",
                                          "vector",
                                          "version"};
  return s;
}

// Third-party libraries the public API's users (tools/tern, tools/server) may include.
const std::vector<std::string>& ToolLibraries() {
  // fcntl.h and unistd.h: tern-server's access log captures file descriptor 2 (pipe, dup2)
  // so that libraries' messages about a client's file reach stderr only through the log.
  static const std::vector<std::string> v = {"CLI/",   "nlohmann/", "boost/",  "pybind11/",
                                             "gtest/", "gmock/",    "fcntl.h", "unistd.h"};
  return v;
}

struct Include {
  int line;
  bool quoted;
  std::string target;
};

std::vector<Include> ParseIncludes(const std::string& content) {
  std::vector<Include> out;
  std::istringstream in(content);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] != '#') continue;
    p = line.find_first_not_of(" \t", p + 1);
    if (p == std::string::npos || line.compare(p, 7, "include") != 0) continue;
    p = line.find_first_of("\"<", p + 7);
    if (p == std::string::npos) continue;
    const char close = line[p] == '"' ? '"' : '>';
    const size_t e = line.find(close, p + 1);
    if (e == std::string::npos) continue;
    out.push_back({n, close == '"', line.substr(p + 1, e - p - 1)});
  }
  return out;
}

// The layer a repository path belongs to: "base".."engine", "api" (include/tern), "tools"
// (the public API's users), "dev" (tools/dev), "bench", or "" outside the checked trees.
std::string LayerOfFile(const std::string& path) {
  if (path.rfind("include/tern/", 0) == 0) return "api";
  if (path.rfind("tools/dev/", 0) == 0) return "dev";
  if (path.rfind("tools/", 0) == 0) return "tools";
  if (path.rfind("bench/", 0) == 0) return "bench";
  if (path.rfind("python/", 0) == 0) return "tools";  // the binding: a user of the public API
  if (path.rfind("src/", 0) != 0) return "";
  const size_t slash = path.find('/', 4);
  return slash == std::string::npos ? "" : path.substr(4, slash - 4);
}

// The layer a quoted include names by its first component ("" if none).
std::string LayerOfInclude(const std::string& target) {
  const size_t slash = target.find('/');
  if (slash == std::string::npos) return "";
  const std::string first = target.substr(0, slash);
  if (first == "tern") {
    return target == "tern/status.h" || target == "tern/types.h" ? "status" : "api";
  }
  return AllowedEdges().count(first) ? first : "";
}

// Every violation in `sources`, one message each. `exists` answers whether a repository
// path is a file (for includes relative to the including file's folder).
std::vector<std::string> FindViolations(const std::vector<Source>& sources,
                                        const std::function<bool(const std::string&)>& exists) {
  std::vector<std::string> bad;
  for (const Source& src : sources) {
    const std::string layer = LayerOfFile(src.path);
    if (layer.empty()) continue;
    const std::string dir = src.path.substr(0, src.path.rfind('/') + 1);
    for (const Include& inc : ParseIncludes(src.content)) {
      const std::string where = src.path + ":" + std::to_string(inc.line) + ": ";
      const std::string quote = inc.quoted ? "\"" + inc.target + "\"" : "<" + inc.target + ">";
      if (!inc.quoted) {
        if (layer == "api" && !StandardHeaders().count(inc.target)) {
          bad.push_back(where + "public header includes non-standard " + quote);
        }
        if (layer == "tools" && !StandardHeaders().count(inc.target) &&
            std::none_of(ToolLibraries().begin(), ToolLibraries().end(),
                         [&](const std::string& lib) { return inc.target.rfind(lib, 0) == 0; })) {
          bad.push_back(where + "tool includes " + quote +
                        " (tools/tern and tools/server use the public API, the standard library "
                        "and CLI11/JSON/HTTP/GoogleTest only)");
        }
        for (const auto& [prefix, owners] : ThirdPartyOwners()) {
          if (inc.target.rfind(prefix, 0) == 0 && !owners.count(layer)) {
            bad.push_back(where + layer + " includes third-party " + quote + " (it belongs to " +
                          *owners.begin() + ")");
          }
        }
        continue;
      }
      if (inc.target.find("..") != std::string::npos) {
        bad.push_back(where + "include " + quote + " climbs out of its folder");
        continue;
      }
      const bool tool_layer = layer == "tools" || InternalTools().count(layer);
      if (tool_layer && inc.target.rfind("common/", 0) == 0 && exists("tools/" + inc.target)) {
        continue;  // tools/common: the helpers every binary shares (public API only itself)
      }
      const std::string to = LayerOfInclude(inc.target);
      if (InternalTools().count(layer) && !to.empty()) continue;
      if (to.empty()) {
        if (!exists(dir + inc.target)) {
          bad.push_back(where + "include " + quote + " names no layer and no file beside it");
        } else if (layer == "api") {
          bad.push_back(where + "public header includes " + quote + " (spell it tern/...)");
        }
        continue;
      }
      if (layer == "api") {
        if (to != "api" && to != "status") {
          bad.push_back(where + "public header includes internal " + quote);
        }
        continue;
      }
      if (layer == "tools") {
        if (to == "api" || to == "status") continue;
        bad.push_back(where + "tool includes internal " + quote +
                      " (tools/tern and tools/server use include/tern only; code that needs "
                      "internals belongs in tools/dev or bench/)");
        continue;
      }
      if (to == layer || to == "status") continue;
      if (!AllowedEdges().at(layer).count(to)) {
        bad.push_back(where + layer + " must not include " + quote + " (" + to + " is not below " +
                      layer + ")");
      }
    }
  }
  return bad;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += "  " + x + "\n";
  return s;
}

// ---- the checker itself, on made-up files: each rule must be able to fail ----

std::vector<std::string> Check(const std::string& path, const std::string& content) {
  return FindViolations({{path, content}}, [](const std::string& p) {
    return p == "tools/tern/commands.h" || p == "tools/dev/commands.h" ||
           p == "tools/common/cli.h" || p == "bench/tern-bench/bench.h";
  });
}

TEST(LayeringChecker, FlagsUpwardEdges) {
  EXPECT_EQ(Check("src/kernels/x.cc", "#include \"ops/linear.h\"\n").size(), 1u);
  EXPECT_EQ(Check("src/runtime/x.cc", "#include \"tensor/dtype.h\"\n").size(), 1u);
  EXPECT_EQ(Check("src/audio/x.cc", "  #  include \"text/utf8.h\" // x\n").size(), 1u);
  EXPECT_EQ(Check("src/text/x.h", "#include \"audio/audio.h\"\n").size(), 1u);
  EXPECT_EQ(Check("src/ops/x.cc", "#include \"gguf/gguf.h\"\n").size(), 1u);
  EXPECT_EQ(Check("src/models/vibeasr/x.cc", "#include \"engine/segments.h\"\n").size(), 1u);
  EXPECT_EQ(Check("src/models/vibeasr/x.cc", "#include \"tern/tern.h\"\n").size(), 1u);
  EXPECT_EQ(Check("src/base/x.cc", "#include \"tensor/dtype.h\"\n").size(), 1u);
  EXPECT_EQ(Check("src/gguf/x.cc", "#include \"nowhere.h\"\n").size(), 1u);
}

TEST(LayeringChecker, AcceptsDownwardEdges) {
  const std::string ok =
      "#include \"base/status.h\"\n#include \"tern/status.h\"\n#include <vector>\n";
  EXPECT_EQ(Join(Check("src/kernels/avx2/x.cc", ok + "#include \"tensor/dtype.h\"\n")), "");
  EXPECT_EQ(Join(Check("src/audio/x.cc", ok + "#include \"tern/types.h\"\n")), "");
  EXPECT_EQ(Join(Check("src/ops/x.cc", ok + "#include \"kernels/kernels.h\"\n"
                                            "#include \"runtime/thread_pool.h\"\n")),
            "");
  EXPECT_EQ(Join(Check("src/text/x.cc", ok + "#include \"gguf/gguf.h\"\n#include <pcre2.h>\n")),
            "");
  EXPECT_EQ(Join(Check("src/engine/x.cc", ok + "#include \"models/vibeasr/decoder.h\"\n"
                                               "#include \"audio/audio.h\"\n"
                                               "#include \"tern/tern.h\"\n")),
            "");
}

TEST(LayeringChecker, PublicHeaders) {
  EXPECT_EQ(Check("include/tern/x.h", "#include \"base/status.h\"\n").size(), 1u);
  EXPECT_EQ(Check("include/tern/x.h", "#include <sndfile.h>\n").size(), 2u);  // both rules
  EXPECT_EQ(Join(Check("include/tern/x.h", "#include \"tern/status.h\"\n#include <span>\n")), "");
  EXPECT_EQ(Check("src/kernels/x.cc", "#include <soxr.h>\n").size(), 1u);
  EXPECT_EQ(Check("src/engine/x.cc", "#include <CLI/CLI.hpp>\n").size(), 1u);
  EXPECT_EQ(Check("src/engine/x.cc", "#include <pybind11/pybind11.h>\n").size(), 1u);
  EXPECT_EQ(Check("python/module.cc", "#include \"engine/segments.h\"\n").size(), 1u);
  EXPECT_EQ(Check("python/module.cc",
                  "#include <pybind11/pybind11.h>\n"
                  "#include \"tern/tern.h\"\n")
                .size(),
            0u);
}

TEST(LayeringChecker, PublicApiToolsUseOnlyThePublicApi) {
  // No file of tools/tern, tools/server or tools/common may reach below include/tern.
  for (const char* file : {"tools/tern/cmd_transcribe.cc", "tools/tern/cmd_inspect.cc",
                           "tools/server/routes.cc", "tools/common/cli.cc"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(Check(file, "#include \"engine/segments.h\"\n").size(), 1u);
    EXPECT_EQ(Check(file, "#include \"gguf/gguf.h\"\n").size(), 1u);
    EXPECT_EQ(Check(file, "#include \"base/status.h\"\n").size(), 1u);
    // Not a tool library, and not the tools' layer either: two rules.
    EXPECT_EQ(Check(file, "#include <sndfile.h>\n").size(), 2u);
    EXPECT_EQ(Check(file, "#include <benchmark/benchmark.h>\n").size(), 1u);
    EXPECT_EQ(Check(file, "#include \"../dev/commands.h\"\n").size(), 1u);
  }
  EXPECT_EQ(Check("tools/tern/main.cc", "#include \"bench.h\"\n").size(), 1u);  // not beside it
  EXPECT_EQ(Join(Check("tools/tern/cmd_transcribe.cc",
                       "#include <CLI/CLI.hpp>\n#include <nlohmann/json.hpp>\n#include <csignal>\n"
                       "#include \"commands.h\"\n#include \"common/cli.h\"\n"
                       "#include \"tern/tern.h\"\n#include \"tern/status.h\"\n")),
            "");
  EXPECT_EQ(Join(Check("tools/server/main.cc",
                       "#include <boost/beast/http.hpp>\n#include <gtest/gtest.h>\n")),
            "");
}

TEST(LayeringChecker, DeveloperToolsAndBenchmarksMayUseInternals) {
  const std::string internals =
      "#include \"gguf/gguf.h\"\n#include \"models/vibeasr/synth.h\"\n"
      "#include \"kernels/kernels.h\"\n#include \"ops/i8s_tensor.h\"\n#include \"base/timer.h\"\n"
      "#include \"common/cli.h\"\n#include \"tern/tern.h\"\n#include <CLI/CLI.hpp>\n";
  EXPECT_EQ(Join(Check("tools/dev/cmd_encode.cc", internals + "#include \"commands.h\"\n")), "");
  EXPECT_EQ(Join(Check("bench/tern-bench/kernels.cc", internals + "#include \"bench.h\"\n")), "");
  // They are still held to the rest: files that exist, no climbing into another folder.
  EXPECT_EQ(Check("tools/dev/cmd_encode.cc", "#include \"bench.h\"\n").size(), 1u);
  EXPECT_EQ(Check("bench/tern-bench/x.cc", "#include \"../../tools/dev/commands.h\"\n").size(), 1u);
  EXPECT_EQ(Check("tools/dev/x.cc", "#include <boost/asio.hpp>\n").size(), 1u);
  // And nothing in src/ may use the tools' helpers.
  EXPECT_EQ(Check("src/engine/x.cc", "#include \"common/cli.h\"\n").size(), 1u);
}

// ---- the real tree ----

TEST(Layering, RepositoryHasNoUpwardIncludes) {
  const fs::path root = TERN_SOURCE_DIR;
  std::vector<Source> sources;
  size_t n_includes = 0;
  for (const char* top : {"src", "include", "tools", "bench", "python"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cc" && ext != ".hpp" && ext != ".cpp")) {
        continue;
      }
      std::ifstream f(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << f.rdbuf();
      sources.push_back({fs::relative(e.path(), root).generic_string(), ss.str()});
      n_includes += ParseIncludes(sources.back().content).size();
    }
  }
  // Guards against a scan that finds nothing (wrong root) and so cannot fail.
  ASSERT_GT(sources.size(), 100u);
  ASSERT_GT(n_includes, 500u);
  const auto bad =
      FindViolations(sources, [&](const std::string& p) { return fs::is_regular_file(root / p); });
  EXPECT_TRUE(bad.empty()) << bad.size() << " include(s) against the layer order:\n" << Join(bad);
}

}  // namespace
