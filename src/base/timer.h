// Monotonic wall-clock timing for metrics and benchmarks.
#pragma once

#include <chrono>
#include <cstddef>

namespace tern {

class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  void Reset() { start_ = std::chrono::steady_clock::now(); }
  double ElapsedMs() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  double ElapsedUs() const { return ElapsedMs() * 1000.0; }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Peak resident set size of this process in bytes (VmHWM), 0 if unknown.
size_t PeakRssBytes();

}  // namespace tern
