// A fixed set of BatchSessions over one shared Model, each with max_batch worker threads
// (one per lane), and a bounded queue of jobs in front of them. The Model (weights,
// tokenizer) is loaded once and immutable; each BatchSession owns its threads and encoder
// buffers, each of its lanes a KV cache, so sessions x max_batch jobs run at once, and the
// jobs of one BatchSession decode together (one pass over the decoder's weights per step
// for all of them; tern.h). At most `max_waiting` more jobs wait; beyond that Submit refuses
// at once (HTTP 503) rather than queueing without bound behind long files. A waiting job is
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
              int max_waiting, int max_batch = 1);
  ~SessionPool();  // runs the jobs already queued, then joins the workers
  SessionPool(const SessionPool&) = delete;
  SessionPool& operator=(const SessionPool&) = delete;

  using Job = std::function<void(BatchSession&)>;
  // Queues a job for the next free lane (it runs on that lane's worker thread); a
  // ResourceExhausted error, saying why, when every session is busy and max_waiting jobs
  // already wait.
  Status Submit(Job job);

  // Jobs that run at once.
  int size() const { return static_cast<int>(workers_.size()); }
  int waiting() const;
  int running() const;

 private:
  void Work(BatchSession* session);

  std::vector<std::unique_ptr<BatchSession>> sessions_;
  std::vector<std::thread> workers_;
  std::deque<Job> queue_;
  int max_waiting_;
  int running_ = 0;
  bool stop_ = false;
  mutable std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace tern::server
