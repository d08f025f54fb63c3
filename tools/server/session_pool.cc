#include "session_pool.h"

#include <algorithm>

namespace tern::server {

SessionPool::SessionPool(const std::shared_ptr<const Model>& model, int sessions, int threads_each,
                         int max_waiting, int max_batch)
    : max_waiting_(max_waiting) {
  for (int i = 0; i < sessions; ++i)
    sessions_.push_back(std::make_unique<BatchSession>(model, threads_each, max_batch));
  for (auto& s : sessions_)
    for (int lane = 0; lane < s->max_batch(); ++lane)
      workers_.emplace_back([this, p = s.get()] { Work(p); });
}

SessionPool::~SessionPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

Status SessionPool::Submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int queued = static_cast<int>(queue_.size());
    if (running_ + queued >= size() + max_waiting_) {
      return ResourceExhaustedError(
          "the server is busy: %d transcriptions running and %d waiting (--max-waiting); "
          "retry later",
          running_, std::max(0, running_ + queued - size()));
    }
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return Status::Ok();
}

int SessionPool::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size());
}

int SessionPool::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_;
}

void SessionPool::Work(BatchSession* session) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    job(*session);
    job = nullptr;  // its captures (the connection, the body) go before the count drops
    lock.lock();
    --running_;
  }
}

}  // namespace tern::server
