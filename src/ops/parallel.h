// How ops split work across the pool (internal to src/ops).
//
// Every op hands each output element to exactly one range and computes a range the same way
// whichever thread runs it, so splitting never changes results; this helper only decides how
// many threads are worth waking. Small jobs run on the calling thread (no wake-up cost, which
// dominates single-token decode for the per-row ops).
#pragma once

#include <cstdint>

#include "runtime/thread_pool.h"

namespace tern::ops {

// Runs fn(begin, end) over [0, n) split on `align`; runs inline when `work` (a rough count of
// scalar operations) is below `min_work` or the pool has one thread.
template <typename Fn>
void ParallelRanges(ThreadPool& pool, int64_t n, int64_t align, int64_t work, Fn&& fn,
                    int64_t min_work = 32 * 1024) {
  if (n <= 0) return;
  if (pool.size() == 1 || work < min_work || n <= align) {
    fn(int64_t{0}, n);
    return;
  }
  pool.Run([&](int tid, int nth) {
    int64_t b, e;
    ThreadPool::Split(n, align, tid, nth, &b, &e);
    if (b < e) fn(b, e);
  });
}

}  // namespace tern::ops
