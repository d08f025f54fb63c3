// Session::Impl, shared by Session and the lanes of a BatchSession (batch_session.cc): a
// KV cache and the prompt head it holds, over a Compute (threads, encoder buffers) and a
// Stepper (alone, or in lockstep with the other lanes).
#pragma once

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/compute.h"
#include "engine/hotwords.h"
#include "engine/model_impl.h"
#include "engine/prompt.h"
#include "engine/stepper.h"
#include "engine/text_stream.h"
#include "models/vibeasr/decoder.h"
#include "tern/tern.h"

namespace tern {

struct Session::Impl {
  std::shared_ptr<const Model> model;
  std::shared_ptr<engine::Compute> compute;
  engine::Stepper* stepper;  // direct (owned below) unless given
  std::unique_ptr<engine::DirectStepper> direct;
  std::unique_ptr<vibeasr::DecoderState> state;

  // A Session of its own: its own threads, decoding alone.
  Impl(std::shared_ptr<const Model> m, int threads)
      : model(std::move(m)),
        compute(std::make_shared<engine::Compute>(threads)),
        direct(std::make_unique<engine::DirectStepper>(*compute)) {
    stepper = direct.get();
  }
  // A lane: shared threads, stepping with `s`.
  Impl(std::shared_ptr<const Model> m, std::shared_ptr<engine::Compute> c, engine::Stepper* s)
      : model(std::move(m)), compute(std::move(c)), stepper(s) {}

  const Model::Impl& m() const { return model->impl(); }

  // One prompt for samples x[0, n) (the whole audio, or one piece of it); `prompt` was built
  // for n samples. `bias`: options.decoding.hotwords as token sequences, built once per
  // call. `stream`: where the text goes as it is decoded (null without
  // TranscribeOptions::on_text).
  Result<Transcript> TranscribeWhole(const float* x, int64_t n, const std::string& name,
                                     const engine::Prompt& prompt, const TranscribeOptions& options,
                                     const engine::HotwordBias& bias, engine::TextStream* stream);

  // Session::Transcribe (the public contract: tern.h).
  Result<Transcript> Transcribe(const Audio& audio, const TranscribeOptions& asked);

  // Session::Transcribe once the options fit the model (engine::FitOptions) and the audio
  // holds sound: one prompt, or pieces.
  Result<Transcript> TranscribeFitted(const Audio& audio, const TranscribeOptions& options);

  // The prompt head whose rows the state holds first (see StateFor).
  std::vector<int32_t> cached_head;

  // A state with room for `rows` cache rows, reused across calls when it is big enough.
  // Every prompt starts with the same system turn (up to the first speech pad), so the rows
  // of the longest head it shares with the previous prompt stay; returns how many did.
  int64_t StateFor(int64_t rows, std::span<const int32_t> head) {
    int64_t keep = 0;
    if (!state || state->max_tokens() < rows) {
      state = std::make_unique<vibeasr::DecoderState>(*m().decoder, rows);
    } else {
      const size_t n = std::min(cached_head.size(), head.size());
      while (keep < static_cast<int64_t>(n) && cached_head[keep] == head[keep]) ++keep;
    }
    state->Rewind(keep);
    cached_head.assign(head.begin(), head.begin() + keep);
    return keep;
  }
};

}  // namespace tern
