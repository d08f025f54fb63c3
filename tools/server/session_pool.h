// A fixed set of Sessions over one shared Model, each with its own worker thread, and a
// bounded queue of jobs in front of them. The Model (weights, tokenizer) is loaded once and
// immutable; each Session owns its KV cache, thread pool and encoder buffers, so N sessions
// run N jobs at once. At most `max_waiting` more jobs wait; beyond that Submit refuses at
// once (HTTP 503) rather than queueing without bound behind long files. A waiting job is
// only a closure: the HTTP layer decodes audio inside the job, after a session is taken,
// so waiting requests never hold decoded audio. No I/O thread ever waits here.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tern/tern.h"

namespace tern::server {

class SessionPool {
 public:
  SessionPool(const std::shared_ptr<const Model>& model, int sessions, int threads_each,
              int max_waiting);
  ~SessionPool();  // runs the jobs already queued, then joins the workers
  SessionPool(const SessionPool&) = delete;
  SessionPool& operator=(const SessionPool&) = delete;

  using Job = std::function<void(Session&)>;
  // Queues a job for the next free session (it runs on that session's worker thread); a
  // ResourceExhausted error, saying why, when every session is busy and max_waiting jobs
  // already wait.
  Status Submit(Job job);

  int size() const { return static_cast<int>(sessions_.size()); }
  int waiting() const;
  int running() const;

 private:
  void Work(Session* session);

  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<std::thread> workers_;
  std::deque<Job> queue_;
  int max_waiting_;
  int running_ = 0;
  bool stop_ = false;
  mutable std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace tern::server
