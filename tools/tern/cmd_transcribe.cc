// tern transcribe: audio files in, transcripts out. Uses only the public API (tern/tern.h).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "destinations.h"
#include "live.h"
#include "tern/tern.h"

namespace tern::cli {
namespace {

struct Flags {
  ModelOptions model;
  std::string head = "f16";
  int threads = 0;
  int parallel = 1;
  std::string prompt_format = "text";
  TranscribeOptions transcribe;
  AudioOptions audio;
  bool no_normalize = false;
  bool no_clip_guard = false;
  bool no_repetition_guard = false;
  std::string hotwords;
  std::string output_format = "txt";
  FormatOptions format_options;
  std::string output_file;
  std::string output_dir;
  std::string dump_features;
  bool metrics = false;
  bool quiet = false;
  bool stream = false;
  bool live = false;
  LiveCliOptions live_cli;
  std::vector<std::string> inputs;
};

void PrintMetrics(const std::string& name, const Transcript& t, double load_ms) {
  const Metrics& m = t.metrics;
  std::fprintf(stderr,
               "metrics: file=%s duration_s=%.2f frames=%lld load_ms=%.1f audio_ms=%.1f "
               "encoder_ms=%.1f prefill_ms=%.1f prompt_tokens=%lld prompt_reused=%lld "
               "decode_ms=%.1f decode_tokens=%lld decode_ms_per_token=%.2f wall_ms=%.1f rtf=%.4f "
               "peak_rss_mb=%.1f isa=%s threads=%d head=%s\n",
               name.c_str(), t.duration_s, static_cast<long long>(t.frames), load_ms, m.audio_ms,
               m.encoder_ms, m.prefill_ms, static_cast<long long>(m.prompt_tokens),
               static_cast<long long>(m.prompt_reused_tokens), m.decode_ms,
               static_cast<long long>(m.decode_tokens), m.decode_ms_per_token(), m.wall_ms, m.rtf,
               static_cast<double>(m.peak_rss_bytes) / 1e6, t.isa.c_str(), t.threads,
               t.head.c_str());
  if (!m.stages.empty()) {
    std::fprintf(stderr, "metrics: encoder stages (ms):");
    for (const auto& [stage, ms] : m.stages) std::fprintf(stderr, " %s=%.1f", stage.c_str(), ms);
    std::fputc('\n', stderr);
  }
}

// "-" is standard input, read whole (compressed formats need to seek), up to kMaxStdinBytes.
constexpr size_t kMaxStdinBytes = size_t{2} << 30;

Result<Audio> ReadInput(const std::string& input, const AudioOptions& options) {
  if (input != "-") return LoadAudio(input, options);
  std::string bytes;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
    if (bytes.size() + got > kMaxStdinBytes)
      return ResourceExhaustedError("stdin: more than %zu MB of audio; pass a file instead",
                                    kMaxStdinBytes >> 20);
    bytes.append(buf, got);
  }
  if (std::ferror(stdin)) return IoError("stdin: read failed");
  return LoadAudioFromMemory(bytes.data(), bytes.size(), "stdin", options);
}

// A transcript's warnings (but those in `said`, printed once for the whole run:
// OptionWarnings), its header when the output names inputs, its writers, its metrics.
Status Emit(const Flags& f, const std::string& input, const std::string& name, const Transcript& t,
            const std::vector<OutputFormat>& formats, const Destination& dest, double load_ms,
            const std::vector<std::string>& said) {
  for (const std::string& w : t.warnings) {
    if (std::find(said.begin(), said.end(), w) != said.end()) continue;
    std::fprintf(stderr, "tern: warning: %s: %s\n", name.c_str(), w.c_str());
  }
  if (!f.stream) PrintHeaderIfNamed(dest, name, formats);
  TERN_RETURN_IF_ERROR(WriteTranscript(t, input, name, formats, f.format_options, dest));
  if (f.metrics) PrintMetrics(name, t, load_ms);
  return Status::Ok();
}

// One input: audio, features if asked, transcript to its destination, metrics.
Status TranscribeOne(Flags& f, const std::string& input, const std::vector<OutputFormat>& formats,
                     const Destination& dest, Session& session, double load_ms,
                     const std::vector<std::string>& said) {
  const std::string name = input == "-" ? "stdin" : input;
  TERN_ASSIGN_OR_RETURN(Audio audio, ReadInput(input, f.audio));
  if (!f.quiet && audio.duration_s() > 30.0) {
    f.transcribe.on_progress = [&name](double p) {
      std::fprintf(stderr, "\rtern: %s: %3.0f%%", name.c_str(), p * 100.0);
      if (p >= 1.0) std::fputc('\n', stderr);
      return true;
    };
  } else {
    f.transcribe.on_progress = nullptr;
  }
  if (!f.dump_features.empty()) {
    TERN_ASSIGN_OR_RETURN(Features feats, session.Encode(audio));
    TERN_RETURN_IF_ERROR(
        WriteFile(f.dump_features, feats.data.data(), feats.data.size() * sizeof(float)));
  }
  // --stream: the text to stdout as it is decoded (what the txt writer would print, less
  // its final newline, which follows at the end; `formats` is then empty).
  bool streamed = false;
  if (f.stream) {
    PrintHeaderIfNamed(dest, name, formats);
    f.transcribe.on_text = [&streamed](std::string_view d) {
      std::fwrite(d.data(), 1, d.size(), stdout);
      std::fflush(stdout);
      streamed = true;
      return true;
    };
  }
  Result<Transcript> t = session.Transcribe(audio, f.transcribe);
  if (f.stream && (t.ok() || streamed)) {
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  if (!t.ok()) return t.status().WithPrefix(name);
  return Emit(f, input, name, *t, formats, dest, load_ms, said);
}

// --parallel N: up to N inputs at once in one BatchSession (read and encoded in turn, their
// decoding batched), each written in input order once it and those before it are done, so
// the output is the sequential run's. No progress lines: they would interleave.
Status RunParallel(Flags& f, const std::vector<OutputFormat>& formats, const Destination& dest,
                   const std::shared_ptr<const Model>& model,
                   const std::vector<std::string>& said) {
  BatchSession batch(model, f.threads, f.parallel);
  TranscribeOptions options = f.transcribe;
  options.on_progress = nullptr;
  const size_t n = f.inputs.size();
  std::vector<std::optional<Result<Transcript>>> done(n);
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < std::min<int>(f.parallel, static_cast<int>(n)); ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) {
        Result<Audio> audio = ReadInput(f.inputs[i], f.audio);
        // Named as the sequential run names them: a transcription's error by its input.
        Result<Transcript> t = Result<Transcript>(audio.status());
        if (audio.ok()) {
          t = batch.Transcribe(*audio, options);
          if (!t.ok()) t = t.status().WithPrefix(f.inputs[i] == "-" ? "stdin" : f.inputs[i]);
        }
        std::lock_guard<std::mutex> lock(mu);
        done[i] = std::move(t);
        cv.notify_all();
      }
    });
  }
  size_t i = 0;
  Status s = ForEachInput(f.inputs, "tern transcribe", [&](const std::string& input) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done[i].has_value(); });
    Result<Transcript> t = std::move(*done[i]);
    done[i].reset();
    ++i;
    lock.unlock();
    const std::string name = input == "-" ? "stdin" : input;
    if (!t.ok()) return t.status();
    return Emit(f, input, name, *t, formats, dest, model->info().load_ms, said);
  });
  for (std::thread& w : workers) w.join();
  return s;
}

// The options, before anything runs (the model, the inputs, the output directory): every
// failure here is a usage error, exit 2.
Status Check(Flags& f, std::vector<OutputFormat>* out_formats) {
  TERN_ASSIGN_OR_RETURN(f.model.head, HeadPrecisionFromName(f.head));
  if (f.prompt_format == "json")
    f.transcribe.format = PromptFormat::kJson;
  else if (f.prompt_format != "text")
    return InvalidArgumentError(
        "--format must be text or json, not '%s' (the file formats "
        "are --output-format's)",
        f.prompt_format.c_str());
  f.audio.normalize = !f.no_normalize;
  f.audio.clip_guard = !f.no_clip_guard;
  f.transcribe.decoding.repetition_guard = !f.no_repetition_guard;
  if (!f.hotwords.empty()) {
    Result<std::vector<std::string>> words = SplitHotwords(f.hotwords);
    if (!words.ok()) return words.status().WithPrefix("--hotwords");
    f.transcribe.decoding.hotwords = std::move(*words);
  }
  if (f.parallel < 1 || f.parallel > 256)
    return InvalidArgumentError("--parallel must be in [1, 256], got %d", f.parallel);
  if (f.parallel > 1 && (f.stream || f.live || !f.dump_features.empty()))
    return InvalidArgumentError(
        "--parallel transcribes whole files: it does not combine with --stream, --live or "
        "--dump-features");
  if (f.threads < 0 || f.threads > 1024)
    return InvalidArgumentError("--threads must be in [1, 1024] (0 or absent: all CPUs), got %d",
                                f.threads);
  // --output-format takes a comma-separated list: one transcription, several writers.
  TERN_RETURN_IF_ERROR(f.format_options.Validate());
  std::vector<OutputFormat>& formats = *out_formats;
  for (size_t b = 0; b <= f.output_format.size();) {
    const size_t e = std::min(f.output_format.find(',', b), f.output_format.size());
    Result<OutputFormat> format = OutputFormatFromName(f.output_format.substr(b, e - b));
    if (!format.ok()) return format.status().WithPrefix("--output-format");
    if (std::count(formats.begin(), formats.end(), *format) > 0)
      return InvalidArgumentError("--output-format lists '%s' twice",
                                  f.output_format.substr(b, e - b).c_str());
    formats.push_back(*format);
    b = e + 1;
  }
  if (f.stream && (!f.output_file.empty() || !f.output_dir.empty() ||
                   formats != std::vector<OutputFormat>{OutputFormat::kTxt}))
    return InvalidArgumentError(
        "--stream prints plain text to stdout: it does not combine with "
        "-o, --output-dir or --output-format other than txt");
  if (f.stream) formats.clear();  // no writer: the text goes out as it is decoded
  // verbose_json carries each token's log-probability.
  f.transcribe.decoding.logprobs =
      std::count(formats.begin(), formats.end(), OutputFormat::kVerboseJson) > 0;
  if (!f.output_file.empty() && !f.output_dir.empty())
    return InvalidArgumentError("-o and --output-dir do not combine: give one");
  if (!f.output_file.empty() && formats.size() > 1)
    return InvalidArgumentError("-o writes one file; with %zu output formats use --output-dir",
                                formats.size());
  if (!f.output_file.empty() && f.inputs.size() > 1)
    return InvalidArgumentError("-o writes one file; with %zu inputs use --output-dir",
                                f.inputs.size());
  if (!f.dump_features.empty() && f.inputs.size() > 1)
    return InvalidArgumentError("--dump-features takes one input, got %zu", f.inputs.size());
  if (std::count(f.inputs.begin(), f.inputs.end(), "-") > 1)
    return InvalidArgumentError("'-' (standard input) can be read only once");
  if (!f.output_dir.empty())
    TERN_RETURN_IF_ERROR(CheckOutputDir(f.output_dir, f.inputs, formats.front()));
  if (f.live) {
    if (f.inputs.size() != 1)
      return InvalidArgumentError(
          "--live reads one stream ('-' for standard input), got %zu inputs", f.inputs.size());
    if (f.stream || !f.output_file.empty() || !f.output_dir.empty() || !f.dump_features.empty() ||
        formats.size() != 1 ||
        (formats[0] != OutputFormat::kTxt && formats[0] != OutputFormat::kJson))
      return InvalidArgumentError(
          "--live prints to stdout as txt (finals; partials too on a "
          "terminal) or json (one event per line): it does not combine "
          "with --stream, -o, --output-dir, --dump-features or other formats");
    if (f.audio.offset_s != 0 || f.audio.duration_s != 0)
      return InvalidArgumentError("--live does not take --offset or --duration");
    f.live_cli.input = f.inputs[0];
    f.live_cli.json = formats[0] == OutputFormat::kJson;
    f.live_cli.metrics = f.metrics;
    f.live_cli.live.transcribe = f.transcribe;
    f.live_cli.live.normalize = f.audio.normalize;
    TERN_RETURN_IF_ERROR(f.live_cli.live.Validate());
    if (f.live_cli.raw_rate < 8000 || f.live_cli.raw_rate > 192000)
      return InvalidArgumentError("--live-rate must be in [8000, 192000] Hz, got %d",
                                  f.live_cli.raw_rate);
  }
  TERN_RETURN_IF_ERROR(f.model.Validate());
  TERN_RETURN_IF_ERROR(f.audio.Validate());
  return f.transcribe.Validate();
}

// The work: the model, then every input (a failing one does not stop the others).
Status Run(Flags& f, const std::vector<OutputFormat>& formats) {
  if (f.live) {
    TERN_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, Model::Load(f.model));
    Session session(model, f.threads);
    for (const std::string& w : OptionWarnings(model->info(), f.transcribe))
      std::fprintf(stderr, "tern: warning: %s\n", w.c_str());
    return TranscribeLive(session, f.live_cli);
  }
  const Destination dest{f.output_file, f.output_dir,
                         f.inputs.size() > 1 && f.output_dir.empty() && f.output_file.empty()};
  TERN_RETURN_IF_ERROR(Prepare(dest));
  TERN_ASSIGN_OR_RETURN(std::shared_ptr<const Model> model, Model::Load(f.model));
  // What the model declares it was not trained for: said once, not once per input.
  const std::vector<std::string> said = OptionWarnings(model->info(), f.transcribe);
  for (const std::string& w : said) std::fprintf(stderr, "tern: warning: %s\n", w.c_str());
  if (f.parallel > 1) return RunParallel(f, formats, dest, model, said);
  Session session(model, f.threads);
  return ForEachInput(f.inputs, "tern transcribe", [&](const std::string& input) {
    return TranscribeOne(f, input, formats, dest, session, model->info().load_ms, said);
  });
}

}  // namespace

int CmdTranscribe(int argc, char** argv) {
  Flags f;
  DecodingOptions& d = f.transcribe.decoding;
  CLI::App app{"tern transcribe: audio in, text out", "tern transcribe"};
  app.add_option(
      "--model", f.model.model_dir,
      "model directory (vibeasr-vae-encoder-i8_s.gguf + vibeasr-lm-i2_s-embed-q6_k.gguf)");
  app.add_option("--vae", f.model.vae_path, "encoder GGUF (overrides the one in --model)");
  app.add_option("--lm", f.model.lm_path, "decoder GGUF (overrides the one in --model)");
  app.add_option("--head", f.head, "output head precision: f16 (as stored) or int8 (W8A8)")
      ->capture_default_str();
  app.add_option("-t,--threads", f.threads, "threads (default: all CPUs)");
  app.add_option("--parallel", f.parallel,
                 "transcribe up to this many inputs at once, their decoding batched (one pass "
                 "over the decoder's weights per step for all); output as without it")
      ->capture_default_str();
  app.add_option("--format", f.prompt_format,
                 "prompt variant: text or json (segments with times and speakers; warns with a "
                 "model not trained for it)")
      ->capture_default_str();
  app.add_option("--context", f.transcribe.context,
                 "extra information for the model (names, topic); not used, with a warning, by a "
                 "model that declares it was trained without");
  app.add_option("--temperature", d.temperature, "sampling temperature; 0 = greedy")
      ->capture_default_str();
  app.add_option("--top-k", d.top_k, "sample from the k most likely tokens (0 = all)")
      ->capture_default_str();
  app.add_option("--top-p", d.top_p, "nucleus sampling mass")->capture_default_str();
  app.add_option("--seed", d.seed, "sampling seed")->capture_default_str();
  app.add_option("--beam", d.beam,
                 "beam search width (1 = off; 0 = the model's declared width, else off)")
      ->capture_default_str();
  app.add_option("--max-tokens", d.max_tokens, "maximum generated tokens")->capture_default_str();
  app.add_option("--chunk-seconds", f.transcribe.chunk_seconds,
                 "long audio: pieces of at most this many seconds (0: only when the context or 4 "
                 "GB of encoder memory needs them)")
      ->capture_default_str();
  app.add_option("--snap-seconds", f.transcribe.snap_seconds,
                 "JSON segments: move each start and end to the nearest edge of speech within "
                 "this many seconds (0: the model's times; -1: what the model declares)")
      ->capture_default_str();
  app.add_option("--no-speech-floor", f.transcribe.no_speech_floor_dbfs,
                 "dBFS: audio whose loudest 25 ms is quieter gives an empty transcript and a "
                 "warning (-150: off)")
      ->capture_default_str();
  app.add_flag("--no-repetition-guard", f.no_repetition_guard, "do not stop on a looping output");
  app.add_option("--hotwords", f.hotwords, "comma-separated words to favour (names, jargon)");
  app.add_option("--hotword-boost", d.hotword_boost, "logit added to hotword tokens, 0-20")
      ->capture_default_str();
  app.add_option("--output-format", f.output_format,
                 "txt, json, verbose_json, srt or vtt; several comma-separated (with --output-dir: "
                 "one file each)")
      ->capture_default_str();
  app.add_option("--max-cue-chars", f.format_options.max_cue_chars,
                 "srt/vtt: split longer cues at word boundaries (0 = off)")
      ->capture_default_str();
  app.add_option("-o,--output", f.output_file, "write the result to this file instead of stdout");
  app.add_option("--output-dir", f.output_dir,
                 "write one file per input and format into this directory (created if missing): "
                 "NAME.txt, NAME.json, NAME.verbose.json, ...");
  app.add_option("--dump-features", f.dump_features,
                 "write encoder features (float32, frames x hidden) here");
  app.add_flag("--no-normalize", f.no_normalize, "skip RMS normalization and the clip guard");
  app.add_flag("--no-clip-guard", f.no_clip_guard,
               "do not rescale audio whose peak exceeds 1 after normalization");
  app.add_option("--max-audio-seconds", f.audio.max_seconds, "refuse longer audio")
      ->capture_default_str();
  app.add_option("--offset", f.audio.offset_s, "start this many seconds into the audio");
  app.add_option("--duration", f.audio.duration_s,
                 "transcribe at most this many seconds (0: to the end)");
  app.add_flag("--metrics", f.metrics, "print timings, RTF and peak memory to stderr");
  app.add_flag("-q,--quiet", f.quiet, "no progress on stderr");
  app.add_flag("--stream", f.stream, "print the text to stdout as it is decoded (txt output only)");
  app.add_flag("--live", f.live,
               "read the input as a stream (raw s16le PCM, or WAV) and print text as it is spoken");
  app.add_option("--live-rate", f.live_cli.raw_rate, "--live: raw PCM's sample rate (Hz)")
      ->capture_default_str();
  app.add_option("--live-update", f.live_cli.live.update_seconds,
                 "--live: a partial result every this many seconds of new audio")
      ->capture_default_str();
  app.add_option("--live-pause", f.live_cli.live.pause_seconds,
                 "--live: a pause this long (seconds) ends a piece; its text is then final")
      ->capture_default_str();
  app.add_option("--live-silence-db", f.live_cli.live.silence_db,
                 "--live: quieter than this (dB below the piece's loudest 10 ms) is silence")
      ->capture_default_str();
  app.add_option("--live-max-piece", f.live_cli.live.max_piece_seconds,
                 "--live: the longest piece in seconds (0: the model's longest training clip if it "
                 "declares one, else 30)")
      ->capture_default_str();
  app.add_option("audio", f.inputs, "audio files (WAV, FLAC, OGG, MP3); - reads standard input")
      ->required();
  std::vector<OutputFormat> formats;
  return ParseCheckAndRun(
      app, argc, argv, [&] { return Check(f, &formats); }, [&] { return Run(f, formats); });
}

}  // namespace tern::cli
