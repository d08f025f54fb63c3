// Choosing the next token from logits: greedy, or seeded temperature / top-k / top-p.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "tern/tern.h"

namespace tern::engine {

// The index of the largest logit; ties go to the lowest id (as upstream's greedy sampler).
int32_t ArgMax(const float* logits, int64_t n);

class Sampler {
 public:
  explicit Sampler(const DecodingOptions& options);
  // Greedy when temperature == 0; otherwise top-k, then softmax at the temperature, then
  // top-p, then one draw from the seeded generator. Deterministic for a given seed.
  int32_t Sample(const float* logits, int64_t n);

 private:
  DecodingOptions options_;
  std::mt19937_64 rng_;
  std::vector<int32_t> order_;
  std::vector<double> probs_;
};

// Log-softmax of one row (beam search scores), computed in double for a stable sum.
void LogSoftmax(const float* logits, int64_t n, std::vector<double>* out);
// One entry of it: log p(token) under softmax(logits), the same arithmetic.
double LogProbOf(const float* logits, int64_t n, int32_t token);

}  // namespace tern::engine
