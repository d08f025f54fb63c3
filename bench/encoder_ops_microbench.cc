// Micro-benchmarks of the encoder's I8_S ops at the shapes a 3.5 s clip gives them (one
// thread, the ISA the process picks: TERN_ISA or the best), on random weights:
//   bin/encoder_ops_microbench [--benchmark_filter=...] [--benchmark_repetitions=N]
// Stage s of the full geometry has C = 32 * 2^s channels and 84000 / (1, 2, 4, 16, 80, 400,
// 3200)[s] frames; its FFN is 4C wide, its hidden sums recomputed (store 0, as the encoder runs
// stages 0-2) or stored (store 1, stage 3 and wider), its matrices packed for signed or (u8 1,
// as the encoder packs them) unsigned activations. Fill 0/1/2: RMSNorm, add_scaled,
// depthwise conv. Conv s: stage s's downsampling conv, on the frames before it, packed as
// the FFN's (u8). "GOPS" counts the multiply-adds the op's result needs (2 per MAC), not
// the ones it spends: the recomputing FFN does one W1 product twice, the convs skip their
// zero taps.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "ops/i8s_elementwise.h"
#include "ops/i8s_matmul.h"
#include "ops/i8s_tensor.h"
#include "runtime/thread_pool.h"

namespace tern::ops {
namespace {

constexpr int64_t kSamples = 84000;                        // 3.5 s at 24 kHz
constexpr int64_t kHop[7] = {1, 2, 4, 16, 80, 400, 3200};  // samples per frame, stages 0-6

int64_t Channels(int64_t stage) { return int64_t{32} << stage; }
int64_t Frames(int64_t stage) { return kSamples / kHop[stage]; }

std::vector<int8_t> RandomI8(std::mt19937& rng, int64_t n) {
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

std::vector<float> RandomF(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

void SetGops(benchmark::State& st, double macs) {
  st.counters["GOPS"] = benchmark::Counter(
      2.0 * macs, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// args: stage (0-6), whether the hidden activations are stored (1) or recomputed (0), the
// matrices packed for signed (0) or unsigned (1, as the encoder packs them) activations.
void BmFfn(benchmark::State& st) {
  const int64_t c = Channels(st.range(0)), h = 4 * c, t = Frames(st.range(0));
  const size_t budget = st.range(1) != 0 ? SIZE_MAX : 0;
  const bool u8 = st.range(2) != 0;
  std::mt19937 rng(1);
  const auto w1 = RandomI8(rng, c * h), w2 = RandomI8(rng, h * c);
  auto x = RandomI8(rng, t * c);
  const auto b1 = RandomF(rng, h, -0.1f, 0.1f), b2 = RandomF(rng, c, -0.1f, 0.1f);
  const I8sMatrix m1 = PackI8sMatrix(w1.data(), c, h, 0.002f, u8);
  const I8sMatrix m2 = PackI8sMatrix(w2.data(), h, c, 0.002f, u8);
  ThreadPool pool(1);
  const MlpScratch need = MlpScratchBytes(t, c, h, 1, budget);
  std::vector<uint8_t> scratch(need.bytes);
  std::vector<int8_t> out(x.size());
  I8sTensor in{x.data(), c, t, 0.01f}, y{out.data()};
  for (auto _ : st) {
    MlpReluI8s(pool, m1, b1.data(), m2, b2.data(), in, budget, scratch.data(), scratch.size(), &y);
    benchmark::DoNotOptimize(out.data());
  }
  SetGops(st, 2.0 * static_cast<double>(t) * c * h);
}

enum class Fill { kRmsNorm, kAddScaled, kDepthwise };

// args: stage (0-2: each holds 2.7M values; the depthwise mixer also 3-5), which fill.
void BmFill(benchmark::State& st) {
  const int64_t c = Channels(st.range(0)), t = Frames(st.range(0));
  const auto which = static_cast<Fill>(st.range(1));
  std::mt19937 rng(2);
  auto a = RandomI8(rng, t * c), b = RandomI8(rng, t * c);
  const auto gamma = RandomF(rng, c, 0.5f, 1.5f);
  const auto dw_w = RandomI8(rng, 8 * c);
  const I8sDepthwise dw = PackDepthwise(dw_w.data(), 8, c, 0.01f);
  ThreadPool pool(1);
  std::vector<int8_t> out(a.size());
  std::vector<float> rows(static_cast<size_t>(t)), floats(a.size());
  I8sTensor x{a.data(), c, t, 0.01f}, x2{b.data(), c, t, 0.02f}, y{out.data()};
  for (auto _ : st) {
    switch (which) {  // the scratch the encoder passes: none, none, a float per value
      case Fill::kRmsNorm:
        RmsNormScaled(pool, x, gamma.data(), 1e-5f, rows.data(), &y, nullptr);
        break;
      case Fill::kAddScaled:
        AddScaled(pool, x, x2, gamma.data(), &y, nullptr);
        break;
      case Fill::kDepthwise:
        DepthwiseConvAdd(pool, dw, gamma.data(), x, &y, floats.data());
        break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(st.iterations() * t * c);
}

// args: stage (0-6), u8 (as BmFfn's). Stage s's downsampling conv (spec 3.1): stored taps,
// real taps (the stored kernel's leading taps are zero), stride, input channels, input
// samples per frame.
void BmConv(benchmark::State& st) {
  struct Geo {
    int64_t k, real, stride, ic, hop;
  };
  constexpr Geo kGeo[7] = {{8, 7, 1, 1, 1},       {4, 4, 2, 32, 1},     {4, 4, 2, 64, 2},
                           {8, 8, 4, 128, 4},     {16, 10, 5, 256, 16}, {16, 10, 5, 512, 80},
                           {16, 16, 8, 1024, 400}};
  const Geo& g = kGeo[st.range(0)];
  const int64_t ic = g.ic, oc = st.range(0) == 0 ? 32 : 2 * ic, k = g.k, stride = g.stride;
  const int64_t iw = kSamples / g.hop;
  std::mt19937 rng(3);
  auto w = RandomI8(rng, k * ic * oc);
  for (size_t i = 0; i < w.size(); ++i)
    if (static_cast<int64_t>(i) % k < k - g.real) w[i] = 0;  // stored with leading zero taps
  auto x = RandomI8(rng, iw * ic);
  const auto bias = RandomF(rng, oc, -0.1f, 0.1f);
  const I8sConv1d conv =
      PackConv1d(w.data(), k, ic, oc, 0.002f, stride, k - stride, 0, st.range(1) != 0);
  const Conv1dScratch sb = Conv1dScratchBytes(conv, iw);
  ThreadPool pool(1);
  std::vector<float> ys(sb.y_bytes / sizeof(float));
  std::vector<int8_t> cols(sb.col_bytes + 1), out(static_cast<size_t>(iw / stride * oc));
  I8sTensor in{x.data(), ic, iw, 0.01f}, y{out.data()};
  for (auto _ : st) {
    Conv1dAdd(pool, conv, bias.data(), in, ys.data(), cols.data(), &y);
    benchmark::DoNotOptimize(out.data());
  }
  SetGops(st, static_cast<double>(iw / stride) * g.real * ic * oc);
}

enum class Ep { kStore, kBounds, kRequant };

// args: stage (0-3), product (0: FC1, K = C and N = 4C; 1: FC2, K = 4C and N = C), epilogue
// (0 store int32, 1 fold per-row bounds, 2 requantize with ReLU), kernel (0 gemm_i8_i8,
// 1 gemm_u8_i8 as the FFN calls it): one kernel call per token block of 32, as the FFN
// makes them, so the pieces of BmFfn can be told apart.
void BmGemm(benchmark::State& st) {
  const kernels::KernelTable& kt = kernels::Kernels();
  const Ep ep_kind = static_cast<Ep>(st.range(2));
  if (ep_kind != Ep::kStore && kt.gemm_i8_i8_ep == nullptr) {
    st.SkipWithError("no fused epilogue in this ISA");
    return;
  }
  const int64_t c = Channels(st.range(0)), t = Frames(st.range(0));
  const int64_t k = st.range(1) == 0 ? c : 4 * c, n = st.range(1) == 0 ? 4 * c : c;
  constexpr int64_t kBlock = 32;
  std::mt19937 rng(4);
  const auto w = RandomI8(rng, k * n), x = RandomI8(rng, t * k);
  const auto bias = RandomF(rng, n, -0.1f, 0.1f);
  const bool u8 = st.range(3) != 0;
  const I8sMatrix m = PackI8sMatrix(w.data(), k, n, 0.002f, u8);
  if (u8 && !m.u8) {
    st.SkipWithError("no gemm_u8_i8 in this ISA");
    return;
  }
  // As the FFN: FC1's input flipped in the kernel, FC2's hidden (>= 0) read as it is.
  const int32_t* corr = st.range(1) == 0 ? m.corr.data() : nullptr;
  std::vector<int32_t> acc(static_cast<size_t>(kBlock * n)), mn(n, INT32_MAX), mx(n, INT32_MIN);
  std::vector<int8_t> q(static_cast<size_t>(kBlock * n));
  kernels::I8Epilogue ep;
  if (ep_kind == Ep::kBounds) {
    ep.mn = mn.data();
    ep.mx = mx.data();
  } else {
    ep.q = q.data();
    ep.ldq = n;
    ep.c = 1e-4f;
    ep.inv = 0.5f;
    ep.bias = bias.data();
    ep.relu = true;
  }
  for (auto _ : st) {
    for (int64_t t0 = 0; t0 < t; t0 += kBlock) {
      const int64_t nt = std::min(kBlock, t - t0);
      if (u8 && ep_kind == Ep::kStore)
        kt.gemm_u8_i8(m.packed.data(), k, n, 0, n, x.data() + t0 * k, k, nt, corr, acc.data(), n);
      else if (u8)
        kt.gemm_u8_i8_ep(m.packed.data(), k, n, 0, n, x.data() + t0 * k, k, nt, corr, ep);
      else if (ep_kind == Ep::kStore)
        kt.gemm_i8_i8(m.packed.data(), k, n, 0, n, x.data() + t0 * k, k, nt, acc.data(), n);
      else
        kt.gemm_i8_i8_ep(m.packed.data(), k, n, 0, n, x.data() + t0 * k, k, nt, ep);
    }
    benchmark::DoNotOptimize(acc.data());
    benchmark::DoNotOptimize(q.data());
  }
  SetGops(st, static_cast<double>(t) * k * n);
}

BENCHMARK(BmFfn)
    ->ArgNames({"stage", "store", "u8"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BmFfn)
    ->ArgNames({"stage", "store", "u8"})
    ->ArgsProduct({{4, 5, 6}, {1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BmFill)
    ->ArgNames({"stage", "fill"})
    ->ArgsProduct({{0, 1, 2}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BmFill)
    ->ArgNames({"stage", "fill"})
    ->ArgsProduct({{3, 4, 5}, {2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BmGemm)
    ->ArgNames({"stage", "fc", "ep", "u8"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}, {0, 1, 2}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BmConv)
    ->ArgNames({"stage", "u8"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace tern::ops

BENCHMARK_MAIN();
