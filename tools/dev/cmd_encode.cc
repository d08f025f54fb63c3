// tern-dev encode --model DIR | --vae FILE  AUDIO...  (--dump-features FILE | --output-dir DIR)
// Runs only the audio encoder (both branches, summed) and writes the features as raw
// little-endian float32, frames x hidden, row-major: to FILE for one input, or to
// DIR/<stem>.f32 for each of several (the encoder loads once; training/train_decoder.py
// computes a training set's features this way). A summary per input goes to stderr.
//
// --step NAME writes one branch's activation after that step instead (Encoder::RunBranch's
// step names: "s5.conv", "s5.b1.ffn_res", "head", "conn.fc2", ...; --branch picks acoustic
// or semantic): dequantized to float32, frames x channels, row-major, as the encoder holds
// it ({C, T}, channel-major): for finding the first step where another implementation of
// the encoder (training/model.py's quantized forward, a port) parts from this one.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "audio/audio.h"
#include "base/status.h"
#include "base/timer.h"
#include "commands.h"
#include "kernels/kernels.h"
#include "models/vibeasr/encoder.h"
#include "ops/i8s_tensor.h"
#include "runtime/thread_pool.h"

namespace tern::cli {

namespace {

constexpr char kVaeFileName[] = "vibeasr-vae-encoder-i8_s.gguf";

struct Flags {
  std::string model_dir, vae_path, out_path, out_dir;
  std::string step, branch = "acoustic";
  std::vector<std::string> inputs;
  int threads = 1;
  bool no_normalize = false;
  bool quiet = false;
};

std::string OutputFor(const Flags& f, const std::string& input) {
  if (f.out_dir.empty()) return f.out_path;
  return (std::filesystem::path(f.out_dir) / std::filesystem::path(input).stem()).string() + ".f32";
}

vibeasr::Branch StepBranch(const Flags& f) {
  return f.branch == "semantic" ? vibeasr::Branch::kSemantic : vibeasr::Branch::kAcoustic;
}

// One branch's activation after `f.step` (a name Run checked), dequantized, {C, T} as
// frames x channels.
Status DumpStep(const Flags& f, const std::string& input, const audio::Audio& audio,
                const vibeasr::Encoder& enc, ThreadPool& pool) {
  std::vector<float> out;
  bool found = false;
  const vibeasr::Encoder::StageHook hook = [&](const std::string& step, const ops::I8sTensor& x) {
    if (step != f.step || found) return;
    found = true;
    out.resize(static_cast<size_t>(x.size()));
    ops::DequantizeI8s(x, out.data());
  };
  TERN_RETURN_IF_ERROR(
      enc.RunBranch(StepBranch(f), audio.samples.data(), audio.samples.size(), pool, &hook)
          .status());
  if (!found)  // StepNames and RunBranch disagree: a bug, not a user error
    return InternalError("--step %s: listed by the encoder but never reached", f.step.c_str());
  return WriteFile(OutputFor(f, input), out.data(), out.size() * sizeof(float));
}

Status EncodeOne(const Flags& f, const std::string& input, const vibeasr::Encoder& enc,
                 double load_ms, ThreadPool& pool) {
  audio::AudioOptions aopt;
  aopt.normalize = !f.no_normalize;
  TERN_ASSIGN_OR_RETURN(audio::Audio audio, audio::LoadAudio(input, aopt));
  if (!f.step.empty()) return DumpStep(f, input, audio, enc, pool);
  vibeasr::EncoderTimings timings;
  Timer run_timer;
  TERN_ASSIGN_OR_RETURN(vibeasr::Features feats,
                        enc.Run(audio.samples.data(), audio.samples.size(), pool, &timings));
  const double run_ms = run_timer.ElapsedMs();
  TERN_RETURN_IF_ERROR(
      WriteFile(OutputFor(f, input), feats.data.data(), feats.data.size() * sizeof(float)));
  if (!f.quiet) {
    std::fprintf(stderr,
                 "%s: %.2f s of audio -> %lld frames x %lld; load %.0f ms, encode %.1f ms "
                 "(acoustic %.1f, semantic %.1f) at %d thread(s); peak RSS %.0f MB\n",
                 input.c_str(), audio.duration_s(), static_cast<long long>(feats.frames),
                 static_cast<long long>(feats.hidden), load_ms, run_ms, timings.acoustic_ms,
                 timings.semantic_ms, f.threads, static_cast<double>(PeakRssBytes()) / 1e6);
  }
  return Status::Ok();
}

// The options and the encoder, before any input: a bad option (an unknown --step too) is a
// usage error (exit 2); the encoder's file failing to load is not.
Status Check(Flags& f, std::unique_ptr<vibeasr::Encoder>* enc, double* load_ms) {
  if (f.out_path.empty() == f.out_dir.empty())
    return InvalidArgumentError("give --dump-features FILE (one input) or --output-dir DIR");
  if (!f.out_path.empty() && f.inputs.size() > 1)
    return InvalidArgumentError("--dump-features takes one input, got %zu; use --output-dir",
                                f.inputs.size());
  if (!f.out_dir.empty()) {
    if (!std::filesystem::is_directory(f.out_dir))
      return NotFoundError("--output-dir %s: not a directory", f.out_dir.c_str());
    // Two inputs with one stem would write one file twice.
    std::set<std::string> outs;
    for (const std::string& in : f.inputs)
      if (!outs.insert(OutputFor(f, in)).second)
        return InvalidArgumentError("%s: a second input would write %s", in.c_str(),
                                    OutputFor(f, in).c_str());
  }
  // A bad TERN_ISA is reported here instead of aborting inside the first kernel call.
  TERN_RETURN_IF_ERROR(kernels::SelectIsa().status());
  if (f.vae_path.empty()) {
    if (f.model_dir.empty()) return InvalidArgumentError("give --model DIR or --vae FILE");
    f.vae_path = (std::filesystem::path(f.model_dir) / kVaeFileName).string();
  }
  Timer load_timer;
  TERN_ASSIGN_OR_RETURN(*enc, vibeasr::Encoder::Load(f.vae_path));
  *load_ms = load_timer.ElapsedMs();
  if (!f.step.empty()) {  // refused once, before any input is encoded
    const std::vector<std::string> steps = (*enc)->StepNames(StepBranch(f));
    if (std::find(steps.begin(), steps.end(), f.step) == steps.end()) {
      std::string list;
      for (const std::string& s : steps) list += (list.empty() ? "" : ", ") + s;
      return InvalidArgumentError("--step %s: this encoder has no such step; its steps are: %s",
                                  f.step.c_str(), list.c_str());
    }
  }
  return Status::Ok();
}

// Every input; each failure (a missing file, silent audio) exits 1.
Status Run(Flags& f, vibeasr::Encoder& enc, double load_ms) {
  ThreadPool pool(f.threads);
  return ForEachInput(f.inputs, "tern-dev encode", [&](const std::string& input) {
    return EncodeOne(f, input, enc, load_ms, pool);
  });
}

}  // namespace

int CmdEncode(int argc, char** argv) {
  CLI::App app(
      "Run the VibeASR audio encoder and dump its features as raw float32 (frames x "
      "hidden, row-major): one file, or one per input with --output-dir.");
  app.name("tern-dev encode");
  Flags f;
  auto* model = app.add_option("--model", f.model_dir,
                               std::string("package directory (holds ") + kVaeFileName + ")");
  app.add_option("--vae", f.vae_path, "the encoder GGUF itself")->excludes(model);
  app.add_option("audio", f.inputs, "WAV, FLAC, OGG or MP3 files")->required();
  app.add_option("--dump-features", f.out_path, "output file (raw float32), one input");
  app.add_option("--output-dir", f.out_dir, "write DIR/<input stem>.f32 for each input");
  app.add_option("-t,--threads", f.threads, "threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  auto* step = app.add_option(
      "--step", f.step,
      "write this step's activation of one branch instead (s5.conv, s5.b1.ffn_res, head, "
      "conn.fc2, ...; float32, frames x channels)");
  app.add_option("--branch", f.branch, "the branch --step reads")
      ->check(CLI::IsMember({"acoustic", "semantic"}))
      ->needs(step)
      ->capture_default_str();
  app.add_flag("--no-normalize", f.no_normalize, "skip the -25 dBFS loudness normalization");
  app.add_flag("-q,--quiet", f.quiet, "no summary per input on stderr");
  std::unique_ptr<vibeasr::Encoder> enc;
  double load_ms = 0;
  return ParseCheckAndRun(
      app, argc, argv, [&] { return Check(f, &enc, &load_ms); },
      [&] { return Run(f, *enc, load_ms); });
}

}  // namespace tern::cli
