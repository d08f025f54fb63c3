#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tern {
namespace {

TEST(ThreadPool, SplitCoversRangeOnceAligned) {
  for (int nth : {1, 2, 3, 4, 7}) {
    for (int64_t n : {0, 1, 5, 64, 70, 100, 1000}) {
      for (int64_t align : {1, 4, 16}) {
        std::vector<int> hits(static_cast<size_t>(n), 0);
        for (int t = 0; t < nth; ++t) {
          int64_t b, e;
          ThreadPool::Split(n, align, t, nth, &b, &e);
          ASSERT_LE(b, e);
          if (b < n) {
            EXPECT_EQ(b % align, 0);
          }
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        }
        for (int h : hits) EXPECT_EQ(h, 1);
      }
    }
  }
}

TEST(ThreadPool, RunsEveryThreadAndIsReusable) {
  for (int nth : {1, 2, 4}) {
    ThreadPool pool(nth);
    for (int rep = 0; rep < 50; ++rep) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(nth));
      pool.Run([&](int tid, int n) {
        EXPECT_EQ(n, nth);
        seen[static_cast<size_t>(tid)]++;
      });
      for (auto& s : seen) EXPECT_EQ(s.load(), 1);
    }
    std::vector<int> out(1000, 0);
    pool.ParallelFor(1000, 8, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[static_cast<size_t>(i)] = static_cast<int>(i);
    });
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], i);
  }
}

// Waiters spin for a while, then sleep: regions issued back to back (spinning hand-off),
// after idle gaps longer than the spin (sleeping hand-off), and with a worker that finishes
// long after the caller (caller sleeps) must each run every thread exactly once.
TEST(ThreadPool, HandsOffWhetherWaitersSpinOrSleep) {
  for (int nth : {2, 4}) {
    ThreadPool pool(nth);
    std::atomic<int> total{0};
    int expected = 0;
    for (int rep = 0; rep < 2000; ++rep) {  // back to back
      pool.Run([&](int, int) { total++; });
      expected += nth;
    }
    for (int rep = 0; rep < 4; ++rep) {  // idle gaps: workers asleep when the job comes
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      pool.Run([&](int, int) { total++; });
      expected += nth;
    }
    for (int rep = 0; rep < 3; ++rep) {  // slow workers: the caller goes to sleep
      pool.Run([&](int tid, int) {
        if (tid != 0) std::this_thread::sleep_for(std::chrono::milliseconds(8));
        total++;
      });
      expected += nth;
    }
    EXPECT_EQ(total.load(), expected) << "nth=" << nth;
  }
}

}  // namespace
}  // namespace tern
