// Micro-benchmarks of single kernel-table entries, one per available ISA (hot caches, one
// thread): bin/kernels_microbench [--benchmark_filter=...]. Items/s are values per second;
// for the GEMMs the "GOPS" counter is 2*K*N*n / time.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/kernels.h"

namespace tern::kernels {
namespace {

std::vector<float> Floats(size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& f : v) f = nd(rng);
  return v;
}

void BmQuantize(benchmark::State& st, const KernelTable* t) {
  const int64_t k = st.range(0), rows = 8;
  const std::vector<float> x = Floats(static_cast<size_t>(rows * k));
  std::vector<int8_t> q(x.size());
  std::vector<float> s(rows);
  std::vector<int32_t> sums(rows);
  for (auto _ : st) {
    t->quantize_rows_i8(x.data(), rows, k, k, q.data(), k, s.data(), sums.data());
    benchmark::DoNotOptimize(q.data());
  }
  st.SetItemsProcessed(st.iterations() * rows * k);
}

void BmF32ToF16(benchmark::State& st, const KernelTable* t) {
  const std::vector<float> x = Floats(static_cast<size_t>(st.range(0)));
  std::vector<uint16_t> h(x.size());
  for (auto _ : st) {
    t->f32_to_f16(x.data(), st.range(0), h.data());
    benchmark::DoNotOptimize(h.data());
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}

void BmRequant(benchmark::State& st, const KernelTable* t) {
  const std::vector<float> x = Floats(static_cast<size_t>(st.range(0)));
  std::vector<int8_t> q(x.size());
  for (auto _ : st) {
    const float m = t->absmax_f32(x.data(), st.range(0));
    t->requant_f32_i8(x.data(), st.range(0), 127.0f / m, Round::kHalfAway, q.data());
    benchmark::DoNotOptimize(q.data());
  }
  st.SetItemsProcessed(st.iterations() * st.range(0));
}

// I2_S GEMM, shapes from the decoder: args K, N, n.
void BmI2s(benchmark::State& st, const KernelTable* t) {
  const int64_t k = st.range(0), nr = st.range(1), n = st.range(2);
  std::mt19937 rng(2);
  std::vector<uint8_t> canon(static_cast<size_t>(nr * k / 4));
  for (auto& b : canon) b = static_cast<uint8_t>(rng() % 3 * 0x55);  // all four codes equal
  std::vector<uint8_t> w(t->i2s_packed_bytes(k, nr));
  t->pack_i2s(canon.data(), k, nr, w.data());
  const std::vector<float> x = Floats(static_cast<size_t>(n * k));
  std::vector<int8_t> q(x.size());
  std::vector<float> s(static_cast<size_t>(n));
  std::vector<int32_t> sums(static_cast<size_t>(n));
  t->quantize_rows_i8(x.data(), n, k, k, q.data(), k, s.data(), sums.data());
  std::vector<float> out(static_cast<size_t>(n * nr));
  for (auto _ : st) {
    t->gemm_i2s_i8(w.data(), k, nr, 0, nr, 1.0f, q.data(), k, s.data(), sums.data(), n, out.data(),
                   nr);
    benchmark::DoNotOptimize(out.data());
  }
  st.counters["GOPS"] = benchmark::Counter(
      2.0 * k * nr * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BmI8(benchmark::State& st, const KernelTable* t) {
  const int64_t k = st.range(0), nr = st.range(1), n = st.range(2);
  std::mt19937 rng(3);
  std::vector<int8_t> canon(static_cast<size_t>(nr * k)), x(static_cast<size_t>(n * k));
  for (auto& v : canon) v = static_cast<int8_t>(rng() % 255 - 127);
  for (auto& v : x) v = static_cast<int8_t>(rng() % 255 - 127);
  std::vector<uint8_t> w(t->i8_packed_bytes(k, nr));
  t->pack_i8(canon.data(), k, nr, w.data());
  std::vector<int32_t> out(static_cast<size_t>(n * nr));
  for (auto _ : st) {
    t->gemm_i8_i8(w.data(), k, nr, 0, nr, x.data(), k, n, out.data(), nr);
    benchmark::DoNotOptimize(out.data());
  }
  st.counters["GOPS"] = benchmark::Counter(
      2.0 * k * nr * n, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// Attention's value pass for one KV head: `heads` query heads' probabilities over `rows`
// cached F16 value rows of head_dim 128 (the published geometry: 6 heads per KV head).
void BmWeightedRows(benchmark::State& st, const KernelTable* t) {
  const int64_t heads = st.range(0), rows = st.range(1), hd = 128;
  const std::vector<float> p = Floats(static_cast<size_t>(heads * rows));
  std::vector<uint16_t> v(static_cast<size_t>(rows * hd));
  t->f32_to_f16(Floats(v.size()).data(), static_cast<int64_t>(v.size()), v.data());
  std::vector<float> out(static_cast<size_t>(heads * hd));
  for (auto _ : st) {
    t->weighted_rows_f16(p.data(), rows, heads, v.data(), hd, rows, hd, out.data(), hd);
    benchmark::DoNotOptimize(out.data());
  }
  st.SetItemsProcessed(st.iterations() * heads * rows * hd);
}

void RegisterAll() {
  size_t count = 0;
  const Isa* isas = AvailableIsas(&count);
  for (size_t i = 0; i < count; ++i) {
    const KernelTable* t = *TableFor(isas[i]);
    const std::string isa = IsaName(isas[i]);
    benchmark::RegisterBenchmark(("quantize_rows_i8/" + isa).c_str(), BmQuantize, t)
        ->Arg(1536)
        ->Arg(8960);
    benchmark::RegisterBenchmark(("f32_to_f16/" + isa).c_str(), BmF32ToF16, t)->Arg(4096);
    benchmark::RegisterBenchmark(("absmax_requant/" + isa).c_str(), BmRequant, t)->Arg(65536);
    benchmark::RegisterBenchmark(("weighted_rows_f16/" + isa).c_str(), BmWeightedRows, t)
        ->Args({6, 160})
        ->Args({6, 1000});
    if (isas[i] == Isa::kScalar) continue;  // plain loops: minutes per GEMM shape
    benchmark::RegisterBenchmark(("gemm_i2s_i8/" + isa).c_str(), BmI2s, t)
        ->Args({1536, 1536, 1})
        ->Args({1536, 1536, 72})
        ->Args({8960, 1536, 72});
    benchmark::RegisterBenchmark(("gemm_i8_i8/" + isa).c_str(), BmI8, t)
        ->Args({1536, 1536, 1})
        ->Args({2048, 2048, 256});
  }
}

}  // namespace
}  // namespace tern::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  tern::kernels::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
