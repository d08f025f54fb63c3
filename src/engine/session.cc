// Session::Transcribe: encoder, prompt, prefill with the speech frames injected, decoding
// (greedy, sampling or beam search), then text and segments.
#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <thread>

#include "base/timer.h"
#include "engine/chunks.h"
#include "engine/hotwords.h"
#include "engine/live.h"
#include "engine/model_impl.h"
#include "engine/prefill.h"
#include "engine/prompt.h"
#include "engine/repetition.h"
#include "engine/sampler.h"
#include "engine/segments.h"
#include "engine/text_stream.h"
#include "runtime/thread_pool.h"

namespace tern {

struct Session::Impl {
  std::shared_ptr<const Model> model;
  ThreadPool pool;
  std::unique_ptr<vibeasr::DecoderState> state;
  vibeasr::Encoder::Scratch encoder_scratch;  // activation buffers kept between calls

  Impl(std::shared_ptr<const Model> m, int threads) : model(std::move(m)), pool(threads) {}

  const Model::Impl& m() const { return model->impl(); }

  // `bias`: options.decoding.hotwords as token sequences, built once per call. `stream`:
  // where the text goes as it is decoded (null without TranscribeOptions::on_text).
  Result<Transcript> TranscribeWhole(const float* x, int64_t n, const std::string& name,
                                     const TranscribeOptions& options,
                                     const engine::HotwordBias& bias,
                                     engine::TextStream* stream);
  Result<int64_t> MaxPieceSamples(int64_t n, const TranscribeOptions& options) const;

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

namespace {

int DefaultThreads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

bool Cancelled(const TranscribeOptions& o) {
  return o.cancel != nullptr && o.cancel->load(std::memory_order_relaxed);
}

struct Decoded {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;  // with DecodingOptions::logprobs
  std::string stop_reason;
  std::vector<std::string> warnings;
};

// Hotword boosts apply to the reply after the model's own "<|im_start|>assistant\n" (the
// header must not be tipped into a hotword). The content so far, or nullopt while the
// header is being written; where it begins is StripAssistantHeader's rule, so the boosted
// part is the transcript's part even when the model writes a malformed header.
std::optional<std::span<const int32_t>> Content(std::span<const int32_t> g,
                                                const text::Tokenizer& tok,
                                                const text::SpecialTokens& special) {
  if (g.empty()) return std::nullopt;
  if (g[0] != special.im_start) return g;
  if (g.size() < 3) return std::nullopt;
  return g.subspan(engine::StripAssistantHeader(tok, special, g).begin);
}

// Sends the reply's content to a TextStream as decoding goes, one token behind: the last
// token may be a stop token, which the transcript drops (StripAssistantHeader), so a token
// is sent once another follows it, and Finish sends the rest of the final content range.
// The content starts where Content() says, which is where StripAssistantHeader starts it.
class ContentStreamer {
 public:
  ContentStreamer(engine::TextStream* stream, const text::Tokenizer& tok,
                  const text::SpecialTokens& special)
      : stream_(stream), tok_(tok), special_(special) {}

  // After each generated token; false once the stream's callback has asked to stop.
  bool Step(std::span<const int32_t> g) {
    if (stream_ == nullptr) return true;
    const auto content = Content(g, tok_, special_);
    if (!content) return true;
    std::string bytes;
    for (; sent_ + 1 < content->size(); ++sent_) bytes.append(tok_.Piece((*content)[sent_]));
    return stream_->Append(bytes);
  }
  // The transcript's tokens and content range, once decoding is over.
  bool Finish(std::span<const int32_t> g, const engine::ContentRange& r) {
    if (stream_ == nullptr) return true;
    std::string bytes;
    for (size_t i = r.begin + sent_; i < r.end; ++i) bytes.append(tok_.Piece(g[i]));
    return stream_->Append(bytes) && stream_->EndPiece();
  }

 private:
  engine::TextStream* stream_;
  const text::Tokenizer& tok_;
  const text::SpecialTokens& special_;
  size_t sent_ = 0;  // content tokens sent
};

// Greedy or sampled decoding, one token at a time.
Result<Decoded> DecodeSampled(vibeasr::DecoderState& state, ThreadPool& pool,
                              std::vector<float> logits, int32_t pos,
                              const text::Tokenizer& tokenizer, const text::SpecialTokens& special,
                              const engine::HotwordBias& bias, const TranscribeOptions& o,
                              ContentStreamer& streamer) {
  const DecodingOptions& d = o.decoding;
  engine::Sampler sampler(d);
  Decoded out;
  out.stop_reason = "max_tokens";
  const int64_t vocab = static_cast<int64_t>(logits.size());
  std::vector<std::pair<int32_t, float>> saved;
  for (int i = 0; i < d.max_tokens; ++i) {
    if (Cancelled(o)) return CancelledError("transcription cancelled");
    saved.clear();
    if (!bias.empty()) {
      if (const auto content = Content(out.tokens, tokenizer, special))
        bias.Apply(*content, logits.data(), vocab, &saved);
    }
    const int32_t tok = sampler.Sample(logits.data(), vocab);
    engine::RestoreLogits(saved, logits.data());
    out.tokens.push_back(tok);
    if (d.logprobs) {
      out.logprobs.push_back(static_cast<float>(engine::LogProbOf(logits.data(), vocab, tok)));
    }
    if (special.IsStop(tok) && !d.ignore_eos) {
      out.stop_reason = "eos";
      break;
    }
    if (d.repetition_guard && engine::HasRepeatingTail(out.tokens, d.repetition_max_repeats)) {
      out.stop_reason = "repetition";
      out.warnings.push_back("the output started repeating itself; decoding stopped after " +
                             std::to_string(out.tokens.size()) + " tokens");
      break;
    }
    if (i + 1 == d.max_tokens) break;
    if (o.on_progress && !o.on_progress(0.5 + 0.5 * (i + 1) / static_cast<double>(d.max_tokens)))
      return CancelledError("transcription cancelled by the progress callback");
    if (!streamer.Step(out.tokens))
      return CancelledError("transcription cancelled by the text callback");
    TERN_RETURN_IF_ERROR(state.Step(tok, pos++, pool, &logits));
  }
  return out;
}

// Beam search: keeps the `beam` best partial hypotheses by total log-probability; finished
// ones are ranked by log-probability per token. Deterministic (ties to lower token ids).
Result<Decoded> DecodeBeam(const vibeasr::DecoderState& prefilled, ThreadPool& pool,
                           const std::vector<float>& first_logits, int32_t pos,
                           const text::Tokenizer& tokenizer, const text::SpecialTokens& special,
                           const engine::HotwordBias& bias, const TranscribeOptions& o) {
  const DecodingOptions& d = o.decoding;
  struct Hyp {
    std::unique_ptr<vibeasr::DecoderState> state;
    std::vector<float> logits;
    std::vector<int32_t> tokens;
    std::vector<float> logprobs;  // per token
    double logprob = 0;
  };
  struct Cand {
    double logprob;
    size_t hyp;
    int32_t token;
    double token_logprob;
  };
  std::vector<Hyp> alive;
  alive.push_back({std::make_unique<vibeasr::DecoderState>(prefilled), first_logits, {}, {}, 0.0});
  std::vector<Hyp> finished;
  std::vector<double> lp;
  std::vector<std::pair<int32_t, float>> saved;
  Decoded out;
  out.stop_reason = "max_tokens";
  for (int step = 0; step < d.max_tokens && !alive.empty(); ++step) {
    if (Cancelled(o)) return CancelledError("transcription cancelled");
    std::vector<Cand> cands;
    for (size_t h = 0; h < alive.size(); ++h) {
      float* logits = alive[h].logits.data();
      const int64_t vocab = static_cast<int64_t>(alive[h].logits.size());
      saved.clear();
      if (!bias.empty()) {
        if (const auto content = Content(alive[h].tokens, tokenizer, special))
          bias.Apply(*content, logits, vocab, &saved);
      }
      engine::LogSoftmax(logits, vocab, &lp);
      engine::RestoreLogits(saved, logits);
      std::vector<int32_t> idx(lp.size());
      for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int32_t>(i);
      const size_t k = std::min<size_t>(static_cast<size_t>(d.beam), idx.size());
      std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                        [&lp](int32_t a, int32_t b) { return lp[a] > lp[b] || (lp[a] == lp[b] && a < b); });
      for (size_t i = 0; i < k; ++i) {
        // the search ranks by the boosted scores; the reported log-probability is the model's
        const double own = saved.empty() || !d.logprobs ? lp[idx[i]]
                                                        : engine::LogProbOf(logits, vocab, idx[i]);
        cands.push_back({alive[h].logprob + lp[idx[i]], h, idx[i], own});
      }
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
      return a.logprob > b.logprob || (a.logprob == b.logprob && (a.hyp < b.hyp || (a.hyp == b.hyp && a.token < b.token)));
    });
    std::vector<Hyp> next;
    for (const Cand& c : cands) {
      if (static_cast<int>(next.size()) + static_cast<int>(finished.size()) >= d.beam) break;
      Hyp h;
      h.tokens = alive[c.hyp].tokens;
      h.tokens.push_back(c.token);
      if (d.logprobs) {
        h.logprobs = alive[c.hyp].logprobs;
        h.logprobs.push_back(static_cast<float>(c.token_logprob));
      }
      h.logprob = c.logprob;
      if (special.IsStop(c.token) && !d.ignore_eos) {
        finished.push_back(std::move(h));
        continue;
      }
      h.state = std::make_unique<vibeasr::DecoderState>(*alive[c.hyp].state);
      next.push_back(std::move(h));
    }
    if (step + 1 < d.max_tokens) {
      for (Hyp& h : next) TERN_RETURN_IF_ERROR(h.state->Step(h.tokens.back(), pos, pool, &h.logits));
    }
    ++pos;
    alive = std::move(next);
    if (static_cast<int>(finished.size()) >= d.beam) break;
  }
  const bool any_finished = !finished.empty();
  std::vector<Hyp>& pool_of = any_finished ? finished : alive;
  size_t best = 0;
  for (size_t i = 1; i < pool_of.size(); ++i) {
    const double a = pool_of[i].logprob / static_cast<double>(pool_of[i].tokens.size());
    const double b = pool_of[best].logprob / static_cast<double>(pool_of[best].tokens.size());
    if (a > b) best = i;
  }
  out.tokens = pool_of[best].tokens;
  if (d.logprobs) out.logprobs = pool_of[best].logprobs;
  if (any_finished) out.stop_reason = "eos";
  return out;
}

}  // namespace

Session::Session(std::shared_ptr<const Model> model, int threads)
    : impl_(std::make_unique<Impl>(std::move(model), DefaultThreads(threads))) {}
Session::~Session() = default;
int Session::threads() const { return impl_->pool.size(); }

Result<Features> Session::Encode(const Audio& audio) {
  if (audio.samples.empty()) return InvalidArgumentError("%s: no audio samples", audio.name.c_str());
  TERN_ASSIGN_OR_RETURN(vibeasr::Features f,
                        impl_->m().encoder->Run(audio.samples.data(), audio.samples.size(),
                                                impl_->pool, nullptr, &impl_->encoder_scratch));
  Features out;
  out.frames = f.frames;
  out.hidden = f.hidden;
  out.data = std::move(f.data);
  return out;
}

// One prompt for samples x[0, n) (the whole audio, or one piece of it).
Result<Transcript> Session::Impl::TranscribeWhole(const float* x, int64_t n,
                                                  const std::string& name,
                                                  const TranscribeOptions& options,
                                                  const engine::HotwordBias& bias,
                                                  engine::TextStream* stream) {
  const Model::Impl& m = this->m();
  Timer wall;
  Transcript t;
  t.duration_s = static_cast<double>(n) / engine::kModelSampleRate;
  t.model = m.info.name;
  t.head = m.info.head;
  t.isa = m.info.isa;
  t.threads = pool.size();

  // 1. Encoder: frames x hidden speech features.
  vibeasr::EncoderTimings et;
  Timer timer;
  TERN_ASSIGN_OR_RETURN(vibeasr::Features feats,
                        m.encoder->Run(x, static_cast<size_t>(n), pool, &et, &encoder_scratch));
  t.metrics.encoder_ms = timer.ElapsedMs();
  t.metrics.stages = et.stages;
  if (Cancelled(options)) return CancelledError("transcription cancelled");
  if (options.on_progress && !options.on_progress(0.5))
    return CancelledError("transcription cancelled by the progress callback");

  // 2. Prompt, with N pad slots of which the first F carry the frames.
  TERN_ASSIGN_OR_RETURN(engine::Prompt prompt,
                        engine::BuildPrompt(*m.tokenizer, m.special, n, options.format,
                                            options.context));
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
  TERN_RETURN_IF_ERROR(st.Prefill(
      std::vector<vibeasr::DecoderInput>(inputs.begin() + reused, inputs.end()), pool, &logits));
  cached_head.assign(head.begin(), head.end());
  t.metrics.prefill_ms = st.timings().prefill_ms;
  t.metrics.prompt_tokens = static_cast<int64_t>(inputs.size());
  t.metrics.prompt_reused_tokens = reused;
  const int32_t pos = static_cast<int32_t>(prompt.tokens.size());

  timer.Reset();
  // Beam search changes its mind until the end: its text goes out whole, at Finish.
  ContentStreamer streamer(stream, *m.tokenizer, m.special);
  Result<Decoded> dec = options.decoding.beam > 1
      ? DecodeBeam(st, pool, logits, pos, *m.tokenizer, m.special, bias, options)
      : DecodeSampled(st, pool, std::move(logits), pos, *m.tokenizer, m.special, bias, options,
                      streamer);
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
  t.text = m.tokenizer->Decode(std::span<const int32_t>(t.token_ids).subspan(r.begin, r.end - r.begin));
  if (!streamer.Finish(t.token_ids, r))
    return CancelledError("transcription cancelled by the text callback");
  t.structured = engine::ParseJsonSegments(t.text, &t.segments);
  if (!t.structured) t.segments = {Segment{0.0, t.duration_s, -1, t.text}};
  if (options.on_progress) options.on_progress(1.0);

  t.metrics.wall_ms = wall.ElapsedMs();
  t.metrics.rtf = t.duration_s > 0 ? t.metrics.wall_ms / 1000.0 / t.duration_s : 0.0;
  t.metrics.peak_rss_bytes = PeakRssBytes();
  return t;
}

namespace {

// Times count from the source's start: an excerpt (AudioOptions::offset_s) shifts them.
void ShiftToSource(double offset, Transcript* t) {
  t->offset_s = offset;
  if (offset == 0) return;
  for (Segment& s : t->segments) {
    if (s.start >= 0) s.start += offset;
    if (s.end >= 0) s.end += offset;
  }
  for (auto& [a, b] : t->pieces) {
    a += offset;
    b += offset;
  }
}

}  // namespace

// Encoder activations per piece when no --chunk-seconds is given: about 13 minutes of audio
// at the published geometry (~5.2 MB per second), so a long recording neither exhausts a
// 16 GB machine nor depends, in where it is cut, on the machine it runs on.
constexpr size_t kPieceEncoderBytes = size_t{4} << 30;

// The longest piece (samples) whose prompt and output budget fit the decoder's context, and
// then either within options.chunk_seconds or, without it, within kPieceEncoderBytes of
// encoder activations; an error when not even one frame fits the context.
Result<int64_t> Session::Impl::MaxPieceSamples(int64_t n, const TranscribeOptions& options) const {
  int64_t limit = n;
  if (options.chunk_seconds > 0) {
    limit = std::min<int64_t>(limit,
                              std::llround(options.chunk_seconds * engine::kModelSampleRate));
  } else if (m().encoder->WorkspaceBytes(static_cast<size_t>(n)) > kPieceEncoderBytes) {
    int64_t lo = engine::kSamplesPerFrame, hi = n;  // WorkspaceBytes grows with n
    while (hi - lo > engine::kSamplesPerFrame) {
      const int64_t mid = lo + (hi - lo) / 2;
      (m().encoder->WorkspaceBytes(static_cast<size_t>(mid)) <= kPieceEncoderBytes ? lo : hi) = mid;
    }
    limit = lo;
  }
  const int64_t context = m().decoder->config().context;
  if (context <= 0) return limit;
  // Everything but the pads, from the whole audio's prompt (a piece's duration has no more
  // digits), plus a few tokens of slack for tokenizers that split digits differently.
  TERN_ASSIGN_OR_RETURN(engine::Prompt p, engine::BuildPrompt(*m().tokenizer, m().special, n,
                                                              options.format, options.context));
  const int64_t fixed = static_cast<int64_t>(p.tokens.size()) - p.pad_count + 4;
  const int64_t pads = context - options.decoding.max_tokens - fixed;
  if (pads < 1) {
    return ResourceExhaustedError(
        "the prompt (%lld tokens besides the audio) plus --max-tokens %d leaves no room for "
        "audio in the model's context of %lld tokens; use fewer --max-tokens",
        static_cast<long long>(fixed), options.decoding.max_tokens,
        static_cast<long long>(context));
  }
  return std::min(limit, pads * engine::kSamplesPerFrame);
}

Result<Transcript> Session::Transcribe(const Audio& audio, const TranscribeOptions& options) {
  TERN_RETURN_IF_ERROR(options.Validate());
  if (audio.samples.empty()) return InvalidArgumentError("%s: no audio samples", audio.name.c_str());
  const int64_t n = static_cast<int64_t>(audio.samples.size());
  Result<int64_t> max_len = impl_->MaxPieceSamples(n, options);
  if (!max_len.ok()) return max_len.status().WithPrefix(audio.name);
  // Spelled once per call (the spellings and the vocabulary scan for openers), before any
  // work: a word the tokenizer cannot encode fails here, not after the encoder.
  TERN_ASSIGN_OR_RETURN(const engine::HotwordBias bias,
                        engine::HotwordBias::FromWords(*impl_->m().tokenizer,
                                                       options.decoding.hotwords,
                                                       options.decoding.hotword_boost));
  std::optional<engine::TextStream> stream;
  if (options.on_text) stream.emplace(options.on_text);
  engine::TextStream* text_stream = stream ? &*stream : nullptr;
  if (n <= *max_len) {
    Result<Transcript> t =
        impl_->TranscribeWhole(audio.samples.data(), n, audio.name, options, bias, text_stream);
    if (t.ok()) ShiftToSource(audio.offset_s, &*t);
    return t;
  }

  // Long audio: one prompt per piece, in order, merged into one transcript with the pieces'
  // times shifted to the whole file. Speaker numbers restart in every piece.
  Timer wall;
  const std::vector<std::pair<int64_t, int64_t>> pieces =
      engine::PlanChunks(audio.samples.data(), n, *max_len);
  const double sr = engine::kModelSampleRate;
  Transcript all;
  all.duration_s = audio.duration_s();
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto [b, e] = pieces[i];
    const double t0 = static_cast<double>(b) / sr, t1 = static_cast<double>(e) / sr;
    TranscribeOptions o = options;
    if (options.on_progress) {
      const double lo = static_cast<double>(i) / pieces.size(), hi = (i + 1.0) / pieces.size();
      o.on_progress = [&options, lo, hi](double p) {
        return options.on_progress(lo + p * (hi - lo));
      };
    }
    const std::string name = audio.name + " " + engine::PieceLabel(t0, t1);  // for errors
    Result<Transcript> part =
        impl_->TranscribeWhole(audio.samples.data() + b, e - b, name, o, bias, text_stream);
    if (!part.ok()) return part.status();
    engine::AppendPiece(*part, t0, t1, &all);
  }
  all.metrics.wall_ms = wall.ElapsedMs();
  all.metrics.rtf = all.duration_s > 0 ? all.metrics.wall_ms / 1000.0 / all.duration_s : 0.0;
  all.metrics.peak_rss_bytes = PeakRssBytes();
  ShiftToSource(audio.offset_s, &all);
  return all;
}

// Live pieces: 30 s unless the caller says, and never more than the context holds.
constexpr double kLivePieceSeconds = 30.0;

Result<std::unique_ptr<LiveSession>> Session::StartLive(const LiveOptions& options) {
  TERN_RETURN_IF_ERROR(options.Validate());
  TranscribeOptions o = options.transcribe;
  o.chunk_seconds = 0;
  o.on_progress = nullptr;
  o.on_text = nullptr;
  const double seconds = options.max_piece_seconds > 0 ? options.max_piece_seconds
                                                       : kLivePieceSeconds;
  const int64_t wanted = std::llround(seconds * engine::kModelSampleRate);
  TERN_ASSIGN_OR_RETURN(const int64_t fits, impl_->MaxPieceSamples(wanted, o));
  const int64_t max_len = std::min(wanted, fits);
  const int64_t pause = std::llround(options.pause_seconds * engine::kModelSampleRate);
  if (max_len < 2 * pause) {
    return ResourceExhaustedError(
        "live: the decoder's context holds pieces of %.2f s with --max-tokens %d, shorter than "
        "twice the pause (%.2f s); use fewer tokens or a shorter pause",
        static_cast<double>(max_len) / engine::kModelSampleRate, o.decoding.max_tokens,
        options.pause_seconds);
  }
  TERN_ASSIGN_OR_RETURN(engine::HotwordBias bias,
                        engine::HotwordBias::FromWords(*impl_->m().tokenizer, o.decoding.hotwords,
                                                       o.decoding.hotword_boost));
  auto shared_bias = std::make_shared<const engine::HotwordBias>(std::move(bias));
  Impl* impl = impl_.get();
  LiveSession::Impl::PieceDecoder decode = [impl, o, shared_bias](const float* x, int64_t n,
                                                                  const std::string& name) {
    return impl->TranscribeWhole(x, n, name, o, *shared_bias, nullptr);
  };
  return std::make_unique<LiveSession>(
      std::make_unique<LiveSession::Impl>(options, max_len, std::move(decode)));
}

}  // namespace tern
