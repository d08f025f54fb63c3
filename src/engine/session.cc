// Session::Transcribe: encoder, prompt, prefill with the speech frames injected, decoding
// (decode.h), then text and segments; audio longer than one prompt goes in pieces
// (long_audio.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <vector>

#include "audio/normalize.h"
#include "base/timer.h"
#include "engine/content_stream.h"
#include "engine/decode.h"
#include "engine/hotwords.h"
#include "engine/live.h"
#include "engine/chunks.h"
#include "engine/long_audio.h"
#include "engine/model_impl.h"
#include "engine/session_impl.h"
#include "engine/no_speech.h"
#include "engine/prefill.h"
#include "engine/prompt.h"
#include "engine/segments.h"
#include "engine/snap_times.h"
#include "engine/text_stream.h"
#include "engine/trained.h"
#include "runtime/thread_pool.h"

namespace tern {

Session::Session(std::shared_ptr<const Model> model, int threads)
    : impl_(std::make_unique<Impl>(std::move(model), engine::ThreadsOrCpus(threads))) {}
Session::~Session() = default;
int Session::threads() const { return impl_->compute->pool.size(); }

Result<Features> Session::Encode(const Audio& audio) {
  if (audio.samples.empty())
    return InvalidArgumentError("%s: no audio samples", audio.name.c_str());
  engine::Compute& c = *impl_->compute;
  std::lock_guard<FairMutex> lock(c.mu);
  return impl_->m().encoder->Run(audio.samples.data(), audio.samples.size(), c.pool, nullptr,
                                 &c.encoder_scratch);
}

Result<Transcript> Session::Impl::TranscribeWhole(
    const float* x, int64_t n, const std::string& name, const engine::Prompt& prompt,
    const TranscribeOptions& options, const engine::HotwordBias& bias, engine::TextStream* stream) {
  const Model::Impl& m = this->m();
  Timer wall;
  Transcript t;
  t.duration_s = static_cast<double>(n) / engine::kModelSampleRate;
  t.model = m.info.name;
  t.head = m.info.head;
  t.isa = m.info.isa;
  engine::Compute& cp = *compute;
  t.threads = cp.pool.size();

  // 1. Encoder: frames x hidden speech features.
  vibeasr::EncoderTimings et;
  Timer timer;
  Result<Features> encoded = [&] {
    std::lock_guard<FairMutex> lock(cp.mu);
    return m.encoder->Run(x, static_cast<size_t>(n), cp.pool, &et, &cp.encoder_scratch);
  }();
  if (!encoded.ok()) return encoded.status();
  const Features& feats = *encoded;
  t.metrics.encoder_ms = timer.ElapsedMs();
  t.metrics.stages = et.stages;
  if (engine::Cancelled(options)) return CancelledError("transcription cancelled");
  if (options.on_progress && !options.on_progress(0.5))
    return CancelledError("transcription cancelled by the progress callback");

  // 2. The prompt's N pad slots, of which the first F carry the frames.
  t.prompt_token_ids = prompt.tokens;
  t.frames = std::min<int64_t>(prompt.pad_count, feats.frames);
  std::vector<vibeasr::DecoderInput> inputs =
      engine::PrefillInputs(prompt, feats.frames, feats.hidden, feats.data.data());

  // 3. Prefill, then decode from position = the full prompt length (spec 4.6).
  const vibeasr::DecoderConfig& c = m.decoder->config();
  const int64_t rows = static_cast<int64_t>(inputs.size()) + options.decoding.max_tokens;
  if (c.context > 0 && rows > c.context) {
    return ResourceExhaustedError(
        "%s: the prompt (%zu tokens for %.1f s of audio) plus --max-tokens %d exceeds the "
        "model's context of %lld tokens; use shorter audio or fewer tokens",
        name.c_str(), inputs.size(), t.duration_s, options.decoding.max_tokens,
        static_cast<long long>(c.context));
  }
  // The head is text only (the pads start after it) at positions 0.., so its rows are the
  // same for every prompt that starts with it; at least the pads are always prefilled.
  const std::span<const int32_t> head(prompt.tokens.data(), static_cast<size_t>(prompt.pad_start));
  const int64_t reused = StateFor(rows, head);
  vibeasr::DecoderState& st = *state;
  std::vector<float> logits;
  {
    std::lock_guard<FairMutex> lock(cp.mu);
    TERN_RETURN_IF_ERROR(
        st.Prefill(std::vector<vibeasr::DecoderInput>(inputs.begin() + reused, inputs.end()),
                   cp.pool, &logits));
  }
  cached_head.assign(head.begin(), head.end());
  t.metrics.prefill_ms = st.timings().prefill_ms;
  t.metrics.prompt_tokens = static_cast<int64_t>(inputs.size());
  t.metrics.prompt_reused_tokens = reused;
  const int32_t pos = static_cast<int32_t>(prompt.tokens.size());

  timer.Reset();
  // Beam search changes its mind until the end: its text goes out whole, at Finish.
  const engine::DecodeContext dc{*m.tokenizer, m.special, bias, options};
  engine::ContentStreamer streamer(stream, *m.tokenizer, m.special);
  Result<engine::Decoded> dec = [&]() -> Result<engine::Decoded> {
    if (options.decoding.beam > 1) {
      // Its hypotheses step one by one on copies of the state: alone on the threads (in a
      // BatchSession the others wait for this decode to end).
      std::lock_guard<FairMutex> lock(cp.mu);
      return engine::DecodeBeam(st, cp.pool, logits, pos, dc);
    }
    const engine::Membership member(*stepper);
    return engine::DecodeSampled(st, *stepper, std::move(logits), pos, dc, streamer);
  }();
  if (!dec.ok()) return dec.status();
  t.metrics.decode_ms = timer.ElapsedMs();
  t.metrics.decode_tokens = static_cast<int64_t>(dec->tokens.size());
  t.token_ids = dec->tokens;
  t.token_logprobs = dec->logprobs;
  t.stop_reason = dec->stop_reason;
  t.warnings = dec->warnings;
  if (t.stop_reason == "max_tokens" && !options.decoding.ignore_eos) {
    t.warnings.push_back("the transcript was cut off at the token limit (" +
                         std::to_string(options.decoding.max_tokens) +
                         " tokens); raise --max-tokens or use shorter --chunk-seconds");
  }

  // 4. Text: drop the model's own "<|im_start|>assistant\n" and the stop token.
  const engine::ContentRange r = engine::StripAssistantHeader(*m.tokenizer, m.special, t.token_ids);
  t.text =
      m.tokenizer->Decode(std::span<const int32_t>(t.token_ids).subspan(r.begin, r.end - r.begin));
  if (!streamer.Finish(t.token_ids, r))
    return CancelledError("transcription cancelled by the text callback");
  t.structured = engine::ParseJsonSegments(t.text, &t.segments);
  if (!t.structured) t.segments = {Segment{0.0, t.duration_s, -1, t.text}};
  for (Segment& s : t.segments) s.no_speech_prob = dec->no_speech_prob;
  if (options.on_progress) options.on_progress(1.0);

  t.metrics.wall_ms = wall.ElapsedMs();
  t.metrics.rtf = t.duration_s > 0 ? t.metrics.wall_ms / 1000.0 / t.duration_s : 0.0;
  t.metrics.peak_rss_bytes = PeakRssBytes();
  return t;
}

Result<Transcript> Session::Transcribe(const Audio& audio, const TranscribeOptions& asked) {
  return impl_->Transcribe(audio, asked);
}

Result<Transcript> Session::Impl::Transcribe(const Audio& audio, const TranscribeOptions& asked) {
  TERN_RETURN_IF_ERROR(asked.Validate());
  if (audio.samples.empty())
    return InvalidArgumentError("%s: no audio samples", audio.name.c_str());
  const ModelInfo& info = m().info;
  // What the model declares it was not trained for goes first in every transcript's
  // warnings (a context it cannot use is dropped: FitOptions).
  std::vector<std::string> warnings = OptionWarnings(info, asked);
  // Too quiet to hold speech: the model would invent words for the amplified noise.
  const int64_t n = static_cast<int64_t>(audio.samples.size());
  const double level = engine::LoudestFrameDbfs(audio.samples.data(), n, audio.gain);
  if (level < asked.no_speech_floor_dbfs) {
    Transcript t = engine::NoSpeechTranscript(audio, level, asked.no_speech_floor_dbfs);
    t.model = info.name;
    t.head = info.head;
    t.isa = info.isa;
    t.threads = compute->pool.size();
    t.warnings.insert(t.warnings.begin(), warnings.begin(), warnings.end());
    if (asked.on_progress) asked.on_progress(1.0);
    return t;
  }
  const std::string length = engine::LengthWarning(info, asked, audio.duration_s());
  if (!length.empty()) warnings.push_back(length);
  const TranscribeOptions options = engine::FitOptions(info, asked);
  Result<Transcript> t = TranscribeFitted(audio, options);
  if (!t.ok()) return t;
  engine::SnapToSpeechEdges(audio, options.snap_seconds, &*t);
  if (m().voices) {
    const std::string w = engine::LabelSpeakersByVoice(*m().voices, audio, &*t);
    if (!w.empty()) warnings.push_back(w);
  }
  // A context the model cannot use may leave it speechless (the published model's training
  // with context is not declared): never an empty transcript without a word why.
  if (!options.context.empty() && engine::TrimText(t->text).empty()) {
    warnings.push_back(
        "the transcript is empty with this context (--context / prompt): the "
        "model may not have been trained with one; try without it");
  }
  t->warnings.insert(t->warnings.begin(), warnings.begin(), warnings.end());
  return t;
}

Result<Transcript> Session::Impl::TranscribeFitted(const Audio& audio,
                                                   const TranscribeOptions& options) {
  const Model::Impl& m = this->m();
  const int64_t n = static_cast<int64_t>(audio.samples.size());
  // The whole audio's prompt, built once: it sizes the pieces, and is the one prompt when
  // the audio fits.
  Result<engine::Prompt> prompt =
      engine::BuildPrompt(*m.tokenizer, m.special, n, options.format, options.context);
  if (!prompt.ok()) return prompt.status().WithPrefix(audio.name);
  Result<int64_t> max_len =
      engine::MaxPieceSamples(*m.encoder, m.decoder->config().context, n, *prompt, options);
  if (!max_len.ok()) return max_len.status().WithPrefix(audio.name);
  // Spelled once per call (the spellings and the vocabulary scan for openers), before any
  // work: a word the tokenizer cannot encode fails here, not after the encoder.
  TERN_ASSIGN_OR_RETURN(const engine::HotwordBias bias,
                        engine::HotwordBias::FromWords(*m.tokenizer, options.decoding.hotwords,
                                                       options.decoding.hotword_boost));
  std::optional<engine::TextStream> stream;
  if (options.on_text) stream.emplace(options.on_text);
  engine::TextStream* text_stream = stream ? &*stream : nullptr;
  const std::vector<std::pair<int64_t, int64_t>> pieces =
      options.pieces_at_pauses ? engine::PlanPiecesAtPauses(audio.samples.data(), n, *max_len)
      : n > *max_len           ? engine::PlanPiecesByLength(audio.samples.data(), n, *max_len)
                               : std::vector<std::pair<int64_t, int64_t>>();
  if (pieces.size() <= 1) {  // one piece is the whole audio
    Result<Transcript> t =
        TranscribeWhole(audio.samples.data(), n, audio.name, *prompt, options, bias, text_stream);
    if (t.ok()) engine::ShiftToSource(audio.offset_s, &*t);
    return t;
  }
  return engine::TranscribeInPieces(
      audio, pieces, options,
      [&](const float* x, int64_t len, const std::string& name,
          const TranscribeOptions& o) -> Result<Transcript> {
        TERN_ASSIGN_OR_RETURN(engine::Prompt p, engine::BuildPrompt(*m.tokenizer, m.special, len,
                                                                    o.format, o.context));
        // Each piece is heard at the level a file of it would have (as a live piece is): a
        // quiet turn of a dialogue is not left at the loud turns' level. Held-out monologues
        // 10.8% -> 9.8% WER, dialogues 29.8% -> 26.5% (training/eval_mix.py).
        std::vector<float> own;
        if (audio.normalized) {
          own.assign(x, x + len);
          audio::Normalize(&own, /*clip_guard=*/true);
          x = own.data();
        }
        return TranscribeWhole(x, len, name, p, o, bias, text_stream);
      });
}

// Live pieces without a declared training length: 30 s, about what VibeASR's training
// clips hold; never more than the context holds either way.
constexpr double kLivePieceSeconds = 30.0;

Result<std::unique_ptr<LiveSession>> Session::StartLive(const LiveOptions& options) {
  TERN_RETURN_IF_ERROR(options.Validate());
  TranscribeOptions o = options.transcribe;
  o.chunk_seconds = 0;
  o.on_progress = nullptr;
  o.on_text = nullptr;
  const Model::Impl& m = impl_->m();
  // A model that declares the piece length it reads best gets live pieces of that length.
  const std::optional<double> trained = m.info.trained.chunk_seconds
                                            ? m.info.trained.chunk_seconds
                                            : m.info.trained.max_audio_seconds;
  const double seconds = options.max_piece_seconds > 0 ? options.max_piece_seconds
                         : trained ? std::max(2 * options.pause_seconds, *trained)
                                   : kLivePieceSeconds;
  const int64_t wanted = std::llround(seconds * engine::kModelSampleRate);
  TranscribeOptions fitted = engine::FitOptions(m.info, o);
  // The piece length is chosen above; here only the context bounds it (each piece is then
  // transcribed as a file is, automatic pieces included).
  fitted.chunk_seconds = 0;
  TERN_ASSIGN_OR_RETURN(engine::Prompt prompt, engine::BuildPrompt(*m.tokenizer, m.special, wanted,
                                                                   fitted.format, fitted.context));
  TERN_ASSIGN_OR_RETURN(
      const int64_t fits,
      engine::MaxPieceSamples(*m.encoder, m.decoder->config().context, wanted, prompt, fitted));
  const int64_t max_len = std::min(wanted, fits);
  const int64_t pause = std::llround(options.pause_seconds * engine::kModelSampleRate);
  if (max_len < 2 * pause) {
    return ResourceExhaustedError(
        "live: the decoder's context holds pieces of %.2f s with --max-tokens %d, shorter than "
        "twice the pause (%.2f s); use fewer tokens or a shorter pause",
        static_cast<double>(max_len) / engine::kModelSampleRate, o.decoding.max_tokens,
        options.pause_seconds);
  }
  // A word the tokenizer cannot spell fails here, before any audio.
  TERN_RETURN_IF_ERROR(
      engine::HotwordBias::FromWords(*m.tokenizer, o.decoding.hotwords, o.decoding.hotword_boost)
          .status());
  // Each piece goes through Transcribe as a file would: its final text is, by construction,
  // the offline transcript of the piece (options fitted to the model, the no-speech check).
  LiveSession::Impl::PieceDecoder decode = [this, o](const Audio& piece) {
    return Transcribe(piece, o);
  };
  auto impl = std::make_unique<LiveSession::Impl>(options, max_len, std::move(decode));
  if (m.voices) impl->speakers.emplace(*m.voices);
  return std::make_unique<LiveSession>(std::move(impl));
}

}  // namespace tern
