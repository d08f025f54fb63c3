// tern: quantized speech recognition on CPUs. This header is the whole public C++ API;
// the `tern` CLI uses nothing else, and a server would use the same.
//
// Threading contract:
//   * A Model is immutable after Load and may be shared by any number of threads and
//     Sessions (hold it through the shared_ptr).
//   * A Session owns all mutable state (thread pool, KV cache, scratch). One Session is used
//     by one thread at a time; run several Sessions for concurrent requests.
//   * Results do not depend on the thread count: the same audio and options give the same
//     token ids with 1, 2 or N threads, and on every kernel ISA.
//
// Errors: every call that a user, a file or a request can make fail returns a Status or
// Result (tern/status.h) whose message names the file, field and reason. Nothing here
// throws or exits.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tern/status.h"
#include "tern/types.h"

namespace tern {

// ---- Model -----------------------------------------------------------------------------

// HeadPrecision: tern/types.h.
Result<HeadPrecision> HeadPrecisionFromName(std::string_view name);  // f16|int8

struct ModelOptions {
  // A directory holding vibeasr-vae-encoder-i8_s.gguf and vibeasr-lm-i2_s-embed-q6_k.gguf.
  std::string model_dir;
  // Or the two files directly (each overrides the one found in model_dir).
  std::string vae_path;
  std::string lm_path;
  HeadPrecision head = HeadPrecision::kF16;

  Status Validate() const;
};

// What the model declares it was trained with: the LM GGUF's tern.trained.* keys
// (docs/formats-tern-keys.md), which other GGUF readers ignore. A key that is absent (the
// published checkpoint has none) is unknown: nothing is assumed and nothing is warned.
struct TrainedWith {
  std::optional<bool> context;              // tern.trained.context: prompts with extra info
  std::optional<bool> json_format;          // tern.trained.json_format: PromptFormat::kJson
  std::optional<double> max_audio_seconds;  // tern.trained.max_audio_seconds: longest clip
  // tern.trained.chunk_seconds: the piece length the model reads long audio best in,
  // measured on held-out long clips (a model trained on long clips may still read them
  // worse than short pieces); automatic pieces use it over 0.6 x max_audio_seconds.
  std::optional<double> chunk_seconds;
  // tern.trained.snap_seconds: how far the model's segment times may be from the speech they
  // cover; the engine moves them to the nearest edges of speech within it (snap_times.h).
  std::optional<double> snap_seconds;
  // tern.trained.beam: the beam width the model was measured to read best with; the default
  // when a caller leaves DecodingOptions::beam at 0 and does not sample.
  std::optional<int> beam;
  // tern.trained.utterance_pieces: the model reads audio best one utterance per prompt, so
  // the engine cuts it at every pause (TranscribeOptions::pieces_at_pauses).
  std::optional<bool> utterance_pieces;
};

struct ModelInfo {
  std::string vae_path, lm_path;
  std::string name;  // general.name of the LM file, if any
  int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, ffn = 0;
  int64_t context = 0;  // qwen2.context_length
  std::string head;     // "f16" or "int8"
  std::string isa;      // kernel ISA in use ("avx512", "avx2", "neon", "scalar")
  double load_ms = 0;
  TrainedWith trained;
};

class Model {
 public:
  static Result<std::shared_ptr<const Model>> Load(const ModelOptions& options);
  ~Model();
  const ModelInfo& info() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- Audio (AudioOptions and Audio: tern/types.h) ----------------------------------------

// Decodes WAV, FLAC, OGG/Vorbis or MP3, mixes to mono, resamples to 24 kHz, normalizes.
Result<Audio> LoadAudio(const std::string& path, const AudioOptions& options = {});
Result<Audio> LoadAudioFromMemory(const void* data, size_t size, const std::string& name,
                                  const AudioOptions& options = {});

// ---- Transcription ---------------------------------------------------------------------

enum class PromptFormat {
  kText,  // the model answers with plain text (the BitNet model's native form)
  kJson,  // asks for [{"Start":..,"End":..,"Speaker":..,"Content":..}] segments
};

struct DecodingOptions {
  // Greedy (ties to the lowest id) when temperature == 0 and beam == 1.
  float temperature = 0.0f;
  int top_k = 0;       // 0: no top-k cut
  float top_p = 1.0f;  // 1: no nucleus cut
  uint64_t seed = 42;
  // > 1: beam search with this width (deterministic); 1: greedy or sampled; 0 (the default):
  // the width the model declares (TrainedWith::beam) when decoding greedily with no on_text
  // (beam search sends its text whole at the end), else 1.
  int beam = 0;
  int max_tokens = 1024;  // generated tokens, including the model's own header
  // Stop (with a warning) when the tail repeats an n-gram this many times in a row.
  bool repetition_guard = true;
  int repetition_max_repeats = 8;
  // Benchmarks: keep decoding past end-of-turn until max_tokens (measures real work on
  // synthetic checkpoints that would stop at random).
  bool ignore_eos = false;
  // Record each generated token's log-probability (Transcript::token_logprobs): one more
  // pass over the vocabulary per token.
  bool logprobs = false;
  // Words to favour (names, jargon): each token that begins or continues one of them gets
  // hotword_boost added to its logit once the model's own reply header is written.
  // token_logprobs stay the model's own.
  std::vector<std::string> hotwords;  // SplitHotwords reads them from "w1, w2"
  float hotword_boost = 2.0f;

  Status Validate() const;
};

// "w1, w2,w3" -> {"w1", "w2", "w3"}: comma-separated, spaces around each word dropped; an
// empty word is an error quoting the list.
Result<std::vector<std::string>> SplitHotwords(std::string_view list);

struct TranscribeOptions {
  PromptFormat format = PromptFormat::kText;
  std::string context;  // extra info folded into the prompt ("with extra info: ...")
  DecodingOptions decoding;
  // Long audio. 0: one prompt for the whole audio when its pads and max_tokens fit the
  // decoder's context, else consecutive pieces that do (cut at the quietest moment near each
  // limit). > 0: also at most this many seconds per piece (bounds memory; at least 1 s).
  // Each piece is transcribed on its own: speaker numbers restart in every piece.
  double chunk_seconds = 0;
  // JSON segments' times: > 0 moves each start (end) to the nearest onset (offset) of speech
  // within this many seconds (engine/snap_times.h); 0 keeps the model's times; -1 (the
  // default) uses what the model declares (TrainedWith::snap_seconds), else 0.
  double snap_seconds = -1;
  // One piece per stretch of speech between pauses of 0.4 s or more (each still at most
  // chunk_seconds long), for a model that reads one utterance per prompt best. Set by
  // FitOptions for a model that declares TrainedWith::utterance_pieces when chunk_seconds is
  // left at 0; false keeps pieces only where the length requires them.
  bool pieces_at_pauses = false;
  // Audio whose loudest 25 ms frame (measured every 5 ms, on the source's level:
  // Audio::samples / Audio::gain) is quieter than this many dBFS holds no speech: the
  // transcript is empty, with stop_reason "no_speech" and a warning, and the model does not
  // run (it would invent words for the amplified noise). The quietest bundled and test
  // clips have their loudest frame at -28 dBFS. -150 turns the check off.
  double no_speech_floor_dbfs = -55.0;
  // Called with the fraction of work done (0..1); return false to cancel.
  std::function<bool(double)> on_progress;
  // Called with the transcript's text as it is decoded, a delta at a time (from the thread
  // that called Transcribe): the deltas concatenate byte for byte to Transcript::text
  // without its leading and trailing blanks (the text the txt and json writers show), each
  // but the last ends at a UTF-8 character boundary, and each token's text arrives once the
  // next token is decoded. Beam search sends its text whole at the end; with
  // PromptFormat::kJson the text is the model's JSON as written. Return false to cancel.
  std::function<bool(std::string_view delta)> on_text;
  const std::atomic<bool>* cancel = nullptr;

  Status Validate() const;
};

struct Segment {
  double start = -1, end = -1;  // seconds; -1 when the model gave no time
  int speaker = -1;             // -1 when the model gave no speaker
  std::string text;
  // The model's probability that there was nothing to transcribe: its probability of
  // ending the reply before any word (one value for every segment of one prompt); -1 when
  // not measured (decoding stopped inside the reply's header, or no model ran).
  double no_speech_prob = -1;
};

struct Metrics {
  double audio_ms = 0;    // decode + resample + normalize (when the Session loaded it)
  double encoder_ms = 0;  // both branches
  double prefill_ms = 0;
  double decode_ms = 0;
  int64_t prompt_tokens = 0;
  int64_t prompt_reused_tokens = 0;  // of those, rows kept from the Session's previous prompt
  int64_t decode_tokens = 0;
  double decode_ms_per_token() const {
    return decode_tokens > 0 ? decode_ms / static_cast<double>(decode_tokens) : 0.0;
  }
  double wall_ms = 0;  // encoder + prefill + decode + text
  double rtf = 0;      // wall / audio duration
  size_t peak_rss_bytes = 0;
  std::vector<std::pair<std::string, double>> stages;  // encoder per-stage ms
};

struct Transcript {
  std::string text;                       // the whole transcript
  std::vector<Segment> segments;          // parsed JSON segments, or one segment with the text
  bool structured = false;                // true when segments came from the model's JSON
  std::vector<int32_t> prompt_token_ids;  // the prompt as built, pads included
  std::vector<int32_t> token_ids;         // every generated id, incl. header and stop token
  // With DecodingOptions::logprobs: log p(id | everything before) under the model's own
  // distribution (temperature 1), one per token_ids entry; a confidence signal.
  std::vector<float> token_logprobs;
  std::string stop_reason;  // "eos", "max_tokens", "repetition"
  std::vector<std::string> warnings;
  int64_t frames = 0;     // encoder frames fed to the decoder
  double duration_s = 0;  // of the audio transcribed
  double offset_s = 0;    // its start in the source (Audio::offset_s): segment and
                          // piece times include it
  // Audio longer than one prompt holds (see TranscribeOptions::chunk_seconds): the [start,
  // end) seconds of each piece, in order; empty when the audio went in one prompt. Then
  // prompt_token_ids is the first piece's prompt and token_ids the pieces' ids in turn.
  std::vector<std::pair<double, double>> pieces;
  Metrics metrics;
  std::string model;  // LM file name (general.name when present)
  std::string head;   // "f16" or "int8"
  std::string isa;
  int threads = 0;
};

struct LiveOptions;
class LiveSession;

class Session {
 public:
  // threads <= 0: the number of online CPUs.
  explicit Session(std::shared_ptr<const Model> model, int threads = 0);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Result<Transcript> Transcribe(const Audio& audio, const TranscribeOptions& options);
  Result<Features> Encode(const Audio& audio);
  int threads() const;

  // Live transcription (below): the LiveSession uses this Session (its threads, KV cache and
  // encoder buffers) until it is destroyed; use neither while the other runs.
  Result<std::unique_ptr<LiveSession>> StartLive(const LiveOptions& options);

 private:
  friend class BatchSession;  // its lanes are Session::Impls
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Many transcriptions at once over one Model (docs/batching.md). Transcribe may be called
// from up to max_batch threads at once (more wait for a free lane). Each transcription runs
// its encoder and prefill alone on the shared threads, then decodes in lockstep with the
// others: one batched decoder step advances every transcription that is decoding by one
// token, so the decoder's weights stream from memory once per step for all of them instead
// of once per transcription. Its tokens, log-probabilities and text are exactly those
// Session::Transcribe gives for the same audio and options, whatever runs beside it. Beam
// search (DecodingOptions::beam > 1) decodes alone; the others wait for it.
class BatchSession {
 public:
  // threads <= 0: the number of online CPUs; max_batch in [1, 256].
  BatchSession(std::shared_ptr<const Model> model, int threads = 0, int max_batch = 16);
  ~BatchSession();
  BatchSession(const BatchSession&) = delete;
  BatchSession& operator=(const BatchSession&) = delete;

  // Session::Transcribe's contract; blocks until done (or until a lane is free first).
  Result<Transcript> Transcribe(const Audio& audio, const TranscribeOptions& options);
  int threads() const;
  int max_batch() const;

  // Batched decoder steps run so far, and the sequences they advanced (their ratio is the
  // mean batch size).
  struct Stats {
    int64_t steps = 0;
    int64_t rows = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What running these options on this model should be told before any audio: an option the
// model declares it was not trained for (TrainedWith). Session::Transcribe puts the same
// lines in every Transcript::warnings; a front end with many inputs prints them once.
// With TrainedWith::context false, a context is not used (the model answers it with
// garbage or nothing): the warning says so.
std::vector<std::string> OptionWarnings(const ModelInfo& model, const TranscribeOptions& options);

// ---- Live transcription ----------------------------------------------------------------
//
// Audio that is still arriving, cut into pieces at pauses (docs/live.md). Every encoder
// activation is int8 with one scale per whole tensor (its absmax over all frames), so the
// features of a frame depend on the frames after it in the same tensor: a growing stream
// cannot be encoded incrementally to the same bytes as the whole. Instead the open piece
// (seconds long) is re-encoded and re-decoded from its start at every update (a partial
// result), and once a pause ends it, or it reaches the maximum length, its text is final:
// committed, never rewritten, and the next piece starts with a fresh prompt. A final text is
// byte for byte what Transcribe gives for the piece's samples (each piece goes through it,
// normalized as LiveOptions says); it does not depend on how the stream was cut into Feed
// calls nor on the threads.

struct LiveOptions {
  // Prompt format, context and decoding (hotwords included) for every piece; chunk_seconds,
  // on_progress and on_text are not used (a piece is one prompt; the events carry the text).
  TranscribeOptions transcribe;
  int sample_rate = 24000;      // of the samples given to Feed; others are resampled
  double update_seconds = 0.5;  // a partial result each time this much new audio arrived
  // A pause: this long with every 10 ms frame at least silence_db below the loudest frame of
  // the piece (and of the piece before it), or below -55 dBFS.
  double pause_seconds = 0.5;
  double silence_db = -35;
  // The longest piece; one without a pause is cut at its quietest 400 ms in the second
  // half. 0: the piece length the model declares it reads best (TrainedWith::chunk_seconds),
  // else the longest clip it declares it was trained on (max_audio_seconds), else 30 s; never
  // more than the decoder's context holds with transcribe.decoding.max_tokens.
  double max_piece_seconds = 0;
  // Each piece RMS-normalized and clip-guarded as LoadAudio does a file (AudioOptions).
  bool normalize = true;

  Status Validate() const;
};

struct LiveEvent {
  enum class Kind {
    kSpeechStarted,  // the open piece's first frame louder than silence (start_sample)
    kPartial,        // the open piece's text so far: replaced by the next partial or final
    kFinal,          // the piece's text, committed
  };
  Kind kind = Kind::kPartial;
  int64_t piece = 0;  // 0, 1, ...: pieces in order (only pieces with speech are counted)
  // 24 kHz sample indices from the stream's start: the piece's start, and the end of the
  // audio the text covers (the piece's end for kFinal). kSpeechStarted: both where it began.
  int64_t start_sample = 0, end_sample = 0;
  // The samples received when the event was decided: end_sample for a partial; for a final
  // cut at a pause, the sample that completed the pause (pause_seconds / 2 after its end).
  int64_t heard_sample = 0;
  double start_s() const { return static_cast<double>(start_sample) / 24000.0; }
  double end_s() const { return static_cast<double>(end_sample) / 24000.0; }
  std::string text;  // as Transcript::text (kPartial, kFinal)
  // From the Feed (or Finish) call that delivered heard_sample to the event being ready:
  // the compute lag a caller feeding in real time sees.
  double lag_ms = 0;
  Metrics metrics;        // kPartial, kFinal: the piece's encoder, prefill and decoding work
  Transcript transcript;  // kFinal: the piece's, segment times from the stream's start
};

// "speech_started", "partial", "final": the names the CLI's JSON lines and Python use.
const char* LiveEventKindName(LiveEvent::Kind kind);

class LiveSession {
 public:
  // Samples at LiveOptions::sample_rate, any number per call (none is fine); appends the
  // events they cause, in order. An error (the decoder's) leaves the session unusable.
  Status Feed(const float* samples, size_t n, std::vector<LiveEvent>* events);
  // The stream ended: the open piece, if it holds speech, becomes final. Feed and Finish
  // are errors afterwards.
  Status Finish(std::vector<LiveEvent>* events);
  int64_t samples_received() const;  // at 24 kHz

  struct Impl;
  explicit LiveSession(std::unique_ptr<Impl> impl);  // Session::StartLive makes them
  ~LiveSession();
  LiveSession(const LiveSession&) = delete;
  LiveSession& operator=(const LiveSession&) = delete;

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- Output ----------------------------------------------------------------------------

enum class OutputFormat { kTxt, kJson, kVerboseJson, kSrt, kVtt };
Result<OutputFormat> OutputFormatFromName(std::string_view name);  // txt|json|verbose_json|srt|vtt
// ".txt", ".json", ".verbose.json", ".srt", ".vtt": distinct for every format, so one input's
// files in one directory never overwrite each other.
const char* OutputFormatExtension(OutputFormat format);
struct FormatOptions {
  // srt/vtt: split cues longer than this many bytes at word boundaries (preferring a break
  // after punctuation), sharing the cue's time among the pieces in proportion to their
  // length (an estimate: the model gives times per segment, not per word). 0: off.
  int max_cue_chars = 0;
  // json and verbose_json: when not empty, a "file" field with this name (several inputs
  // written to one stream).
  std::string file_name;
  Status Validate() const;
};
std::string FormatTranscript(const Transcript& t, OutputFormat format,
                             const FormatOptions& options = {});

// The width in columns of the terminal `f` writes to, 0 when it is not a terminal (80 when
// the terminal does not say): where the CLI may overwrite a line in place.
int TerminalColumns(std::FILE* f);

// CPU features, available kernel ISAs and the chosen one (TERN_ISA), one item per line.
Result<std::string> SystemInfo();

// One line for `--version`: "tern 0.1.0 (git 1a2b3c4) isas: avx512 avx2 scalar" (the kernel
// ISAs this CPU can run; the git hash is the one the build was configured from, "unknown"
// outside a checkout).
std::string VersionString();

}  // namespace tern
