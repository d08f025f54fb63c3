// tern-dev convert: rewrites the type ids of I2_S / I8_S tensors between the published
// VibeASR numbering (36/37) and audio.cpp's remap (43/42). Only the 4-byte type field of
// each such tensor info changes; payloads, offsets and KVs stay byte-identical.
// Exit codes: 0 ok, 1 file error, 2 usage, 3 `--check` found ids to rewrite.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>

#include "commands.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"

namespace tern::cli {
namespace {

const char* IdsName(gguf::TypeIds ids) {
  return ids == gguf::TypeIds::kPublished ? "published (I2_S 36, I8_S 37)"
                                          : "remapped (I2_S 43, I8_S 42)";
}

int List(const gguf::File& f) {
  size_t published = 0, remapped = 0;
  for (const auto& t : f.tensors()) {
    if (t.type != DType::kI2_S && t.type != DType::kI8_S) continue;
    const bool pub = t.type_id == gguf::GgufIdFromDType(t.type, gguf::TypeIds::kPublished);
    (pub ? published : remapped)++;
    std::printf("%s\t%s\t%u\t%s\n", t.name.c_str(), DTypeName(t.type), t.type_id,
                pub ? "published" : "remapped");
  }
  std::printf("%zu I2_S/I8_S tensors: %zu with published ids, %zu with remapped ids\n",
              published + remapped, published, remapped);
  return 0;
}

// "KEY=VALUE" of --set-bool / --set-f32 / --set-string as a KV pair.
Result<std::pair<std::string, gguf::Value>> ParseSet(const std::string& flag,
                                                     const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgumentError("%s '%s': expected KEY=VALUE", flag.c_str(), arg.c_str());
  const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
  if (flag == "--set-string") return std::pair{key, gguf::Value::String(value)};
  if (flag == "--set-bool") {
    if (value != "true" && value != "false")
      return InvalidArgumentError("%s %s: the value must be true or false, not '%s'", flag.c_str(),
                                  key.c_str(), value.c_str());
    return std::pair{key, gguf::Value::Bool(value == "true")};
  }
  char* end = nullptr;
  const float f = std::strtof(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(f))
    return InvalidArgumentError("%s %s: '%s' is not a finite number", flag.c_str(), key.c_str(),
                                value.c_str());
  return std::pair{key, gguf::Value::F32(f)};
}

// --set-*: the file's KVs plus these, its tensors and type ids unchanged.
int SetKvs(const std::string& input, const std::string& dest,
           const std::vector<std::pair<std::string, std::vector<std::string>*>>& flags) {
  std::vector<std::pair<std::string, gguf::Value>> set;
  for (const auto& [flag, args] : flags) {
    for (const std::string& a : *args) {
      auto kv = ParseSet(flag, a);
      if (!kv.ok()) {
        std::fprintf(stderr, "tern-dev convert: %s\n", kv.status().ToString().c_str());
        return 2;
      }
      set.push_back(std::move(*kv));
    }
  }
  const Status s = gguf::RewriteWithKvs(input, dest, set);
  if (!s.ok()) {
    std::fprintf(stderr, "tern-dev convert: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("%s: %zu keys set; tensors unchanged\n", dest.c_str(), set.size());
  return 0;
}

}  // namespace

int CmdConvert(int argc, char** argv) {
  CLI::App app(
      "Rewrite the GGUF type ids of I2_S/I8_S tensors: published 36/37 (VibeASR) <-> "
      "remapped 43/42 (audio.cpp). Only the 4-byte type fields change.");
  app.name("tern-dev convert");
  std::string input, output, ids_name = "remapped";
  bool list = false, check = false, in_place = false;
  app.add_option("--input,-i", input, "GGUF file to read")->required();
  auto* mode = app.add_option_group("mode", "exactly one of");
  mode->add_flag("--list", list, "print each I2_S/I8_S tensor with its current type id");
  mode->add_flag("--check", check,
                 "exit 0 if every I2_S/I8_S tensor already uses the target ids, 3 otherwise");
  mode->add_flag("--in-place", in_place,
                 "rewrite the input (temporary file in the same directory, then rename)");
  mode->add_option("--output,-o", output, "write the converted copy here");
  mode->require_option(1);
  app.add_option("--ids", ids_name, "target numbering: remapped (43/42) or published (36/37)")
      ->check(CLI::IsMember({"published", "remapped"}))
      ->capture_default_str();
  // Metadata instead of type ids: what a model declares about itself (tern.trained.*,
  // docs/formats-tern-keys.md), added without touching a tensor byte.
  std::vector<std::string> set_bool, set_f32, set_string;
  app.add_option("--set-bool", set_bool,
                 "with --in-place or -o: add the KV KEY=true|false "
                 "(repeatable); type ids are kept");
  app.add_option("--set-f32", set_f32, "with --in-place or -o: add the f32 KV KEY=NUMBER");
  app.add_option("--set-string", set_string, "with --in-place or -o: add the string KV KEY=TEXT");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (!set_bool.empty() || !set_f32.empty() || !set_string.empty()) {
    if (list || check || app.count("--ids") > 0) {
      std::fprintf(stderr,
                   "tern-dev convert: --set-* takes --in-place or -o and keeps the type "
                   "ids (no --list, --check or --ids)\n");
      return 2;
    }
    return SetKvs(
        input, in_place ? input : output,
        {{"--set-bool", &set_bool}, {"--set-f32", &set_f32}, {"--set-string", &set_string}});
  }
  const gguf::TypeIds target =
      ids_name == "published" ? gguf::TypeIds::kPublished : gguf::TypeIds::kRemapped;

  auto f = gguf::File::Open(input);
  if (!f.ok()) {
    std::fprintf(stderr, "tern-dev convert: %s\n", f.status().ToString().c_str());
    return 1;
  }
  if (list) return List(**f);
  if (check) {
    const auto patches = gguf::PlanTypeIdRewrite(**f, target);
    if (patches.empty()) {
      std::printf("%s: uses the %s ids\n", input.c_str(), IdsName(target));
      return 0;
    }
    std::printf("%s: %zu tensors need their ids rewritten to %s (first: '%s', id %u)\n",
                input.c_str(), patches.size(), IdsName(target), patches[0].tensor.c_str(),
                patches[0].old_id);
    return 3;
  }
  f->reset();  // RewriteTypeIds maps the file itself
  const std::string dest = in_place ? input : output;
  auto n = gguf::RewriteTypeIds(input, dest, target);
  if (!n.ok()) {
    std::fprintf(stderr, "tern-dev convert: %s\n", n.status().ToString().c_str());
    return 1;
  }
  std::printf("%s: %zu type fields rewritten to %s ids\n", dest.c_str(), *n, IdsName(target));
  return 0;
}

}  // namespace tern::cli
