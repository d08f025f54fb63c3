// tern-dev inspect FILE...: each GGUF file's header, KV pairs (arrays summarized) and tensor
// table, one after another with a blank line between. A file that cannot be read does not stop
// the others. Exit codes: 0 ok, 1 a file cannot be read or is malformed (message on stderr
// naming it), 2 usage.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "commands.h"
#include "gguf/gguf.h"

namespace tern::cli {
namespace {

std::string Shape(const gguf::TensorInfo& t) {
  std::string s = "{";
  for (int d = 0; d < t.n_dims; ++d) {
    if (d > 0) s += ", ";
    s += std::to_string(t.ne[d]);
  }
  return s + "}";
}

std::string ValueTypeText(const gguf::Value& v) {
  return v.type == gguf::ValueType::kArray ? "array" : gguf::ValueTypeName(v.type);
}

void PrintFile(const gguf::File& f, size_t max_elems) {
  std::printf("file:         %s (%zu bytes)\n", f.path().c_str(), f.file_size());
  auto arch = f.GetString("general.architecture");
  std::printf("architecture: %s\n", arch.ok() ? arch->c_str() : "(none)");
  std::printf("version:      %u\n", f.version());
  std::printf("alignment:    %llu%s\n", static_cast<unsigned long long>(f.alignment()),
              f.Find("general.alignment") ? "" : " (default)");
  std::printf("data offset:  %llu\n", static_cast<unsigned long long>(f.data_offset()));

  size_t key_width = 3;
  for (const auto& [k, v] : f.kv()) key_width = std::max(key_width, std::min<size_t>(k.size(), 48));
  std::printf("\nKV pairs: %zu\n", f.kv().size());
  for (const auto& [k, v] : f.kv()) {
    std::printf("  %-*s %-6s %s\n", static_cast<int>(key_width), k.c_str(),
                ValueTypeText(v).c_str(), gguf::FormatValue(v, max_elems).c_str());
  }

  size_t name_width = 4;
  for (const auto& t : f.tensors())
    name_width = std::max(name_width, std::min<size_t>(t.name.size(), 56));
  std::printf("\ntensors: %zu\n", f.tensors().size());
  std::printf("  %-*s %-10s %-24s %14s %14s\n", static_cast<int>(name_width), "name", "type(id)",
              "shape (ne)", "offset", "bytes");
  struct Total {
    size_t count = 0;
    uint64_t bytes = 0;
    int64_t elements = 0;
  };
  std::map<std::string, Total> by_type;
  uint64_t total_bytes = 0;
  int64_t total_elements = 0;
  for (const auto& t : f.tensors()) {
    const std::string type = std::string(DTypeName(t.type)) + "(" + std::to_string(t.type_id) + ")";
    std::printf("  %-*s %-10s %-24s %14llu %14llu\n", static_cast<int>(name_width), t.name.c_str(),
                type.c_str(), Shape(t).c_str(), static_cast<unsigned long long>(t.offset),
                static_cast<unsigned long long>(t.n_bytes));
    Total& tot = by_type[type];
    ++tot.count;
    tot.bytes += t.n_bytes;
    tot.elements += t.n_elements;
    total_bytes += t.n_bytes;
    total_elements += t.n_elements;
  }
  std::printf("\ntotals: %zu tensors, %lld elements, %llu bytes (%.1f MB)\n", f.tensors().size(),
              static_cast<long long>(total_elements), static_cast<unsigned long long>(total_bytes),
              static_cast<double>(total_bytes) / 1e6);
  for (const auto& [type, tot] : by_type) {
    std::printf("  %-10s %6zu tensors %14lld elements %14llu bytes\n", type.c_str(), tot.count,
                static_cast<long long>(tot.elements), static_cast<unsigned long long>(tot.bytes));
  }
}

}  // namespace

int CmdInspect(int argc, char** argv) {
  CLI::App app(
      "Print GGUF files' header, KV pairs (arrays summarized) and tensor table "
      "(name, type and id, shape in ggml ne order, data offset, stored bytes).");
  app.name("tern-dev inspect");
  std::vector<std::string> paths;
  size_t max_elems = 6;
  app.add_option("files", paths, "GGUF files")->required();
  app.add_option("--max-elems", max_elems, "array elements shown per KV")->capture_default_str();
  bool first = true;
  return ParseAndRun(app, argc, argv, [&] {
    return ForEachInput(paths, "tern-dev inspect", [&](const std::string& path) -> Status {
      auto f = gguf::File::Open(path);
      if (!f.ok()) return f.status();
      if (!first) std::printf("\n");
      first = false;
      PrintFile(**f, max_elems);
      std::fflush(stdout);
      return Status::Ok();
    });
  });
}

}  // namespace tern::cli
