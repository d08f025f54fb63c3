#include "runtime/fair_mutex.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace tern {
namespace {

// Mutual exclusion: unsynchronized increments under the lock add up.
TEST(FairMutex, Excludes) {
  FairMutex mu;
  int64_t count = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        std::lock_guard<FairMutex> lock(mu);
        ++count;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(count, 80000);
}

// Waiters get it in the order they asked, whoever unlocks: three threads that queue one
// after another behind a holder run in that order.
TEST(FairMutex, WaitersGetItInTheOrderTheyAsked) {
  FairMutex mu;
  std::mutex order_mu;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  mu.lock();
  for (int id = 0; id < 3; ++id) {
    waiters.emplace_back([&, id] {
      std::lock_guard<FairMutex> lock(mu);
      std::lock_guard<std::mutex> l(order_mu);
      order.push_back(id);
    });
    // The next one starts once this one holds its ticket.
    for (int spin = 0; mu.waiting() < id + 1 && spin < 10000; ++spin)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    ASSERT_EQ(mu.waiting(), id + 1);
  }
  mu.unlock();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(mu.waiting(), 0);
}

// A thread that relocks in a tight loop, as a decode loop does, cannot keep out one that
// is waiting: once the waiter holds a ticket, the hog gets the lock at most once more.
TEST(FairMutex, ARelockingThreadCannotStarveAWaiter) {
  FairMutex mu;
  std::atomic<bool> got{false};
  std::atomic<int> after{0};
  std::atomic<bool> started{false};
  std::thread hog([&] {
    while (!got.load()) {
      std::lock_guard<FairMutex> lock(mu);
      started = true;
      if (mu.waiting() > 0 && !got.load()) ++after;
    }
  });
  while (!started) std::this_thread::yield();
  {
    std::lock_guard<FairMutex> lock(mu);
    got = true;
  }
  hog.join();
  // The hold during which the waiter drew its ticket, and one whose ticket the hog drew
  // before the waiter's.
  EXPECT_LE(after.load(), 2);
}

}  // namespace
}  // namespace tern
