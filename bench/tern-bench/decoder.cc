// `tern-bench decoder`: the Qwen2 ternary decoder with the F16 and the int8 (W8A8) head.
// The checkpoint is $TERN_BENCH_LM, else a full-geometry synthetic one written once to
// $TMPDIR/tern-bench/ (like `tern-dev synth --geometry full`, seed 1; writing it needs the Qwen2
// vocabulary directory in $TERN_BENCH_VOCAB).
// Records per head: "decoder/prefill130/<head>" (a 130-row prompt shaped like the JFK one:
// 26 text tokens, 83 injected frames, 21 text tokens; median of the prefill time) and
// "decoder/decode/<head>" (median ms per decoded token over 32 steps after that prompt).
// wGB/s counts the weight bytes streamed per row (ternary projections + head). The int8 vs
// F16 head top-1 agreement and max logit error over the decode steps go to stderr.
// With --streams B,...: batched decode steps instead (RunStreams), "decoder/streams/int8".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

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
    return NotFoundError(
        "%s does not exist; set TERN_BENCH_LM to an LM GGUF, or "
        "TERN_BENCH_VOCAB to the Qwen2 vocabulary directory to write a "
        "synthetic one",
        path.c_str());
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

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Ternary weights of the projections (one int8 MAC each per row).
double TernaryParams(const vibeasr::DecoderConfig& c) {
  return static_cast<double>(c.layers) *
         (static_cast<double>(c.hidden) * (2 * c.hidden + 2 * c.kv_heads * c.head_dim) +
          3.0 * static_cast<double>(c.hidden) * c.ffn);
}

// Bytes of weights one row streams: the packed ternary matrices and the head.
double WeightBytes(const vibeasr::Decoder& d) {
  const auto& c = d.config();
  const double head =
      static_cast<double>(c.vocab) * c.hidden * (d.head_mode() == HeadPrecision::kInt8 ? 1.0 : 2.0);
  return TernaryParams(c) / 4.0 + head;
}

// `--streams B,...`: B independent sequences decoded together (vibeasr::DecoderBatch), int8
// head. One 130-row prompt is prefilled once and the state copied B times; each copy then
// decodes its own random tokens, so the sequences share nothing but the weights. One record
// per B: median ms per batched step over kSteps steps after two warm-up steps.
int RunStreams(const Options& o, const gguf::File& file, ThreadPool& pool, Sink* sink) {
  constexpr int kText0 = 26, kFrames = 83, kText1 = 21, kSteps = 16, kWarm = 2;
  Timer load;
  auto dec = vibeasr::Decoder::Load(file, HeadPrecision::kInt8, &pool);
  if (!dec.ok()) {
    std::fprintf(stderr, "tern-bench decoder: %s\n", dec.status().ToString().c_str());
    return 1;
  }
  const auto& c = (*dec)->config();
  std::fprintf(stderr, "int8 head: loaded in %.0f ms\n", load.ElapsedMs());
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
  vibeasr::DecoderState base(**dec, static_cast<int64_t>(prompt.size()) + kSteps + kWarm + 1);
  std::vector<float> logits;
  if (Status s = base.Prefill(prompt, pool, &logits); !s.ok()) {
    std::fprintf(stderr, "tern-bench decoder: %s\n", s.ToString().c_str());
    return 1;
  }
  const double wbytes = WeightBytes(**dec);
  for (int b : o.streams) {
    std::vector<std::unique_ptr<vibeasr::DecoderState>> states;
    std::vector<std::vector<float>> out(static_cast<size_t>(b));
    for (int i = 0; i < b; ++i) states.push_back(std::make_unique<vibeasr::DecoderState>(base));
    vibeasr::DecoderBatch batch(**dec, b);
    std::vector<double> ms;
    for (int step = 0; step < kWarm + kSteps; ++step) {
      std::vector<vibeasr::BatchStep> steps;
      for (int i = 0; i < b; ++i) {
        steps.push_back({states[i].get(), int32_t(rng() % 151643), pos + step, &out[i]});
      }
      Timer t;
      const double cpu0 = CpuMs();
      if (Status s = batch.Step(steps, pool); !s.ok()) {
        std::fprintf(stderr, "tern-bench decoder: %s\n", s.ToString().c_str());
        return 1;
      }
      const double wall = t.ElapsedMs(), cpu = (CpuMs() - cpu0) / o.threads;
      if (step >= kWarm) ms.push_back(o.clock == "cpu" ? cpu : wall);
    }
    Record r;
    r.kernel = "decoder/streams/int8";
    r.isa = kernels::IsaName(kernels::Kernels().isa);
    r.k = c.hidden;
    r.n_rows = c.layers;
    r.n = b;
    r.streams = b;
    r.threads = o.threads;
    r.mode = "cold";
    r.clock = o.clock;
    r.reps = kSteps;
    r.median_us = Median(ms) * 1e3;
    r.weight_gbs = wbytes / (r.median_us * 1e3);
    r.gops = 2.0 * b * (TernaryParams(c) + static_cast<double>(c.vocab) * c.hidden) /
             (r.median_us * 1e3);
    r.ratio_to = RatioTo::kReadBw;
    std::fprintf(stderr, "streams %d: %.2f ms/step, %.1f tokens/s\n", b, Median(ms),
                 b * 1e3 / Median(ms));
    sink->Emit(r);
  }
  return 0;
}

int RunDecoderSuite(const Options& o, Sink* sink) {
  if (o.table != nullptr && o.table->isa != kernels::Kernels().isa) {
    std::fprintf(stderr,
                 "tern-bench decoder: the decoder runs on the process ISA (%s); "
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
  if (!o.streams.empty()) return RunStreams(o, **file, pool, sink);
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
    std::fprintf(stderr, "%s head: loaded in %.0f ms (peak RSS %.0f MB)\n", head, load.ElapsedMs(),
                 PeakRssBytes() / 1e6);
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
        tok = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
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
    std::fprintf(stderr,
                 "%s head, %d threads: prefill %.1f ms wall / %.1f ms CPU; decode "
                 "%.2f ms/token wall / %.2f ms CPU per token\n",
                 head, o.threads, Median(prefill), Median(prefill_cpu), Median(decode),
                 Median(decode_cpu));
    const double wbytes = WeightBytes(**dec);
    const double gbs = o.limits != nullptr ? o.limits->ReadGbs(o.threads) : 0;
    if (gbs > 0)
      std::fprintf(stderr,
                   "%s head: %.0f MB of weights per token; the %d-thread streaming read "
                   "runs at %.1f GB/s, i.e. %.1f ms for those bytes\n",
                   head, wbytes / 1e6, o.threads, gbs, wbytes / (gbs * 1e6));
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
    // Prefill is compute-bound: every row multiplies every ternary weight, the head runs once.
    rp.gops =
        2.0 *
        (TernaryParams(c) * static_cast<double>(rp.n) + static_cast<double>(c.vocab) * c.hidden) /
        (rp.median_us * 1e3);
    rp.ratio_to = RatioTo::kInt8Peak;
    if (o.filter.empty() || rp.kernel.find(o.filter) != std::string::npos) sink->Emit(rp);
    Record rd = rp;
    rd.kernel = std::string("decoder/decode/") + head;
    rd.n = 1;
    rd.reps = kSteps;
    rd.median_us = Median(decode) * 1e3;
    rd.weight_gbs = wbytes / (rd.median_us * 1e3);
    rd.gops =
        2.0 * (TernaryParams(c) + static_cast<double>(c.vocab) * c.hidden) / (rd.median_us * 1e3);
    rd.ratio_to = RatioTo::kReadBw;
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
