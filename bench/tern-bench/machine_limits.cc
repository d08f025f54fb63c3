// The probe harness: pinned threads started together at a barrier, best of a few repetitions
// of each thread's own loop; bandwidth times the slowest thread (second barrier), the dot
// peak sums the threads' rates (research limits.c run_bw / run_comp), each rate in its
// thread's CPU time (two threads on SMT siblings each run at half speed for their full CPU
// time, so a shared core still counts once).
#include "machine_limits.h"

#include <pthread.h>
#include <time.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <thread>
#include <vector>

#include "base/cpu_features.h"
#include "base/huge_buffer.h"
#include "base/timer.h"
#include "limits/probes.h"

namespace tern::cli::bench {
namespace {

struct Probes {
  limits::ReadSumFn read = limits::ReadSumScalar;
  limits::DotFn dot = limits::DotScalar;
  double dot_ops = limits::kDotScalarOps;
  const char* dot_name = "scalar int8 multiply-add loop";
  const char* read_name = "64-bit loads";
};

Probes ProbesFor(kernels::Isa isa) {
  Probes p;
  const CpuFeatures& f = GetCpuFeatures();
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == kernels::Isa::kAvx512 && f.HasAvx512Tier()) {
    p = {limits::ReadSumAvx512, limits::DotAvx512Vnni, limits::kDotAvx512Ops,
         "vpdpbusd zmm (AVX-512 VNNI)", "512-bit loads"};
  } else if ((isa == kernels::Isa::kAvx2 || isa == kernels::Isa::kAvx512) && f.HasAvx2Tier()) {
    p = {limits::ReadSumAvx2, limits::DotAvx2, limits::kDotAvx2Ops,
         "vpmaddubsw+vpmaddwd+vpaddd ymm (AVX2)", "256-bit loads"};
  }
#elif defined(__aarch64__)
  if (isa == kernels::Isa::kNeon && f.neon) {
    p.read = limits::ReadSumNeon;
    p.read_name = "128-bit loads (NEON)";
    if (f.dotprod) {
      p.dot = limits::DotNeonSdot;
      p.dot_ops = limits::kDotNeonSdotOps;
      p.dot_name = "sdot (ARMv8.2 dotprod)";
    }
  }
#endif
  (void)isa;
  (void)f;
  return p;
}

void Pin(int cpu) {
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  // The cpu-th CPU this process may run on (a container may not start at CPU 0).
  int seen = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed)) continue;
    if (seen++ == cpu) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(c, &one);
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
      return;
    }
  }
#else
  (void)cpu;
#endif
}

int AllowedCpus() {
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) return std::max(1, CPU_COUNT(&allowed));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CPU time of the calling thread. The dot peak is a property of a core, so it is timed in
// the thread's own CPU time: on a shared machine, slices lost to other processes would
// otherwise read as a slower core. (Bandwidth is shared with them and stays wall time.)
double ThreadCpuNow() {
#if defined(__linux__)
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0) return ts.tv_sec + ts.tv_nsec * 1e-9;
#endif
  return Now();
}

// GB/s of `threads` threads each streaming its own slice of `mem`, best of `reps`.
double ReadGbs(const Probes& p, HugeBuffer& mem, int threads, int reps) {
  const size_t words = mem.size() / 8;
  const size_t chunk = words / static_cast<size_t>(threads) / 64 * 64;
  auto* base = reinterpret_cast<int64_t*>(mem.data());
  std::barrier sync(threads);
  std::atomic<int64_t> sink{0};
  double best = 1e30;
  auto body = [&](int id) {
    Pin(id);
    int64_t* part = base + chunk * static_cast<size_t>(id);
    for (size_t i = 0; i < chunk; ++i) part[i] = static_cast<int64_t>(i);  // first touch
    int64_t s = p.read(part, chunk);                                       // TLB, warm-up
    for (int r = 0; r < reps; ++r) {
      sync.arrive_and_wait();
      const double t0 = Now();
      s += p.read(part, chunk);
      sync.arrive_and_wait();
      if (id == 0) best = std::min(best, Now() - t0);
    }
    sink += s;
  };
  // Every probe on a thread of its own: Pin on the caller would leave the suite that follows
  // (and the thread pools it creates, which inherit the affinity) on one CPU.
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(body, i);
  for (auto& t : pool) t.join();
  return static_cast<double>(chunk * 8 * static_cast<size_t>(threads)) / best / 1e9;
}

// Aggregate GOPS of `threads` threads each running the dot loop for `iters`, best of `reps`.
double DotGops(const Probes& p, int threads, long iters, int reps) {
  std::barrier sync(threads);
  std::vector<double> rate(static_cast<size_t>(threads), 0);
  auto body = [&](int id) {
    Pin(id);
    p.dot(iters / 10);  // warm-up (frequency, power state)
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      sync.arrive_and_wait();
      const double t0 = ThreadCpuNow();
      p.dot(iters);
      best = std::min(best, ThreadCpuNow() - t0);
    }
    rate[static_cast<size_t>(id)] = p.dot_ops * static_cast<double>(iters) / best / 1e9;
  };
  // Every probe on a thread of its own: Pin on the caller would leave the suite that follows
  // (and the thread pools it creates, which inherit the affinity) on one CPU.
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) pool.emplace_back(body, i);
  for (auto& t : pool) t.join();
  double total = 0;
  for (double r : rate) total += r;
  return total;
}

}  // namespace

double MachineLimits::Int8Gops(int threads) const {
  if (threads <= 1) return int8_gops_1t;
  return std::min(int8_gops_all, int8_gops_1t * threads);
}

double MachineLimits::ReadGbs(int threads) const {
  return threads <= 1 ? read_gbs_1t : read_gbs_all;
}

MachineLimits MeasureLimits(kernels::Isa isa, int threads_all) {
  Timer total;
  const Probes p = ProbesFor(isa);
  MachineLimits m;
  m.isa = kernels::IsaName(isa);
  m.dot_probe = p.dot_name;
  m.read_probe = p.read_name;
  m.threads_all = threads_all > 0 ? threads_all : AllowedCpus();

  // Size the dot loop to about 40 ms per repetition on one thread.
  long iters = 10000;
  for (;;) {
    const double t0 = ThreadCpuNow();
    p.dot(iters);
    const double dt = ThreadCpuNow() - t0;
    if (dt > 0.004 || iters > (1L << 40)) {
      iters = std::max(1000L, static_cast<long>(static_cast<double>(iters) * 0.04 / dt));
      break;
    }
    iters *= 4;
  }
  m.int8_gops_1t = DotGops(p, 1, iters, 3);
  m.int8_gops_all = m.threads_all == 1 ? m.int8_gops_1t : DotGops(p, m.threads_all, iters, 3);

  // 256 MiB, several times any last-level cache, in huge pages like the packed weights.
  HugeBuffer mem = HugeBuffer::Allocate(size_t{256} << 20);
  if (!mem.empty()) {
    m.read_gbs_1t = ReadGbs(p, mem, 1, 5);
    m.read_gbs_all = m.threads_all == 1 ? m.read_gbs_1t : ReadGbs(p, mem, m.threads_all, 5);
  }
  m.seconds = total.ElapsedMs() / 1e3;
  return m;
}

}  // namespace tern::cli::bench
