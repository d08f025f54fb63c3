// tern-bench e2e: end-to-end timings (encoder, prefill, decode ms/token, RTF, peak RSS)
// through the public API, the same figures as `tern transcribe --metrics`.
//
// Decoding is forced to run exactly --tokens steps (end-of-turn is ignored), so synthetic
// checkpoints, which stop at random, measure real work. Without --audio, a deterministic
// speech-like signal of --seconds is used (a chirp with noise, normalized like real audio).
// The runs share one Session, as the files of one `tern transcribe` call do, so every run
// after the first reuses the prompt's fixed head; --fresh-session measures first files.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench.h"
#include "kernels/kernels.h"
#include "machine_limits.h"
#include "tern/tern.h"

namespace tern::cli {
namespace {

Audio SyntheticAudio(double seconds) {
  Audio a;
  a.name = "synthetic";
  a.source_rate = 24000;
  a.source_channels = 1;
  const size_t n = static_cast<size_t>(seconds * 24000.0);
  a.samples.resize(n);
  std::mt19937 rng(1234);
  std::normal_distribution<float> noise(0.0f, 0.02f);
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / 24000.0;
    const double f = 150.0 + 100.0 * std::sin(2.0 * M_PI * 0.7 * t);
    a.samples[i] = static_cast<float>(0.1 * std::sin(2.0 * M_PI * f * t)) + noise(rng);
  }
  return a;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

int BenchE2E(int argc, char** argv) {
  ModelOptions mo;
  std::string audio_path, head = "f16";
  double seconds = 3.5;
  int threads = 0, tokens = 32, repeats = 3, busy = 0;
  bool json = false, fresh = false;
  CLI::App app{"tern-bench e2e: end-to-end timings", "tern-bench e2e"};
  app.add_option("--model", mo.model_dir, "model directory");
  app.add_option("--vae", mo.vae_path, "encoder GGUF");
  app.add_option("--lm", mo.lm_path, "decoder GGUF");
  app.add_option("--head", head, "f16 or int8")->capture_default_str();
  app.add_option("--audio", audio_path, "audio file (default: synthetic audio of --seconds)");
  app.add_option("--seconds", seconds, "length of the synthetic audio")->capture_default_str();
  app.add_option("-t,--threads", threads, "threads (default: all CPUs)");
  app.add_option("--tokens", tokens, "decode steps to force")->capture_default_str();
  app.add_option("--repeats", repeats, "runs after one warm-up; medians are reported")
      ->capture_default_str();
  app.add_flag("--json", json, "one JSON record instead of text");
  app.add_option("--busy", busy, "run N competing busy threads meanwhile (a shared machine)")
      ->check(CLI::Range(0, 256));
  app.add_flag("--fresh-session", fresh,
               "a new Session per run: nothing carries over (the prompt is prefilled whole)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "tern-bench e2e: %s\n", s.ToString().c_str());
    return s.code() == ErrorCode::kInvalidArgument ? 2 : 1;
  };
  Result<HeadPrecision> precision = HeadPrecisionFromName(head);
  if (!precision.ok()) return fail(precision.status());
  mo.head = *precision;
  if (threads < 0 || threads > 1024)
    return fail(InvalidArgumentError("--threads must be in [1, 1024]"));
  if (tokens < 1 || repeats < 1 || !(seconds > 0))
    return fail(InvalidArgumentError("--tokens, --repeats and --seconds must be positive"));

  Result<kernels::Isa> isa = kernels::SelectIsa();
  if (!isa.ok()) return fail(isa.status());
  // The machine's limits first, in the same run, before any competing threads start.
  const bench::MachineLimits limits = bench::MeasureLimits(*isa);
  if (!json) bench::PrintLimits(stdout, limits);
  bench::BusyThreads competing(busy);
  Result<std::shared_ptr<const Model>> model = Model::Load(mo);
  if (!model.ok()) return fail(model.status());
  Audio audio;
  if (!audio_path.empty()) {
    Result<Audio> a = LoadAudio(audio_path);
    if (!a.ok()) return fail(a.status());
    audio = std::move(*a);
  } else {
    audio = SyntheticAudio(seconds);
  }
  auto session = std::make_unique<Session>(*model, threads);
  TranscribeOptions opts;
  opts.decoding.max_tokens = tokens;
  opts.decoding.ignore_eos = true;
  opts.decoding.repetition_guard = false;

  std::vector<double> enc, pre, dec, wall, rtf;
  Transcript last;
  for (int r = 0; r <= repeats; ++r) {  // run 0 is the warm-up
    if (fresh && r > 0) session = std::make_unique<Session>(*model, threads);
    Result<Transcript> t = session->Transcribe(audio, opts);
    if (!t.ok()) return fail(t.status());
    if (r == 0) continue;
    enc.push_back(t->metrics.encoder_ms);
    pre.push_back(t->metrics.prefill_ms);
    dec.push_back(t->metrics.decode_ms_per_token());
    wall.push_back(t->metrics.wall_ms);
    rtf.push_back(t->metrics.rtf);
    last = std::move(*t);
  }
  const double rss_mb = static_cast<double>(last.metrics.peak_rss_bytes) / 1e6;
  const ModelInfo& info = (*model)->info();
  // Decode against the bytes one token streams (packed ternary projections and the head) at
  // the read bandwidth of the threads used: 1 = at the bandwidth, less = slower than it.
  const double head_dim = info.heads > 0 ? static_cast<double>(info.hidden) / info.heads : 0;
  const double weight_bytes =
      static_cast<double>(info.layers) *
          (static_cast<double>(info.hidden) * (2.0 * info.hidden + 2.0 * info.kv_heads * head_dim) +
           3.0 * static_cast<double>(info.hidden) * info.ffn) /
          4.0 +
      static_cast<double>(info.vocab) * info.hidden * (info.head == "int8" ? 1.0 : 2.0);
  const double read_gbs = limits.ReadGbs(last.threads);
  const double decode_ratio =
      Median(dec) > 0 && read_gbs > 0 ? weight_bytes / (Median(dec) * 1e6) / read_gbs : 0;
  if (json) {
    std::printf(
        "{\"bench\":\"e2e\",\"audio_s\":%.3f,\"frames\":%lld,\"prompt_tokens\":%lld,"
        "\"prompt_reused_tokens\":%lld,"
        "\"decode_tokens\":%lld,\"threads\":%d,\"isa\":\"%s\",\"head\":\"%s\","
        "\"load_ms\":%.1f,\"encoder_ms\":%.1f,\"prefill_ms\":%.1f,\"decode_ms_per_token\":%.2f,"
        "\"wall_ms\":%.1f,\"rtf\":%.4f,\"peak_rss_mb\":%.1f,\"repeats\":%d,"
        "\"decode_weight_gbs\":%.2f,\"read_gbs\":%.2f,\"decode_ratio_read_bw\":%.3f,"
        "\"int8_gops_1t\":%.1f,\"int8_gops_all\":%.1f}\n",
        last.duration_s, static_cast<long long>(last.frames),
        static_cast<long long>(last.metrics.prompt_tokens),
        static_cast<long long>(last.metrics.prompt_reused_tokens),
        static_cast<long long>(last.metrics.decode_tokens), last.threads, last.isa.c_str(),
        info.head.c_str(), info.load_ms, Median(enc), Median(pre), Median(dec), Median(wall),
        Median(rtf), rss_mb, repeats, weight_bytes / (Median(dec) * 1e6), read_gbs, decode_ratio,
        limits.int8_gops_1t, limits.int8_gops_all);
  } else {
    std::printf(
        "e2e: audio %.2f s, %lld frames, prompt %lld tokens (%lld reused), %lld decode "
        "steps, %d threads, isa %s, head %s\n",
        last.duration_s, static_cast<long long>(last.frames),
        static_cast<long long>(last.metrics.prompt_tokens),
        static_cast<long long>(last.metrics.prompt_reused_tokens),
        static_cast<long long>(last.metrics.decode_tokens), last.threads, last.isa.c_str(),
        info.head.c_str());
    std::printf(
        "  load %.1f ms | encoder %.1f ms | prefill %.1f ms | decode %.2f ms/token | "
        "wall %.1f ms | RTF %.4f | peak RSS %.1f MB   (medians of %d)\n",
        info.load_ms, Median(enc), Median(pre), Median(dec), Median(wall), Median(rtf), rss_mb,
        repeats);
    std::printf(
        "  decode streams %.0f MB of weights per token: %.2f GB/s = %.2f of the %.1f GB/s "
        "read bandwidth at %d threads\n",
        weight_bytes / 1e6, weight_bytes / (Median(dec) * 1e6), decode_ratio, read_gbs,
        last.threads);
  }
  return 0;
}

}  // namespace

TERN_REGISTER_BENCH_MAIN(kRegisterE2E, "e2e",
                         "end to end through the public API (--model DIR [--audio F | --seconds S] "
                         "-t N [--tokens N] [--json])",
                         BenchE2E);

namespace {}  // namespace
}  // namespace tern::cli
