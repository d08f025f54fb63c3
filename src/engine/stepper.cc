#include "engine/stepper.h"

#include <utility>

namespace tern::engine {

Status DirectStepper::Step(vibeasr::DecoderState& state, int32_t token, int32_t pos,
                           std::vector<float>* logits) {
  std::lock_guard<FairMutex> lock(c_.mu);
  return state.Step(token, pos, c_.pool, logits);
}

StepBatcher::StepBatcher(const vibeasr::Decoder& decoder, Compute& c, int max_members)
    : c_(c), batch_(decoder, max_members) {}

void StepBatcher::Join() {
  std::lock_guard<std::mutex> lock(mu_);
  ++members_;
}

void StepBatcher::Leave() {
  std::unique_lock<std::mutex> lock(mu_);
  --members_;
  // The others may all be waiting for this one: it runs their step.
  if (members_ > 0 && static_cast<int>(pending_.size()) == members_) RunRound(lock);
}

Status StepBatcher::Step(vibeasr::DecoderState& state, int32_t token, int32_t pos,
                         std::vector<float>* logits) {
  Status status;
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t round = round_;
  pending_.push_back({vibeasr::BatchStep{&state, token, pos, logits}, &status});
  if (static_cast<int>(pending_.size()) == members_) {
    RunRound(lock);
  } else {
    cv_.wait(lock, [&] { return done_ > round; });
  }
  return status;
}

void StepBatcher::RunRound(std::unique_lock<std::mutex>& lock) {
  std::vector<Pending> round = std::move(pending_);
  pending_.clear();
  ++round_;  // from here on, Step calls wait for the next round
  lock.unlock();
  {
    std::vector<vibeasr::BatchStep> steps;
    steps.reserve(round.size());
    for (const Pending& p : round) steps.push_back(p.step);
    std::lock_guard<FairMutex> threads(c_.mu);
    const Status s = batch_.Step(steps, c_.pool);
    if (s.ok()) {
      for (Pending& p : round) *p.status = Status::Ok();
    } else {
      // Nothing changed: each sequence alone, so the one at fault gets its own error and
      // the others their logits (the same bytes as batched).
      for (Pending& p : round)
        *p.status = p.step.state->Step(p.step.token, p.step.pos, c_.pool, p.step.logits);
    }
  }
  lock.lock();
  ++done_;
  ++steps_;
  rows_ += static_cast<int64_t>(round.size());
  cv_.notify_all();
}

int64_t StepBatcher::steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_;
}

int64_t StepBatcher::rows() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_;
}

}  // namespace tern::engine
