// tern-dev synth: writes a synthetic VibeASR package (seeded random weights, published format)
// for tests and benchmarks. Format and magnitudes: src/models/vibeasr/synth.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include "base/timer.h"
#include "commands.h"
#include "models/vibeasr/synth.h"

namespace tern::cli {

int CmdSynth(int argc, char** argv) {
  CLI::App app("Write a synthetic VibeASR checkpoint package (" +
               std::string(vibeasr::kSynthVaeFileName) + " and " + vibeasr::kSynthLmFileName +
               ") with seeded random weights in the published GGUF format.");
  app.name("tern-dev synth");
  std::string geometry = "tiny";
  std::string type_ids = "published";
  vibeasr::SynthOptions opts;
  app.add_option("--geometry", geometry,
                 "tiny (widths 8..512, decoder 256 x 2 layers) or full (the real shapes)")
      ->check(CLI::IsMember({"tiny", "full"}))
      ->capture_default_str();
  app.add_option("--seed", opts.seed, "weights seed; same seed, same bytes")->capture_default_str();
  app.add_option("--vocab", opts.vocab_dir,
                 "directory with the Qwen2 vocab.json, merges.txt, tokenizer_config.json")
      ->required();
  app.add_option("--out", opts.out_dir, "output directory (created if missing)")->required();
  app.add_option("--type-ids", type_ids,
                 "I2_S/I8_S ids: published (36/37) or remapped (audio.cpp's 43/42)")
      ->check(CLI::IsMember({"published", "remapped"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  opts.geometry = *vibeasr::SynthGeometryFromName(geometry);  // checked by IsMember
  opts.type_ids = type_ids == "remapped" ? gguf::TypeIds::kRemapped : gguf::TypeIds::kPublished;

  std::error_code ec;
  std::filesystem::create_directories(opts.out_dir, ec);
  if (ec) {
    std::fprintf(stderr, "tern-dev synth: cannot create %s: %s\n", opts.out_dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  Timer timer;
  const Status st = vibeasr::WriteSyntheticPackage(opts);
  if (!st.ok()) {
    std::fprintf(stderr, "tern-dev synth: %s\n", st.ToString().c_str());
    return 1;
  }
  for (const char* name : {vibeasr::kSynthVaeFileName, vibeasr::kSynthLmFileName}) {
    const std::string path = opts.out_dir + "/" + name;
    std::fprintf(stderr, "wrote %s (%.1f MB)\n", path.c_str(),
                 static_cast<double>(std::filesystem::file_size(path, ec)) / 1e6);
  }
  std::fprintf(stderr, "tern-dev synth: %s geometry, seed %llu, %.1f s\n", geometry.c_str(),
               static_cast<unsigned long long>(opts.seed), timer.ElapsedMs() / 1000.0);
  return 0;
}

}  // namespace tern::cli
