// `tern-bench kernels`: the kernel table on the shapes VibeASR runs, one record per case.
//   I2_S x int8: the Qwen2-1.5B projections (K,N) = 1536x1536, 1536x256, 1536x8960,
//     8960x1536 and a ternary 1536x151936 head, at n = 1 (decode), 8 and 16 (a batched
//     decode step), 72 and 512 (prefill);
//   F16 x F32 and W8A8 int8 heads 1536x151936 at n = 1, 8, 16 and 72;
//   int8 x int8 encoder GEMMs: stages 4-6 convs (K = C_in * 16) and the ConvNeXt FFN.
// Rows are split over the thread pool the way ops split them (ThreadPool::Split on the
// table's row alignment). "cold" cycles through enough packed weight copies to exceed the
// L3 (or one copy when a single matrix already does), so weight GB/s is a DRAM figure; the
// default ("auto") is cold for decode shapes (n <= 16, where each step streams the weights
// once) and hot otherwise.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "base/huge_buffer.h"
#include "base/timer.h"
#include "bench.h"
#include "runtime/thread_pool.h"

namespace tern::cli::bench {
namespace {

constexpr size_t kColdBytes = size_t{192} << 20;  // several times the 32 MiB L3

struct Shape {
  const char* kernel;
  int64_t k, nr, n;
};

std::string CaseId(const Shape& s) {
  return std::string(s.kernel) + "/" + std::to_string(s.k) + "x" + std::to_string(s.nr) + "/n" +
         std::to_string(s.n);
}

// Copies of the packed weights to cycle through: 1 when hot, else enough to exceed the L3.
int Copies(const Options& o, const Shape& s, size_t bytes, std::string* mode) {
  const bool cold = o.mode == "cold" || (o.mode == "auto" && s.n <= 16);
  *mode = cold ? "cold" : "hot";
  if (!cold) return 1;
  return static_cast<int>(std::max<size_t>(1, (kColdBytes + bytes - 1) / bytes));
}

double ProcessCpuUs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

// Times fn(copy) until both min_seconds and min_reps are reached; returns the median in us
// (wall, or process CPU time / threads with --clock cpu).
template <typename Fn>
double MedianUs(const Options& o, int copies, int* reps, Fn&& fn) {
  fn(copies - 1);  // warm-up (page faults, thread wake-up)
  std::vector<double> us;
  Timer total;
  const bool cpu = o.clock == "cpu";
  while (us.size() < static_cast<size_t>(o.min_reps) || total.ElapsedMs() < o.min_seconds * 1e3) {
    Timer t;
    const double c0 = cpu ? ProcessCpuUs() : 0.0;
    fn(static_cast<int>(us.size() % copies));
    us.push_back(cpu ? (ProcessCpuUs() - c0) / o.threads : t.ElapsedUs());
    if (us.size() >= 100000) break;
  }
  *reps = static_cast<int>(us.size());
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

Record MakeRecord(const Options& o, const Shape& s, const std::string& mode, int reps, double us,
                  size_t weight_bytes) {
  Record r;
  r.kernel = s.kernel;
  r.isa = kernels::IsaName(o.table->isa);
  r.k = s.k;
  r.n_rows = s.nr;
  r.n = s.n;
  r.threads = o.threads;
  r.mode = mode;
  r.clock = o.clock;
  r.reps = reps;
  r.median_us = us;
  r.gops = 2.0 * s.k * s.nr * s.n / (us * 1e3);
  r.weight_gbs = static_cast<double>(weight_bytes) / (us * 1e3);
  // A GEMV streams its weights once per call; a GEMM reuses each byte n times and is read
  // against the int8 peak (the F16 GEMM against none: it is not an int8 computation).
  if (s.n == 1) {
    r.ratio_to = RatioTo::kReadBw;
  } else if (std::string(s.kernel).rfind("f16", 0) != 0) {
    r.ratio_to = RatioTo::kInt8Peak;
  }
  return r;
}

// `copies` slots of first.size() bytes, each a copy of `first`, in huge pages as the
// engine's packed weights are (base/huge_buffer.h).
HugeBuffer Replicate(const std::vector<uint8_t>& first, int copies) {
  const size_t bytes = first.size();
  HugeBuffer w = HugeBuffer::Allocate(bytes * copies);
  if (w.size() != bytes * copies) throw std::bad_alloc();
  for (int c = 0; c < copies; ++c) std::memcpy(w.data() + c * bytes, first.data(), bytes);
  return w;
}

Record RunI2s(const Options& o, ThreadPool& pool, const Shape& s, std::mt19937& rng) {
  const kernels::KernelTable& t = *o.table;
  std::vector<uint8_t> canon(static_cast<size_t>(s.nr * s.k / 4));
  for (auto& b : canon) {
    uint8_t v = 0;
    for (int f = 0; f < 4; ++f) v = static_cast<uint8_t>(v << 2 | rng() % 3);
    b = v;
  }
  const size_t bytes = t.i2s_packed_bytes(s.k, s.nr);
  std::string mode;
  const int copies = Copies(o, s, bytes, &mode);
  std::vector<uint8_t> first(bytes);
  t.pack_i2s(canon.data(), s.k, s.nr, first.data());
  canon = {};
  const HugeBuffer w = Replicate(first, copies);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(s.n * s.k));
  for (auto& v : x) v = nd(rng);
  std::vector<int8_t> q(x.size());
  std::vector<float> scale(static_cast<size_t>(s.n));
  std::vector<int32_t> sums(static_cast<size_t>(s.n));
  t.quantize_rows_i8(x.data(), s.n, s.k, s.k, q.data(), s.k, scale.data(), sums.data());
  std::vector<float> out(static_cast<size_t>(s.n * s.nr));
  int reps = 0;
  const double us = MedianUs(o, copies, &reps, [&](int c) {
    pool.Run([&](int tid, int nth) {
      int64_t b, e;
      ThreadPool::Split(s.nr, t.i2s_row_align, tid, nth, &b, &e);
      if (b < e) {
        t.gemm_i2s_i8(w.data() + c * bytes, s.k, s.nr, b, e, 0.5f, q.data(), s.k, scale.data(),
                      sums.data(), s.n, out.data(), s.nr);
      }
    });
  });
  return MakeRecord(o, s, mode, reps, us, bytes);
}

Record RunI8(const Options& o, ThreadPool& pool, const Shape& s, std::mt19937& rng) {
  const kernels::KernelTable& t = *o.table;
  std::vector<int8_t> canon(static_cast<size_t>(s.nr * s.k));
  for (auto& v : canon) v = static_cast<int8_t>(rng() % 255 - 127);
  const size_t bytes = t.i8_packed_bytes(s.k, s.nr);
  std::string mode;
  const int copies = Copies(o, s, bytes, &mode);
  std::vector<uint8_t> first(bytes);
  t.pack_i8(canon.data(), s.k, s.nr, first.data());
  canon = {};
  const HugeBuffer w = Replicate(first, copies);
  std::vector<int8_t> x(static_cast<size_t>(s.n * s.k));
  for (auto& v : x) v = static_cast<int8_t>(rng() % 255 - 127);
  std::vector<int32_t> out(static_cast<size_t>(s.n * s.nr));
  int reps = 0;
  const double us = MedianUs(o, copies, &reps, [&](int c) {
    pool.Run([&](int tid, int nth) {
      int64_t b, e;
      ThreadPool::Split(s.nr, t.i8_row_align, tid, nth, &b, &e);
      if (b < e) {
        t.gemm_i8_i8(w.data() + c * bytes, s.k, s.nr, b, e, x.data(), s.k, s.n, out.data(), s.nr);
      }
    });
  });
  return MakeRecord(o, s, mode, reps, us, bytes);
}

Record RunF16(const Options& o, ThreadPool& pool, const Shape& s, std::mt19937& rng) {
  const kernels::KernelTable& t = *o.table;
  const size_t elems = static_cast<size_t>(s.nr * s.k), bytes = elems * 2;
  std::string mode;
  const int copies = Copies(o, s, bytes, &mode);
  std::vector<uint8_t> first(bytes);
  {
    std::normal_distribution<float> nd(0.0f, 0.05f);
    std::vector<float> f(static_cast<size_t>(s.k));
    for (int64_t r = 0; r < s.nr; ++r) {
      for (auto& v : f) v = nd(rng);
      t.f32_to_f16(f.data(), s.k, reinterpret_cast<uint16_t*>(first.data()) + r * s.k);
    }
  }
  const HugeBuffer w = Replicate(first, copies);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(s.n * s.k));
  for (auto& v : x) v = nd(rng);
  std::vector<float> out(static_cast<size_t>(s.n * s.nr));
  int reps = 0;
  const double us = MedianUs(o, copies, &reps, [&](int c) {
    const uint16_t* wc = reinterpret_cast<const uint16_t*>(w.data() + c * bytes);
    pool.Run([&](int tid, int nth) {
      int64_t b, e;
      ThreadPool::Split(s.nr, 16, tid, nth, &b, &e);
      if (b < e) t.gemm_f16_f32(wc, s.k, s.k, b, e, x.data(), s.k, s.n, out.data(), s.nr);
    });
  });
  return MakeRecord(o, s, mode, reps, us, bytes);
}

int RunKernels(const Options& o, Sink* sink) {
  std::vector<Shape> shapes;
  const int64_t kDecoder[][2] = {
      {1536, 1536}, {1536, 256}, {1536, 8960}, {8960, 1536}, {1536, 151936}};
  for (int64_t n : {1, 8, 16, 72, 512}) {
    for (const auto& kn : kDecoder) shapes.push_back({"i2s_i8", kn[0], kn[1], n});
  }
  for (int64_t n : {1, 8, 16, 72}) {
    shapes.push_back({"f16_f32_head", 1536, 151936, n});
    shapes.push_back({"i8_i8_head", 1536, 151936, n});
  }
  // Encoder: stage 4-6 downsampling convs as GEMMs (K = C_in * kernel 16 after im2col), and the
  // stage-6 ConvNeXt FFN (2048 -> 8192 -> 2048), at a few hundred frames.
  const int64_t kEncoder[][2] = {
      {256 * 16, 512}, {512 * 16, 1024}, {1024 * 16, 2048}, {2048, 8192}, {8192, 2048}};
  for (const auto& kn : kEncoder) shapes.push_back({"i8_i8_enc", kn[0], kn[1], 256});
  // The stage-6 conv and FFN as a 3.5 s clip runs them: 26 frames, so each weight byte is
  // used 26 times and the weights (~300 MB per branch for the stage) stream from DRAM.
  for (const auto& kn : {kEncoder[2], kEncoder[3], kEncoder[4]})
    shapes.push_back({"i8_i8_enc", kn[0], kn[1], 26});
  // Stages 0-2 FFNs (C -> 4C -> C, C = 32/64/128) one 32-frame tile at a time, as
  // ops::MlpReluI8s calls them: short dot products, small outputs.
  const int64_t kEarlyFfn[][2] = {{32, 128}, {128, 32},  {64, 256},
                                  {256, 64}, {128, 512}, {512, 128}};
  for (const auto& kn : kEarlyFfn) shapes.push_back({"i8_i8_enc", kn[0], kn[1], 32});

  ThreadPool pool(o.threads);
  std::mt19937 rng(42);
  for (const Shape& s : shapes) {
    if (!o.filter.empty() && CaseId(s).find(o.filter) == std::string::npos) continue;
    const std::string kernel = s.kernel;
    if (kernel == "i2s_i8") {
      sink->Emit(RunI2s(o, pool, s, rng));
    } else if (kernel == "f16_f32_head") {
      sink->Emit(RunF16(o, pool, s, rng));
    } else {
      sink->Emit(RunI8(o, pool, s, rng));
    }
  }
  return 0;
}

}  // namespace

TERN_REGISTER_BENCH(kKernelsSuite, "kernels",
                    "kernel table on decoder/head/encoder shapes (filter: kernel/KxN/nX)",
                    RunKernels);

}  // namespace tern::cli::bench
