// A fixed set of Sessions over one shared Model, handed out one request at a time. The
// Model (weights, tokenizer) is loaded once and immutable; each Session owns its KV cache,
// thread pool and encoder buffers, so N sessions serve N requests at once and the rest
// wait, at most `max_waiting` of them: beyond that a request is refused at once (HTTP 503)
// rather than queued without bound behind long files.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "tern/tern.h"

namespace tern::server {

class SessionPool {
 public:
  SessionPool(std::shared_ptr<const Model> model, int sessions, int threads_each,
              int max_waiting);

  // A session for the lease's lifetime; returned to the pool when the lease is destroyed.
  class Lease {
   public:
    Lease(SessionPool* pool, Session* s) : pool_(pool), session_(s) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), session_(o.session_) { o.session_ = nullptr; }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Session& operator*() const { return *session_; }

   private:
    SessionPool* pool_;
    Session* session_;
  };

  // Waits for a free session; a ResourceExhausted error when max_waiting requests already
  // wait.
  Result<Lease> Acquire();

  int size() const { return static_cast<int>(sessions_.size()); }
  int waiting() const;

 private:
  void Release(Session* s);

  std::vector<std::unique_ptr<Session>> sessions_;
  std::vector<Session*> free_;
  int max_waiting_;
  int waiting_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace tern::server
