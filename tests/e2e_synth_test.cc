// End to end on the tiny synthetic checkpoint (random weights in the published format):
// the whole pipeline runs, and its token ids are deterministic across thread counts, kernel
// ISAs, the ways of naming the model, and the two type-id numberings.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "base/mapped_file.h"
#include "gguf/gguf.h"
#include "kernels/kernels.h"
#include "models/vibeasr/synth.h"  // file names
#include "tern/tern.h"

namespace tern {
namespace {

namespace fs = std::filesystem;

class E2E : public ::testing::Test {
 protected:
  // The packages are written once per ctest run by the synth_tiny fixture (tests/
  // CMakeLists.txt): TERN_SYNTH_DIR holds published/ (ids 36/37) and remapped/ (43/42).
  static void SetUpTestSuite() {
    dir_ = new std::string(TERN_SYNTH_DIR);
    scratch_ =
        new std::string(fs::temp_directory_path() / ("tern_e2e_" + std::to_string(::getpid())));
    fs::create_directories(*scratch_);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*scratch_);
    delete dir_;
    delete scratch_;
  }

  static std::shared_ptr<const Model> Load(const std::string& sub) {
    ModelOptions mo;
    mo.model_dir = *dir_ + "/" + sub;
    Result<std::shared_ptr<const Model>> m = Model::Load(mo);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    return m.ok() ? *m : nullptr;
  }

  // 1.7 s of a deterministic speech-like signal at 24 kHz (not a multiple of 3200 samples,
  // so the prompt has one more pad slot than frames: the position gap of spec 4.6 is live).
  static Audio Clip(int n = 40900, uint32_t seed = 5) {
    Audio a;
    a.name = "synthetic";
    a.source_rate = 24000;
    a.source_channels = 1;
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.0f, 0.05f);
    for (int i = 0; i < n; ++i) {
      const double t = i / 24000.0;
      a.samples.push_back(static_cast<float>(0.3 * std::sin(2 * M_PI * (200 + 80 * t) * t)) +
                          noise(rng));
    }
    return a;
  }

  static TranscribeOptions Forced(int tokens) {
    TranscribeOptions o;
    o.decoding.max_tokens = tokens;
    o.decoding.ignore_eos = true;  // random weights stop anywhere: force real decode work
    o.decoding.repetition_guard = false;
    return o;
  }

  // A 16-bit PCM WAV of `a`, written by hand (the audio layer is tested elsewhere).
  static Status WriteWav(const Audio& a, const std::string& path) {
    std::string bytes;
    auto put32 = [&bytes](uint32_t v) { bytes.append(reinterpret_cast<const char*>(&v), 4); };
    auto put16 = [&bytes](uint16_t v) { bytes.append(reinterpret_cast<const char*>(&v), 2); };
    const uint32_t data_bytes = static_cast<uint32_t>(a.samples.size() * 2);
    bytes += "RIFF";
    put32(36 + data_bytes);
    bytes += "WAVEfmt ";
    put32(16);
    put16(1);
    put16(1);
    put32(24000);
    put32(48000);
    put16(2);
    put16(16);
    bytes += "data";
    put32(data_bytes);
    for (float v : a.samples)
      put16(static_cast<uint16_t>(
          static_cast<int16_t>(std::lrint(std::clamp(v, -1.0f, 1.0f) * 32767.0f))));
    return WriteStringToFile(path, bytes);
  }

  // Runs a shell command; its exit code (-1 if it did not exit normally).
  static int Shell(const std::string& cmd) {
    const int st = std::system(cmd.c_str());
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }

  static std::string* dir_;
  static std::string* scratch_;
};
std::string* E2E::dir_ = nullptr;
std::string* E2E::scratch_ = nullptr;

TEST_F(E2E, TokenIdsIndependentOfThreadCount) {
  auto model = Load("published");
  ASSERT_TRUE(model);
  const Audio clip = Clip();
  std::vector<int32_t> ref_ids, ref_prompt;
  for (int threads : {1, 2, 4}) {
    Session s(model, threads);
    Result<Transcript> t = s.Transcribe(clip, Forced(12));
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->token_ids.size(), 12u);
    EXPECT_EQ(t->frames, 12);  // floor(40900 / 3200)
    if (threads == 1) {
      ref_ids = t->token_ids;
      ref_prompt = t->prompt_token_ids;
      // 45 + N + digits of "1.70" (spec 5.3): N = ceil(40900/3200) = 13 pads.
      EXPECT_EQ(t->prompt_token_ids.size(), 45u + 13u + 1u);
    } else {
      EXPECT_EQ(t->token_ids, ref_ids) << "threads=" << threads;
      EXPECT_EQ(t->prompt_token_ids, ref_prompt);
    }
  }
}

// A Session keeps the KV rows of the prompt's fixed head (the system turn, up to the first
// speech pad) for its next call: the ids must be exactly those of a fresh Session, and the
// reuse must be reported. A longer clip needs a bigger cache (a new state: nothing reused).
TEST_F(E2E, SessionReusesThePromptHeadWithIdenticalIds) {
  auto model = Load("published");
  ASSERT_TRUE(model);
  struct Call {
    Audio clip;
    PromptFormat format;
    std::string context;
    int64_t want_reused;  // -1: the prompt's head (26 tokens with the Qwen2 vocabulary)
  };
  const std::vector<Call> calls = {
      {Clip(), PromptFormat::kJson, "", 0},
      {Clip(30000, 9), PromptFormat::kJson, "", -1},
      {Clip(), PromptFormat::kText, "names: Ada", -1},
      {Clip(90000, 3), PromptFormat::kJson, "", 0},  // more rows than the cache holds
      {Clip(), PromptFormat::kJson, "", -1},
  };
  for (int threads : {1, 2, 4}) {
    Session session(model, threads);
    for (size_t i = 0; i < calls.size(); ++i) {
      TranscribeOptions o = Forced(6);
      o.format = calls[i].format;
      o.context = calls[i].context;
      Result<Transcript> got = session.Transcribe(calls[i].clip, o);
      Session fresh(model, threads);
      Result<Transcript> want = fresh.Transcribe(calls[i].clip, o);
      ASSERT_TRUE(got.ok() && want.ok());
      EXPECT_EQ(got->token_ids, want->token_ids) << "call " << i << ", " << threads << " threads";
      EXPECT_EQ(want->metrics.prompt_reused_tokens, 0);
      const int64_t expect = calls[i].want_reused < 0 ? 26 : calls[i].want_reused;
      EXPECT_EQ(got->metrics.prompt_reused_tokens, expect) << "call " << i;
    }
  }
}

// Audio cut into pieces (--chunk-seconds): each piece's ids are those of transcribing that
// piece alone, the pieces tile the audio, segment times are shifted to the whole file, and
// nothing depends on the thread count.
TEST_F(E2E, LongAudioInPiecesMatchesThePiecesAlone) {
  auto model = Load("published");
  ASSERT_TRUE(model);
  const Audio clip = Clip(60000, 11);  // 2.5 s
  TranscribeOptions o = Forced(5);
  o.chunk_seconds = 1.0;
  std::vector<int32_t> ref;
  for (int threads : {1, 2, 4}) {
    Session s(model, threads);
    Result<Transcript> t = s.Transcribe(clip, o);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_EQ(t->pieces.size(), 3u);
    EXPECT_EQ(t->pieces.front().first, 0.0);
    EXPECT_DOUBLE_EQ(t->pieces.back().second, 2.5);
    ASSERT_EQ(t->segments.size(), 3u);  // plain-text answers: one segment per piece
    std::vector<int32_t> ids;
    int64_t frames = 0;
    for (size_t i = 0; i < 3; ++i) {
      const auto [t0, t1] = t->pieces[i];
      if (i > 0) {
        EXPECT_EQ(t0, t->pieces[i - 1].second);
      }
      EXPECT_LE(t1 - t0, 1.0);
      EXPECT_EQ(t->segments[i].start, t0);
      EXPECT_EQ(t->segments[i].end, t1);
      Audio piece = clip;
      piece.samples.assign(clip.samples.begin() + std::llround(t0 * 24000),
                           clip.samples.begin() + std::llround(t1 * 24000));
      Session alone(model, threads);
      Result<Transcript> p = alone.Transcribe(piece, Forced(5));
      ASSERT_TRUE(p.ok());
      const size_t tb = p->text.find_first_not_of(" \t\r\n");
      const std::string trimmed =
          tb == std::string::npos
              ? std::string()
              : p->text.substr(tb, p->text.find_last_not_of(" \t\r\n") - tb + 1);
      EXPECT_EQ(t->segments[i].text, trimmed);
      ids.insert(ids.end(), p->token_ids.begin(), p->token_ids.end());
      frames += p->frames;
    }
    EXPECT_EQ(t->token_ids, ids) << threads << " threads";
    EXPECT_EQ(t->frames, frames);
    EXPECT_EQ(t->metrics.decode_tokens, 15);
    if (threads == 1) {
      ref = t->token_ids;
    } else {
      EXPECT_EQ(t->token_ids, ref);
    }
  }
  // One piece when the limit is longer than the audio; bad limits are rejected.
  Session s(model, 1);
  o.chunk_seconds = 10;
  Result<Transcript> one = s.Transcribe(clip, o);
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->pieces.empty());
  for (double bad : {0.5, -1.0, std::nan("")}) {
    o.chunk_seconds = bad;
    EXPECT_EQ(s.Transcribe(clip, o).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
}

// Token log-probabilities: one per id, for greedy, sampled and beam decoding, identical at
// any thread count; absent unless asked for; the same ids either way.
TEST_F(E2E, TokenLogProbsForEveryDecodingMode) {
  auto model = Load("published");
  ASSERT_TRUE(model);
  const Audio clip = Clip();
  for (int mode = 0; mode < 3; ++mode) {
    TranscribeOptions o = Forced(6);
    if (mode == 1) o.decoding.temperature = 0.8f;
    if (mode == 2) o.decoding.beam = 3;
    Session plain(model, 1);
    Result<Transcript> without = plain.Transcribe(clip, o);
    ASSERT_TRUE(without.ok());
    EXPECT_TRUE(without->token_logprobs.empty());
    o.decoding.logprobs = true;
    std::vector<float> ref;
    for (int threads : {1, 2, 4}) {
      Session s(model, threads);
      Result<Transcript> t = s.Transcribe(clip, o);
      ASSERT_TRUE(t.ok());
      EXPECT_EQ(t->token_ids, without->token_ids) << "mode " << mode;
      ASSERT_EQ(t->token_logprobs.size(), t->token_ids.size()) << "mode " << mode;
      for (float lp : t->token_logprobs) {
        EXPECT_LE(lp, 0.0f);
        EXPECT_TRUE(std::isfinite(lp));
      }
      if (threads == 1) {
        ref = t->token_logprobs;
      } else {
        EXPECT_EQ(t->token_logprobs, ref) << "mode " << mode << ", " << threads << " threads";
      }
    }
  }
}

TEST_F(E2E, FeaturesIndependentOfThreadCount) {
  auto model = Load("published");
  ASSERT_TRUE(model);
  Session s1(model, 1), s4(model, 4);
  Result<Features> a = s1.Encode(Clip());
  Result<Features> b = s4.Encode(Clip());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->frames, 12);
  EXPECT_EQ(a->hidden, 256);
  ASSERT_EQ(a->data.size(), b->data.size());
  EXPECT_EQ(std::memcmp(a->data.data(), b->data.data(), a->data.size() * sizeof(float)), 0);
}

TEST_F(E2E, SameIdsFromModelDirExplicitFilesAndRemappedIds) {
  const Audio clip = Clip();
  auto run = [&](const ModelOptions& mo) {
    Result<std::shared_ptr<const Model>> m = Model::Load(mo);
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    Session s(*m, 2);
    Result<Transcript> t = s.Transcribe(clip, Forced(8));
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? t->token_ids : std::vector<int32_t>{};
  };
  ModelOptions by_dir;
  by_dir.model_dir = *dir_ + "/published";
  ModelOptions by_files;
  by_files.vae_path = *dir_ + "/published/" + vibeasr::kSynthVaeFileName;
  by_files.lm_path = *dir_ + "/published/" + vibeasr::kSynthLmFileName;
  ModelOptions remapped;
  remapped.model_dir = *dir_ + "/remapped";
  const std::vector<int32_t> ref = run(by_dir);
  ASSERT_EQ(ref.size(), 8u);
  EXPECT_EQ(run(by_files), ref);
  EXPECT_EQ(run(remapped), ref);
}

TEST_F(E2E, NaturalStopAndHeaderStripping) {
  auto model = Load("published");
  ASSERT_TRUE(model);
  Session s(model, 2);
  TranscribeOptions o;
  o.decoding.max_tokens = 40;
  Result<Transcript> t = s.Transcribe(Clip(), o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_FALSE(t->token_ids.empty());
  EXPECT_LE(t->token_ids.size(), 40u);
  EXPECT_TRUE(t->stop_reason == "eos" || t->stop_reason == "max_tokens" ||
              t->stop_reason == "repetition");
  ASSERT_EQ(t->segments.size(), 1u);
  EXPECT_EQ(t->segments[0].text, t->text);
}

TEST_F(E2E, SamplingIsSeededAndBeamIsDeterministic) {
  auto model = Load("published");
  ASSERT_TRUE(model);
  Session s(model, 2);
  TranscribeOptions o = Forced(10);
  o.decoding.temperature = 1.0f;
  o.decoding.top_k = 50;
  o.decoding.seed = 3;
  Result<Transcript> a = s.Transcribe(Clip(), o);
  Result<Transcript> b = s.Transcribe(Clip(), o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->token_ids, b->token_ids);

  TranscribeOptions beam = Forced(6);
  beam.decoding.beam = 3;
  Result<Transcript> c = s.Transcribe(Clip(), beam);
  Result<Transcript> d = Session(model, 1).Transcribe(Clip(), beam);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(c->token_ids.size(), 6u);
  EXPECT_EQ(c->token_ids, d->token_ids);
}

TEST_F(E2E, ClearErrors) {
  ModelOptions none;
  EXPECT_EQ(Model::Load(none).status().code(), ErrorCode::kInvalidArgument);
  ModelOptions missing;
  missing.model_dir = *dir_ + "/nope";
  Result<std::shared_ptr<const Model>> m = Model::Load(missing);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("nope"), std::string::npos);

  auto model = Load("published");
  ASSERT_TRUE(model);
  Session s(model, 1);
  Audio empty;
  empty.name = "empty.wav";
  Result<Transcript> t = s.Transcribe(empty, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("empty.wav"), std::string::npos);
  TranscribeOptions bad;
  bad.decoding.top_p = 0.0f;
  EXPECT_EQ(s.Transcribe(Clip(), bad).status().code(), ErrorCode::kInvalidArgument);
  TranscribeOptions huge = Forced(1 << 20);
  EXPECT_EQ(s.Transcribe(Clip(), huge).status().code(), ErrorCode::kResourceExhausted);
}

// The CLI, once per kernel ISA this machine runs (TERN_ISA), gives the same token ids.
TEST_F(E2E, CliTokenIdsIdenticalOnEveryIsa) {
  const std::string wav = *scratch_ + "/clip.wav";
  ASSERT_TRUE(WriteWav(Clip(), wav).ok());
  size_t n = 0;
  const kernels::Isa* isas = kernels::AvailableIsas(&n);
  ASSERT_GE(n, 1u);
  std::vector<int32_t> ref;
  for (size_t i = 0; i < n; ++i) {
    const std::string out = *scratch_ + "/out_" + kernels::IsaName(isas[i]) + ".json";
    const std::string cmd = std::string("TERN_ISA=") + kernels::IsaName(isas[i]) + " " +
                            TERN_BINARY + " transcribe -q -t 2 --model " + *dir_ +
                            "/published --max-tokens 10 " + "--output-format verbose_json -o " +
                            out + " " + wav;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    Result<std::string> text = ReadFileToString(out);
    ASSERT_TRUE(text.ok());
    const nlohmann::json j = nlohmann::json::parse(*text);
    EXPECT_EQ(j["isa"], kernels::IsaName(isas[i]));
    const std::vector<int32_t> ids = j["token_ids"].get<std::vector<int32_t>>();
    ASSERT_FALSE(ids.empty());
    if (i == 0)
      ref = ids;
    else
      EXPECT_EQ(ids, ref) << kernels::IsaName(isas[i]);
  }
}

// "-" reads the audio from standard input; a failing input among several is reported and
// the others are still transcribed, the exit code saying that one failed.
TEST_F(E2E, CliReadsStdinAndContinuesPastAFailingInput) {
  const std::string wav = *scratch_ + "/a.wav", wav2 = *scratch_ + "/b.wav";
  ASSERT_TRUE(WriteWav(Clip(), wav).ok());
  ASSERT_TRUE(WriteWav(Clip(30000, 9), wav2).ok());
  const std::string tern = std::string(TERN_BINARY) + " transcribe -q -t 2 --model " + *dir_ +
                           "/published --max-tokens 8 --output-format verbose_json ";
  auto ids = [](const std::string& path) {
    Result<std::string> text = ReadFileToString(path);
    EXPECT_TRUE(text.ok()) << path;
    if (!text.ok()) return std::vector<int32_t>{};
    return nlohmann::json::parse(*text)["token_ids"].get<std::vector<int32_t>>();
  };
  const std::string from_file = *scratch_ + "/file.json", from_stdin = *scratch_ + "/stdin.json";
  ASSERT_EQ(Shell(tern + "-o " + from_file + " " + wav), 0);
  ASSERT_EQ(Shell(tern + "-o " + from_stdin + " - < " + wav), 0);
  EXPECT_FALSE(ids(from_file).empty());
  EXPECT_EQ(ids(from_stdin), ids(from_file));

  const std::string out = *scratch_ + "/batch", err = *scratch_ + "/batch.err";
  fs::create_directories(out);
  EXPECT_EQ(Shell(tern + "--output-dir " + out + " " + wav + " " + *scratch_ + "/missing.wav " +
                  wav2 + " 2> " + err),
            1);
  EXPECT_EQ(ids(out + "/a.verbose.json"), ids(from_file));
  EXPECT_FALSE(ids(out + "/b.verbose.json").empty());
  Result<std::string> msg = ReadFileToString(err);
  ASSERT_TRUE(msg.ok());
  EXPECT_NE(msg->find("missing.wav: no such file"), std::string::npos) << *msg;
  EXPECT_NE(msg->find("1 of 3 inputs failed"), std::string::npos) << *msg;
  EXPECT_EQ(Shell(tern + "- - < " + wav + " 2>/dev/null"), 2);  // stdin only once
}

// An excerpt (AudioOptions::offset_s / duration_s) is transcribed as audio of its own, with
// segment and piece times counted from the source's start.
TEST_F(E2E, ExcerptTimesCountFromTheSource) {
  auto model = Load("published");
  ASSERT_TRUE(model);
  const std::string wav = *scratch_ + "/excerpt.wav";
  ASSERT_TRUE(WriteWav(Clip(72000, 13), wav).ok());  // 3 s
  AudioOptions ao;
  ao.offset_s = 0.75;
  ao.duration_s = 1.5;
  Result<Audio> part = LoadAudio(wav, ao);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_DOUBLE_EQ(part->offset_s, 0.75);
  Audio same = *part;
  same.offset_s = 0;  // the same samples, as a file of their own
  for (double chunk : {0.0, 1.0}) {
    TranscribeOptions o = Forced(5);
    o.chunk_seconds = chunk;
    Session s(model, 2);
    Result<Transcript> t = s.Transcribe(*part, o);
    Result<Transcript> u = s.Transcribe(same, o);
    ASSERT_TRUE(t.ok() && u.ok());
    EXPECT_EQ(t->token_ids, u->token_ids);
    EXPECT_DOUBLE_EQ(t->offset_s, 0.75);
    ASSERT_EQ(t->segments.size(), u->segments.size());
    for (size_t i = 0; i < t->segments.size(); ++i) {
      EXPECT_DOUBLE_EQ(t->segments[i].start, u->segments[i].start + 0.75);
      EXPECT_DOUBLE_EQ(t->segments[i].end, u->segments[i].end + 0.75);
    }
    ASSERT_EQ(t->pieces.size(), u->pieces.size());
    for (size_t i = 0; i < t->pieces.size(); ++i)
      EXPECT_DOUBLE_EQ(t->pieces[i].first, u->pieces[i].first + 0.75);
    const std::string srt = FormatTranscript(*t, OutputFormat::kSrt);
    EXPECT_EQ(srt.rfind("1\n00:00:00,750 --> ", 0), 0u) << srt;
    EXPECT_NE(srt.find("00:00:02,250"), std::string::npos) << srt;  // the excerpt's end
  }
}

// Several --output-format values: one transcription, one file per format and input.
TEST_F(E2E, CliWritesSeveralFormatsFromOneRun) {
  const std::string wav = *scratch_ + "/several.wav", out = *scratch_ + "/several";
  ASSERT_TRUE(WriteWav(Clip(), wav).ok());
  fs::create_directories(out);
  const std::string tern = std::string(TERN_BINARY) + " transcribe -q -t 2 --model " + *dir_ +
                           "/published --max-tokens 8 ";
  ASSERT_EQ(Shell(tern + "--output-format srt,vtt,verbose_json --output-dir " + out + " " + wav),
            0);
  Result<std::string> srt = ReadFileToString(out + "/several.srt");
  Result<std::string> vtt = ReadFileToString(out + "/several.vtt");
  Result<std::string> json = ReadFileToString(out + "/several.verbose.json");
  ASSERT_TRUE(srt.ok() && vtt.ok() && json.ok());
  EXPECT_EQ(srt->rfind("1\n00:00:00,000 --> ", 0), 0u) << *srt;
  EXPECT_EQ(vtt->rfind("WEBVTT", 0), 0u) << *vtt;
  const nlohmann::json j = nlohmann::json::parse(*json);
  EXPECT_FALSE(j["token_ids"].empty());
  // verbose_json asks for each token's log-probability: greedy picks the most likely token,
  // whose probability is at least 1 / vocab.
  ASSERT_EQ(j["token_logprobs"].size(), j["token_ids"].size());
  for (const auto& lp : j["token_logprobs"]) {
    EXPECT_LE(lp.get<double>(), 0.0);
    EXPECT_GE(lp.get<double>(), -std::log(151936.0));  // 1 / the synthetic vocabulary
  }
  // A list -o cannot hold, a repeated or an unknown format, a cue limit below 8: usage
  // errors before any work.
  EXPECT_EQ(Shell(tern + "--output-format srt,vtt -o " + out + "/x " + wav + " 2>/dev/null"), 2);
  EXPECT_EQ(Shell(tern + "--output-format srt,srt " + wav + " 2>/dev/null"), 2);
  EXPECT_EQ(Shell(tern + "--output-format srt, " + wav + " 2>/dev/null"), 2);
  EXPECT_EQ(Shell(tern + "--output-format srt --max-cue-chars 5 " + wav + " 2>/dev/null"), 2);
}

}  // namespace
}  // namespace tern
