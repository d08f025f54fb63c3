// A fixed pool of worker threads; the calling thread takes part as thread 0.
//
// Determinism contract: ops give every output element to exactly one thread and reduce in a
// fixed order, so results never depend on the thread count. The pool only schedules.
//
// Waiting: a decode step issues ~450 short parallel regions (tens of microseconds each). If
// an idle thread slept on a condition variable between them, every region would pay a futex
// wake-up of a core in a low-power state, which can take longer than the work. So waiters spin (with a CPU pause hint) for a bounded time, kSpin, and only
// then sleep; a pool left idle for longer costs no CPU.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tern {

class ThreadPool {
 public:
  // `n_threads` >= 1 (values < 1 are treated as 1); n_threads - 1 workers are started.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(tid, nth) on all nth = size() threads and returns when all are done.
  // Not re-entrant: fn must not call Run on the same pool.
  void Run(const std::function<void(int tid, int nth)>& fn);

  // Splits [0, n) into contiguous ranges, one per thread, aligned to `align` (except at n),
  // and runs fn(begin, end) for each non-empty range.
  void ParallelFor(int64_t n, int64_t align, const std::function<void(int64_t, int64_t)>& fn);

  // The [begin, end) range thread `tid` of `nth` gets for n items split on `align`.
  static void Split(int64_t n, int64_t align, int tid, int nth, int64_t* begin, int64_t* end);

 private:
  void WorkerLoop(int tid);

  int n_threads_;
  std::vector<std::thread> workers_;
  // Published by Run before it bumps generation_ (release); read after seeing it (acquire).
  const std::function<void(int, int)>* job_ = nullptr;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};  // workers still running the current job
  std::atomic<bool> stop_{false};
  // Sleeping side of the waits. A sleeper registers itself under mu_ and re-checks its
  // condition; a waker reads the registration after publishing, and notifies under mu_
  // (both sides sequentially consistent, so no wake-up is lost).
  std::mutex mu_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
};

}  // namespace tern
