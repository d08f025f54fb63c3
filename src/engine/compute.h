// What a Session computes with: its threads and the encoder's buffers. A Session owns one;
// the lanes of a BatchSession share one, so every use holds `mu` (uncontended in a Session):
// encoders, prefills and decode steps of different transcriptions take turns on all the
// threads rather than splitting them.
#pragma once

#include <thread>

#include "models/vibeasr/encoder.h"
#include "runtime/fair_mutex.h"
#include "runtime/thread_pool.h"

namespace tern::engine {

// threads <= 0: the number of online CPUs.
inline int ThreadsOrCpus(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

struct Compute {
  explicit Compute(int threads) : pool(threads) {}
  ThreadPool pool;
  // Activation buffers and the branches' thread pools, kept between calls.
  vibeasr::Encoder::Scratch encoder_scratch;
  FairMutex mu;  // held for every use of pool and encoder_scratch (in the order asked)
};

}  // namespace tern::engine
