#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tern::engine {

int32_t ArgMax(const float* logits, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i) {
    if (logits[i] > logits[best]) best = i;  // strict: the first maximum wins
  }
  return static_cast<int32_t>(best);
}

Sampler::Sampler(const DecodingOptions& options) : options_(options), rng_(options.seed) {}

int32_t Sampler::Sample(const float* logits, int64_t n) {
  if (options_.temperature <= 0.0f || n <= 1) return ArgMax(logits, n);

  // Candidates by descending logit, ties by ascending id (stable, so runs are reproducible).
  order_.resize(static_cast<size_t>(n));
  std::iota(order_.begin(), order_.end(), 0);
  int64_t k = n;
  if (options_.top_k > 0 && options_.top_k < n) k = options_.top_k;
  auto by_logit = [logits](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  std::partial_sort(order_.begin(), order_.begin() + k, order_.end(), by_logit);
  order_.resize(static_cast<size_t>(k));

  probs_.resize(static_cast<size_t>(k));
  const double max_logit = logits[order_[0]];
  double sum = 0;
  for (int64_t i = 0; i < k; ++i) {
    probs_[static_cast<size_t>(i)] =
        std::exp((static_cast<double>(logits[order_[static_cast<size_t>(i)]]) - max_logit) /
                 options_.temperature);
    sum += probs_[static_cast<size_t>(i)];
  }
  // Nucleus: the smallest prefix whose mass reaches top_p (at least one token).
  int64_t keep = k;
  if (options_.top_p < 1.0f) {
    double mass = 0;
    for (int64_t i = 0; i < k; ++i) {
      mass += probs_[static_cast<size_t>(i)] / sum;
      if (mass >= options_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  double kept = 0;
  for (int64_t i = 0; i < keep; ++i) kept += probs_[static_cast<size_t>(i)];
  // One uniform draw in [0, kept): the generator's raw bits, so no library distribution
  // algorithm (which differs between standard libraries) decides the result.
  const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53 * kept;
  double acc = 0;
  for (int64_t i = 0; i < keep; ++i) {
    acc += probs_[static_cast<size_t>(i)];
    if (u < acc) return order_[static_cast<size_t>(i)];
  }
  return order_[static_cast<size_t>(keep - 1)];
}

namespace {

double LogSumExp(const float* logits, int64_t n) {
  double max_logit = logits[0];
  for (int64_t i = 1; i < n; ++i) max_logit = std::max<double>(max_logit, logits[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - max_logit);
  return std::log(sum) + max_logit;
}

}  // namespace

void LogSoftmax(const float* logits, int64_t n, std::vector<double>* out) {
  out->resize(static_cast<size_t>(n));
  const double log_sum = LogSumExp(logits, n);
  for (int64_t i = 0; i < n; ++i) (*out)[static_cast<size_t>(i)] = logits[i] - log_sum;
}

double LogProbOf(const float* logits, int64_t n, int32_t token) {
  return logits[token] - LogSumExp(logits, n);
}

}  // namespace tern::engine
