#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tern {
namespace {

// How long a waiter spins before it sleeps: longer than the gaps between the parallel regions
// of one decode step or one encoder stage, short enough not to matter when the pool idles.
constexpr std::chrono::microseconds kSpin{2000};
// How long of that it spins on the pause hint alone before it also yields the core at every
// check. On a machine with more runnable threads than cores (another process's threads, or
// more pool threads than cores), the thread being waited for may be the one that cannot
// run; a waiter that keeps its core for the whole kSpin then starves it (decode slowed
// many times over beside another busy process). With nothing else runnable, a yield
// returns at once and the wait stays a spin.
constexpr std::chrono::microseconds kPauseOnly{20};

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until done() or kSpin has passed; true when done() held.
template <typename Done>
bool SpinUntil(Done&& done) {
  const auto start = std::chrono::steady_clock::now();
  const auto yield_from = start + kPauseOnly, deadline = start + kSpin;
  bool yielding = false;
  for (int i = 0;; ++i) {
    if (done()) return true;
    if (yielding) {
      std::this_thread::yield();
    } else {
      CpuRelax();
    }
    if (yielding || (i & 63) == 63) {
      const auto now = std::chrono::steady_clock::now();
      if (now > deadline) return done();
      yielding = now > yield_from;
    }
  }
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int t = 1; t < n_threads_; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(mu_); }
  start_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::WorkerLoop(int tid) {
  uint64_t seen = 0;
  for (;;) {
    auto ready = [&] { return stop_.load() || generation_.load() != seen; };
    if (!SpinUntil(ready)) {
      std::unique_lock<std::mutex> lock(mu_);
      sleeping_workers_.fetch_add(1);
      start_cv_.wait(lock, ready);
      sleeping_workers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    seen = generation_.load(std::memory_order_acquire);
    (*job_)(tid, n_threads_);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::Run(const std::function<void(int tid, int nth)>& fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  job_ = &fn;
  pending_.store(n_threads_ - 1);
  generation_.fetch_add(1);  // seq_cst: publishes job_ and pending_
  if (sleeping_workers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    start_cv_.notify_all();
  }
  fn(0, n_threads_);
  auto done = [&] { return pending_.load() == 0; };
  if (!SpinUntil(done)) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_sleeping_.store(true);
    done_cv_.wait(lock, done);
    caller_sleeping_.store(false);
  }
  job_ = nullptr;
}

void ThreadPool::Split(int64_t n, int64_t align, int tid, int nth, int64_t* begin, int64_t* end) {
  if (align < 1) align = 1;
  const int64_t blocks = (n + align - 1) / align;
  const int64_t per = blocks / nth, extra = blocks % nth;
  const int64_t b0 = tid * per + std::min<int64_t>(tid, extra);
  const int64_t b1 = b0 + per + (tid < extra ? 1 : 0);
  *begin = std::min(n, b0 * align);
  *end = std::min(n, b1 * align);
}

void ThreadPool::ParallelFor(int64_t n, int64_t align,
                             const std::function<void(int64_t, int64_t)>& fn) {
  Run([&](int tid, int nth) {
    int64_t b, e;
    Split(n, align, tid, nth, &b, &e);
    if (b < e) fn(b, e);
  });
}

}  // namespace tern
