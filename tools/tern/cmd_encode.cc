// tern encode --model DIR | --vae FILE  AUDIO  --dump-features FILE  [-t N]
// Runs only the audio encoder (both branches, summed) and writes the features as raw
// little-endian float32, frames x hidden, row-major. A summary goes to stderr.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include "audio/audio.h"
#include "base/timer.h"
#include "commands.h"
#include "kernels/kernels.h"
#include "models/vibeasr/encoder.h"
#include "runtime/thread_pool.h"

namespace tern::cli {

namespace {
constexpr char kVaeFileName[] = "vibeasr-vae-encoder-i8_s.gguf";
}

int CmdEncode(int argc, char** argv) {
  CLI::App app("Run the VibeASR audio encoder on one file and dump its features as raw "
               "float32 (frames x hidden, row-major).");
  app.name("tern encode");
  std::string model_dir, vae_path, audio_path, out_path;
  int threads = 1;
  bool no_normalize = false;
  auto* model = app.add_option("--model", model_dir, std::string("package directory (holds ") +
                                                         kVaeFileName + ")");
  app.add_option("--vae", vae_path, "the encoder GGUF itself")->excludes(model);
  app.add_option("audio", audio_path, "WAV, FLAC, OGG or MP3 file")->required();
  app.add_option("--dump-features", out_path, "output file (raw float32)")->required();
  app.add_option("-t,--threads", threads, "threads")->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_flag("--no-normalize", no_normalize, "skip the -25 dBFS loudness normalization");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  // A bad TERN_ISA is reported here instead of aborting inside the first kernel call.
  if (Result<kernels::Isa> isa = kernels::SelectIsa(); !isa.ok()) {
    std::fprintf(stderr, "tern encode: %s\n", isa.status().ToString().c_str());
    return 1;
  }
  if (vae_path.empty()) {
    if (model_dir.empty()) {
      std::fprintf(stderr, "tern encode: give --model DIR or --vae FILE\n");
      return 2;
    }
    vae_path = (std::filesystem::path(model_dir) / kVaeFileName).string();
  }

  audio::AudioOptions aopt;
  aopt.normalize = !no_normalize;
  auto audio = audio::LoadAudio(audio_path, aopt);
  if (!audio.ok()) {
    std::fprintf(stderr, "tern encode: %s\n", audio.status().ToString().c_str());
    return 1;
  }
  Timer load_timer;
  auto enc = vibeasr::Encoder::Load(vae_path);
  if (!enc.ok()) {
    std::fprintf(stderr, "tern encode: %s\n", enc.status().ToString().c_str());
    return 1;
  }
  const double load_ms = load_timer.ElapsedMs();
  ThreadPool pool(threads);
  vibeasr::EncoderTimings timings;
  Timer run_timer;
  auto feats = (*enc)->Run(audio->samples.data(), audio->samples.size(), pool, &timings);
  if (!feats.ok()) {
    std::fprintf(stderr, "tern encode: %s\n", feats.status().ToString().c_str());
    return 1;
  }
  const double run_ms = run_timer.ElapsedMs();

  FILE* out = std::fopen(out_path.c_str(), "wb");
  if (out == nullptr) {
    std::fprintf(stderr, "tern encode: %s: cannot open for writing\n", out_path.c_str());
    return 1;
  }
  const size_t n = feats->data.size();
  const bool ok = std::fwrite(feats->data.data(), sizeof(float), n, out) == n;
  if (std::fclose(out) != 0 || !ok) {
    std::fprintf(stderr, "tern encode: %s: write failed\n", out_path.c_str());
    return 1;
  }
  std::fprintf(stderr,
               "%s: %.2f s of audio -> %lld frames x %lld; load %.0f ms, encode %.1f ms "
               "(acoustic %.1f, semantic %.1f) at %d thread(s); peak RSS %.0f MB\n",
               audio_path.c_str(), audio->duration_s, static_cast<long long>(feats->frames),
               static_cast<long long>(feats->hidden), load_ms, run_ms, timings.acoustic_ms,
               timings.semantic_ms, threads, static_cast<double>(PeakRssBytes()) / 1e6);
  return 0;
}

}  // namespace tern::cli
