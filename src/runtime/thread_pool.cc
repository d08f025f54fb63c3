#include "runtime/thread_pool.h"

#include <algorithm>

namespace tern {

ThreadPool::ThreadPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int t = 1; t < n_threads_; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::WorkerLoop(int tid) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int, int)>* job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    (*job)(tid, n_threads_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::Run(const std::function<void(int tid, int nth)>& fn) {
  if (n_threads_ == 1) {
    fn(0, 1);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    pending_ = n_threads_ - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  fn(0, n_threads_);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::Split(int64_t n, int64_t align, int tid, int nth, int64_t* begin,
                       int64_t* end) {
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
