#include "session_pool.h"

namespace tern::server {

SessionPool::SessionPool(std::shared_ptr<const Model> model, int sessions, int threads_each,
                         int max_waiting)
    : max_waiting_(max_waiting) {
  for (int i = 0; i < sessions; ++i) {
    sessions_.push_back(std::make_unique<Session>(model, threads_each));
    free_.push_back(sessions_.back().get());
  }
}

SessionPool::Lease::~Lease() {
  if (session_) pool_->Release(session_);
}

Result<SessionPool::Lease> SessionPool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  if (free_.empty() && waiting_ >= max_waiting_) {
    return ResourceExhaustedError(
        "the server is busy: %d transcriptions running and %d waiting (--max-waiting); "
        "retry later", size(), waiting_);
  }
  ++waiting_;
  cv_.wait(lock, [&] { return !free_.empty(); });
  --waiting_;
  Session* s = free_.back();
  free_.pop_back();
  return Lease(this, s);
}

int SessionPool::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

void SessionPool::Release(Session* s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(s);
  }
  cv_.notify_one();
}

}  // namespace tern::server
