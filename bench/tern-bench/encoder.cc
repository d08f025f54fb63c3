// `tern-bench encoder`: the whole audio encoder (both branches, summed) on 3.5 s and 20 s of
// synthetic speech-like audio. The checkpoint is $TERN_BENCH_VAE, else a full-geometry
// synthetic one written once to $TMPDIR/tern-bench/ (tern-dev synth --geometry full, seed 1).
// One record per length: median time of Encoder::Run (wall, or with --clock cpu the process
// CPU time / threads) with its activation buffers kept between runs, as an engine Session
// keeps them; the warm-up run, which allocates and first touches them, is reported apart.
// GOPS counts 2 int8 ops per multiply-add of every conv, depthwise and linear layer of both
// branches. Branch times, the per-stage split of the last run and the peak RSS go to stderr.
// Lengths longer than 10 s run min(--min-reps, 3) times (one run is seconds long).
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/timer.h"
#include "bench.h"
#include "models/vibeasr/encoder.h"
#include "models/vibeasr/synth.h"
#include "ops/i8s_tensor.h"
#include "runtime/thread_pool.h"

namespace tern::cli::bench {
namespace {

std::string BenchVaePath() {
  if (const char* p = std::getenv("TERN_BENCH_VAE"); p && *p) return p;
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / "tern-bench";
  return (dir / vibeasr::kSynthVaeFileName).string();
}

// int8 multiply-adds of one branch for n samples, walking the geometry as the encoder does.
double BranchMacs(const vibeasr::VaeGeometry& g, int64_t n) {
  double macs = 0;
  int64_t t = n;
  for (int s = 0; s < g.stages(); ++s) {
    const int64_t k = g.kernels[s], st = g.strides[s];
    t = ops::Conv1dOutLen(t, k, st, k - st, 0);
    const double c = static_cast<double>(g.channels[s]);
    macs += static_cast<double>(t) * c * static_cast<double>(k * g.in_channels(s));
    macs += static_cast<double>(g.depths[s]) * static_cast<double>(t) * c *
            (static_cast<double>(g.mixer_kernel) + 2.0 * static_cast<double>(g.ffn[s]));
  }
  const double tt = static_cast<double>(t);
  macs += tt * static_cast<double>(g.latent * g.head_kernel * g.channels.back());
  macs += tt * static_cast<double>(g.hidden) * static_cast<double>(g.latent + g.hidden);
  return macs;
}

// CPU time of the whole process: on a shared machine the wall time of a 1-thread run also
// counts the time other processes held the core; this does not.
double ProcessCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

std::vector<float> SpeechLike(size_t n) {
  std::vector<float> a(n);
  uint32_t r = 12345;
  for (size_t i = 0; i < n; ++i) {
    r = r * 1664525u + 1013904223u;
    const float noise = (static_cast<float>(r >> 8) / 16777216.0f - 0.5f) * 0.1f;
    const float t = static_cast<float>(i) / 24000.0f;
    const float env = 0.5f + 0.5f * std::sin(2 * 3.14159265f * 3 * t);
    a[i] = env * (0.3f * std::sin(2 * 3.14159265f * 180 * t) +
                  0.15f * std::sin(2 * 3.14159265f * 1200 * t)) +
           noise;
  }
  return a;
}

int RunEncoderSuite(const Options& o, Sink* sink) {
  if (o.table != nullptr && o.table->isa != kernels::Kernels().isa) {
    std::fprintf(stderr,
                 "tern-bench encoder: the encoder runs on the process ISA (%s); "
                 "select another with TERN_ISA, not --isa\n",
                 kernels::IsaName(kernels::Kernels().isa));
    return 1;
  }
  const std::string path = BenchVaePath();
  if (!std::filesystem::exists(path)) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::fprintf(stderr, "writing a full-geometry synthetic encoder to %s ...\n", path.c_str());
    vibeasr::SynthOptions so;
    so.geometry = vibeasr::SynthGeometry::kFull;
    so.seed = 1;
    const Status st = vibeasr::WriteSyntheticEncoder(so, path);
    if (!st.ok()) {
      std::fprintf(stderr, "tern-bench encoder: %s\n", st.ToString().c_str());
      return 1;
    }
  }
  const size_t rss_before_load = PeakRssBytes();
  Timer load_timer;
  auto enc = vibeasr::Encoder::Load(path);
  if (!enc.ok()) {
    std::fprintf(stderr, "tern-bench encoder: %s\n", enc.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr, "loaded %s in %.0f ms (peak RSS %.0f -> %.0f MB)\n", path.c_str(),
               load_timer.ElapsedMs(), rss_before_load / 1e6, PeakRssBytes() / 1e6);
  ThreadPool pool(o.threads);
  for (double seconds : {3.5, 20.0}) {
    char id[32];
    std::snprintf(id, sizeof id, "encoder/%.1fs", seconds);
    if (!o.filter.empty() && std::string(id).find(o.filter) == std::string::npos) continue;
    const size_t n = static_cast<size_t>(seconds * 24000);
    const std::vector<float> audio = SpeechLike(n);
    const int reps = seconds > 10 ? std::min(o.min_reps, 3) : o.min_reps;
    std::vector<double> ms, cpu_ms;
    vibeasr::EncoderTimings last;
    vibeasr::Encoder::Scratch scratch;
    double first_ms = 0;
    for (int i = 0; i <= reps; ++i) {  // run 0 is the warm-up
      vibeasr::EncoderTimings t;
      Timer timer;
      const double cpu0 = ProcessCpuMs();
      auto f = (*enc)->Run(audio.data(), n, pool, &t, &scratch);
      const double el = timer.ElapsedMs();
      if (i == 0) first_ms = el;
      if (i > 0) cpu_ms.push_back(ProcessCpuMs() - cpu0);
      if (!f.ok()) {
        std::fprintf(stderr, "tern-bench encoder: %s\n", f.status().ToString().c_str());
        return 1;
      }
      if (i > 0) ms.push_back(el);
      last = t;
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu_ms.begin(), cpu_ms.end());
    // --clock cpu: process CPU time / threads (the shared machine is oversubscribed).
    const double cpu_med = cpu_ms[cpu_ms.size() / 2];
    const double med = o.clock == "cpu" ? cpu_med / o.threads : ms[ms.size() / 2];
    const double macs =
        BranchMacs((*enc)->geometry(vibeasr::Branch::kAcoustic), static_cast<int64_t>(n)) +
        BranchMacs((*enc)->geometry(vibeasr::Branch::kSemantic), static_cast<int64_t>(n));
    Record r;
    r.kernel = id;
    r.isa = kernels::IsaName(kernels::Kernels().isa);
    r.k = static_cast<int64_t>(n);
    r.n_rows = (*enc)->hidden();
    r.n = vibeasr::Encoder::FramesFor(n);
    r.threads = o.threads;
    r.mode = "hot";
    r.clock = o.clock;
    r.reps = reps;
    r.median_us = med * 1e3;
    r.gops = 2 * macs / (med * 1e6);
    r.ratio_to = RatioTo::kInt8Floor;  // ms / (MACs / int8 peak)
    sink->Emit(r);
    std::fprintf(stderr,
                 "  %s: median wall %.1f ms, median process CPU %.1f ms (all threads); first "
                 "run (fresh buffers) %.1f ms; last run: acoustic %.1f ms, semantic %.1f ms; "
                 "peak RSS %.0f MB\n",
                 id, ms[ms.size() / 2], cpu_med, first_ms, last.acoustic_ms, last.semantic_ms,
                 PeakRssBytes() / 1e6);
    std::string split;
    for (const auto& [name, v] : last.stages) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " %s %.0f", name.c_str(), v);
      split += buf;
    }
    std::fprintf(stderr, "   stages (ms):%s\n", split.c_str());
  }
  return 0;
}

}  // namespace

TERN_REGISTER_BENCH(kEncoderSuite, "encoder",
                    "the audio encoder, both branches, 3.5 s and 20 s "
                    "(checkpoint: $TERN_BENCH_VAE or a full synthetic one)",
                    RunEncoderSuite);

}  // namespace tern::cli::bench
