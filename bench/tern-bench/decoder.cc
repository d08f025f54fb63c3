// `tern-bench decoder`: the Qwen2 ternary decoder with the F16 and the int8 (W8A8) head.
// The checkpoint is $TERN_BENCH_LM, else a full-geometry synthetic one written once to
// $TMPDIR/tern-bench/ (like `tern-dev synth --geometry full`, seed 1; writing it needs the Qwen2
// vocabulary directory in $TERN_BENCH_VOCAB).
// Records per head: "decoder/prefill130/<head>" (a 130-row prompt shaped like the JFK one:
// 26 text tokens, 83 injected frames, 21 text tokens; median of the prefill time) and
// "decoder/decode/<head>" (median ms per decoded token over 32 steps after that prompt).
// wGB/s counts the weight bytes streamed per row (ternary projections + head). The int8 vs
// F16 head top-1 agreement and max logit error over the decode steps go to stderr.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/huge_buffer.h"
#include "base/timer.h"
#include "bench.h"
#include "gguf/gguf.h"
#include "models/vibeasr/decoder.h"
#include "models/vibeasr/synth.h"
#include "runtime/thread_pool.h"

namespace tern::cli::bench {
namespace {

std::string BenchLmPath() {
  if (const char* p = std::getenv("TERN_BENCH_LM"); p && *p) return p;
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / "tern-bench";
  return (dir / vibeasr::kSynthLmFileName).string();
}

Status EnsureLm(const std::string& path) {
  if (std::filesystem::exists(path)) return Status::Ok();
  const char* vocab = std::getenv("TERN_BENCH_VOCAB");
  if (!vocab || !*vocab) {
    return NotFoundError("%s does not exist; set TERN_BENCH_LM to an LM GGUF, or "
                         "TERN_BENCH_VOCAB to the Qwen2 vocabulary directory to write a "
                         "synthetic one", path.c_str());
  }
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::fprintf(stderr, "writing a full-geometry synthetic LM to %s ...\n", path.c_str());
  vibeasr::SynthOptions so;
  so.geometry = vibeasr::SynthGeometry::kFull;
  so.seed = 1;
  so.vocab_dir = vocab;
  return vibeasr::WriteSyntheticDecoder(so, path);
}

// Process CPU time: on a shared machine wall time measures the neighbours too; CPU time per
// token divided by the thread count approximates the uncontended wall time.
double CpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// DRAM read bandwidth of this machine right now with `pool`: a plain sum over 256 MB (more
// than any LLC), so decode times can be read against the bytes they must stream. In huge
// pages, as the packed weights are (base/huge_buffer.h).
double StreamGBs(ThreadPool& pool) {
  constexpr size_t kBytes = size_t{256} << 20;
  HugeBuffer mem = HugeBuffer::Allocate(kBytes);
  if (mem.size() != kBytes) return 0;
  auto* words = reinterpret_cast<uint64_t*>(mem.data());
  const int64_t n_words = static_cast<int64_t>(kBytes / 8);
  std::fill(words, words + n_words, uint64_t{1});
  std::atomic<uint64_t> sink{0};  // keeps the sums alive
  std::vector<double> ms;
  for (int rep = 0; rep < 4; ++rep) {
    Timer t;
    pool.ParallelFor(n_words, 4096, [&](int64_t b, int64_t e) {
      uint64_t s = 0;
      for (int64_t i = b; i < e; ++i) s += words[i];
      sink.fetch_add(s, std::memory_order_relaxed);
    });
    ms.push_back(t.ElapsedMs());
  }
  std::sort(ms.begin(), ms.end());
  return kBytes / (ms[1] * 1e6);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Bytes of weights one row streams: the packed ternary matrices and the head.
double WeightBytes(const vibeasr::Decoder& d) {
  const auto& c = d.config();
  const double ternary =
      static_cast<double>(c.layers) *
      (static_cast<double>(c.hidden) * (2 * c.hidden + 2 * c.kv_heads * c.head_dim) +
       3.0 * static_cast<double>(c.hidden) * c.ffn) / 4.0;
  const double head = static_cast<double>(c.vocab) * c.hidden *
                      (d.head_mode() == HeadPrecision::kInt8 ? 1.0 : 2.0);
  return ternary + head;
}

int RunDecoderSuite(const Options& o, Sink* sink) {
  if (o.table != nullptr && o.table->isa != kernels::Kernels().isa) {
    std::fprintf(stderr, "tern-bench decoder: the decoder runs on the process ISA (%s); "
                 "select another with TERN_ISA, not --isa\n",
                 kernels::IsaName(kernels::Kernels().isa));
    return 1;
  }
  const std::string path = BenchLmPath();
  if (Status st = EnsureLm(path); !st.ok()) {
    std::fprintf(stderr, "tern-bench decoder: %s\n", st.ToString().c_str());
    return 1;
  }
  auto file = gguf::File::Open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "tern-bench decoder: %s\n", file.status().ToString().c_str());
    return 1;
  }
  ThreadPool pool(o.threads);
  constexpr int kText0 = 26, kFrames = 83, kText1 = 21, kSteps = 32;
  std::vector<int32_t> forced;  // decode tokens, fixed by the first (F16) run
  std::vector<std::vector<float>> f16_logits;
  int agree = 0;
  double max_err = 0;
  for (HeadPrecision mode : {HeadPrecision::kF16, HeadPrecision::kInt8}) {
    const char* head = mode == HeadPrecision::kF16 ? "f16" : "int8";
    Timer load;
    auto dec = vibeasr::Decoder::Load(**file, mode, &pool);
    if (!dec.ok()) {
      std::fprintf(stderr, "tern-bench decoder: %s\n", dec.status().ToString().c_str());
      return 1;
    }
    const auto& c = (*dec)->config();
    std::fprintf(stderr, "%s head: loaded in %.0f ms (peak RSS %.0f MB)\n", head,
                 load.ElapsedMs(), PeakRssBytes() / 1e6);
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 0.3f);
    std::vector<std::vector<float>> frames(kFrames, std::vector<float>(c.hidden));
    for (auto& f : frames) {
      for (auto& x : f) x = nd(rng);
    }
    std::vector<vibeasr::DecoderInput> prompt;
    int32_t pos = 0;
    for (int i = 0; i < kText0; ++i) prompt.push_back({int32_t(rng() % 151643), nullptr, pos++});
    for (auto& f : frames) prompt.push_back({-1, f.data(), pos++});
    for (int i = 0; i < kText1; ++i) prompt.push_back({int32_t(rng() % 151643), nullptr, pos++});

    vibeasr::DecoderState st(**dec, static_cast<int64_t>(prompt.size()) + kSteps + 1);
    std::vector<double> prefill, decode, prefill_cpu, decode_cpu;
    std::vector<float> logits;
    const int reps = std::max(1, std::min(o.min_reps, 3));
    for (int r = 0; r <= reps; ++r) {  // rep 0 warms up
      st.Reset();
      Timer t;
      const double cpu0 = CpuMs();
      if (Status s = st.Prefill(prompt, pool, &logits); !s.ok()) {
        std::fprintf(stderr, "tern-bench decoder: %s\n", s.ToString().c_str());
        return 1;
      }
      if (r > 0) {
        prefill.push_back(t.ElapsedMs());
        prefill_cpu.push_back(CpuMs() - cpu0);
      }
    }
    int32_t p = pos;
    for (int s = 0; s < kSteps; ++s) {
      int32_t tok;
      if (mode == HeadPrecision::kF16) {
        tok = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) -
                                   logits.begin());
        forced.push_back(tok);
      } else {
        tok = forced[s];
      }
      Timer t;
      const double cpu0 = CpuMs();
      if (Status e = st.Step(tok, p++, pool, &logits); !e.ok()) {
        std::fprintf(stderr, "tern-bench decoder: %s\n", e.ToString().c_str());
        return 1;
      }
      decode.push_back(t.ElapsedMs());
      decode_cpu.push_back(CpuMs() - cpu0);
      if (mode == HeadPrecision::kF16) {
        f16_logits.push_back(logits);
      } else {
        const auto& ref = f16_logits[s];
        for (size_t i = 0; i < ref.size(); ++i) {
          max_err = std::max(max_err, static_cast<double>(std::fabs(ref[i] - logits[i])));
        }
        const auto top8 = std::max_element(logits.begin(), logits.end()) - logits.begin();
        const auto top16 = std::max_element(ref.begin(), ref.end()) - ref.begin();
        agree += top8 == top16;
        if (s == kSteps - 1) {
          std::fprintf(stderr, "int8 vs f16 head: top-1 agreement %d/%d, max |dlogit| %.4f\n",
                       agree, kSteps, max_err);
        }
      }
    }
    std::fprintf(stderr, "%s head, %d threads: prefill %.1f ms wall / %.1f ms CPU; decode "
                 "%.2f ms/token wall / %.2f ms CPU per token\n", head, o.threads,
                 Median(prefill), Median(prefill_cpu), Median(decode), Median(decode_cpu));
    const double wbytes = WeightBytes(**dec);
    const double gbs = StreamGBs(pool);
    if (gbs > 0)
      std::fprintf(stderr, "%s head: %.0f MB of weights per token; a plain %d-thread read runs at "
                   "%.1f GB/s now, i.e. %.1f ms for those bytes\n", head, wbytes / 1e6,
                   o.threads, gbs, wbytes / (gbs * 1e6));
    Record rp;
    rp.kernel = std::string("decoder/prefill130/") + head;
    rp.isa = kernels::IsaName(kernels::Kernels().isa);
    rp.k = c.hidden;
    rp.n_rows = c.layers;
    rp.n = static_cast<int64_t>(prompt.size());
    rp.threads = o.threads;
    rp.mode = "cold";
    rp.reps = reps;
    rp.median_us = Median(prefill) * 1e3;
    rp.weight_gbs = wbytes / (rp.median_us * 1e3);
    if (o.filter.empty() || rp.kernel.find(o.filter) != std::string::npos) sink->Emit(rp);
    Record rd = rp;
    rd.kernel = std::string("decoder/decode/") + head;
    rd.n = 1;
    rd.reps = kSteps;
    rd.median_us = Median(decode) * 1e3;
    rd.weight_gbs = wbytes / (rd.median_us * 1e3);
    if (o.filter.empty() || rd.kernel.find(o.filter) != std::string::npos) sink->Emit(rd);
  }
  return 0;
}

TERN_REGISTER_BENCH(kDecoderSuite, "decoder",
                    "Qwen2 ternary decoder: 130-row prefill and decode ms/token, F16 and int8 "
                    "heads ($TERN_BENCH_LM or a synthetic full LM)",
                    RunDecoderSuite);

}  // namespace
}  // namespace tern::cli::bench
