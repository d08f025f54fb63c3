// How a decode loop advances its sequence by one token: alone (DirectStepper: the
// sequence's own DecoderState::Step), or in lockstep with the other transcriptions of a
// BatchSession (StepBatcher: one batched forward pass, vibeasr::DecoderBatch, for every
// sequence that is decoding, so the decoder's weights stream from memory once per step for
// all of them). The logits a sequence gets are byte-identical either way (DecoderBatch's
// contract), so a transcription does not depend on what runs beside it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "engine/compute.h"
#include "models/vibeasr/decoder.h"

namespace tern::engine {

class Stepper {
 public:
  virtual ~Stepper() = default;
  // A decode loop joins before its first Step and leaves after its last (Membership).
  virtual void Join() {}
  virtual void Leave() {}
  virtual Status Step(vibeasr::DecoderState& state, int32_t token, int32_t pos,
                      std::vector<float>* logits) = 0;
};

// Join/Leave around one decode loop, on every path out of it.
class Membership {
 public:
  explicit Membership(Stepper& s) : s_(s) { s_.Join(); }
  ~Membership() { s_.Leave(); }
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

 private:
  Stepper& s_;
};

class DirectStepper : public Stepper {
 public:
  explicit DirectStepper(Compute& c) : c_(c) {}
  Status Step(vibeasr::DecoderState& state, int32_t token, int32_t pos,
              std::vector<float>* logits) override;

 private:
  Compute& c_;
};

// A barrier per step: Step waits until every member has asked for its next token, then one
// of them (the last to arrive, or a member leaving) runs the batched step for all. Members
// are the decode loops between Join and Leave; a transcription that is encoding or
// prefilling is not one, so the others go on decoding while it waits for the threads.
class StepBatcher : public Stepper {
 public:
  StepBatcher(const vibeasr::Decoder& decoder, Compute& c, int max_members);
  void Join() override;
  void Leave() override;
  Status Step(vibeasr::DecoderState& state, int32_t token, int32_t pos,
              std::vector<float>* logits) override;

  // Batched steps run and the sequences they advanced, for the batch's mean size.
  int64_t steps() const;
  int64_t rows() const;

 private:
  struct Pending {
    vibeasr::BatchStep step;
    Status* status;
  };
  // With mu_ held (`lock`) and every member waiting: takes the round's steps, runs them
  // with mu_ released, and wakes their callers.
  void RunRound(std::unique_lock<std::mutex>& lock);

  Compute& c_;
  vibeasr::DecoderBatch batch_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int members_ = 0;
  std::vector<Pending> pending_;
  uint64_t round_ = 0;  // the round Step calls now join
  uint64_t done_ = 0;   // rounds finished
  int64_t steps_ = 0, rows_ = 0;
};

}  // namespace tern::engine
