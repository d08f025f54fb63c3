// A mutex that is handed over in the order it was asked for (a ticket lock). std::mutex
// makes no such promise: a thread that unlocks and locks again at once, as a decode loop
// does every step, usually gets it back before a woken waiter runs, and an encoder waiting
// for the same threads could wait for a whole transcription. With tickets it waits for at
// most the holders ahead of it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace tern {

class FairMutex {
 public:
  void lock() {
    std::unique_lock<std::mutex> l(mu_);
    const uint64_t ticket = next_++;
    cv_.wait(l, [&] { return serving_ == ticket; });
  }
  // Threads waiting for it now (tickets drawn, not yet served, but the holder's).
  int waiting() {
    std::lock_guard<std::mutex> l(mu_);
    return static_cast<int>(next_ - serving_) - (next_ > serving_ ? 1 : 0);
  }
  void unlock() {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++serving_;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t next_ = 0;     // the next ticket handed out
  uint64_t serving_ = 0;  // the ticket that holds the lock
};

}  // namespace tern
