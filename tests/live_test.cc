// Live transcription on the bundled model (models/tiny-en): a stream of several sentences
// with pauses, fed in chunks of random size, against the offline transcription of the
// pieces it was cut into; and the reason the encoder is not run incrementally.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_bundled_model.h"
#include "tern/tern.h"

namespace tern {
namespace {

using bundled::kHeldout;
using bundled::kModelDir;
using bundled::TinyModel;

std::vector<float> Clip(const std::string& path) {
  Result<Audio> a = LoadAudio(path);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? a->samples : std::vector<float>{};
}

// Four sentences (two voices), each followed by 0.9 s of faint noise (-60 dBFS): a pause.
std::vector<float> Stream() {
  std::vector<float> x;
  std::mt19937 rng(3);
  std::normal_distribution<float> g(0, 0.001f);
  for (const char* f : {"000.wav", "002.wav", "003.wav", "004.wav"}) {
    const std::vector<float> c = Clip(kHeldout + f);
    x.insert(x.end(), c.begin(), c.end());
    for (int i = 0; i < 21600; ++i) x.push_back(g(rng));
  }
  return x;
}

std::vector<char> FloatWav(const std::vector<float>& x) {
  std::vector<char> w;
  auto put = [&w](const void* p, size_t n) {
    w.insert(w.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n);
  };
  auto u32 = [&put](uint32_t v) { put(&v, 4); };
  auto u16 = [&put](uint16_t v) { put(&v, 2); };
  const uint32_t bytes = static_cast<uint32_t>(x.size() * 4);
  put("RIFF", 4);
  u32(36 + bytes);
  put("WAVE", 4);
  put("fmt ", 4);
  u32(16);
  u16(3);
  u16(1);
  u32(24000);
  u32(24000 * 4);
  u16(4);
  u16(32);
  put("data", 4);
  u32(bytes);
  put(x.data(), bytes);
  return w;
}

// Chunk sizes from 1 sample to 5 s, log-uniform (seed 0: the whole stream in one call).
std::vector<size_t> Chunks(size_t n, unsigned seed) {
  std::vector<size_t> sizes;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> logn(0, std::log(120000.0));
  for (size_t i = 0; i < n;) {
    size_t k = seed == 0 ? n : static_cast<size_t>(std::exp(logn(rng)));
    k = std::max<size_t>(1, std::min(k, n - i));
    sizes.push_back(k);
    i += k;
  }
  return sizes;
}

std::vector<LiveEvent> RunLive(Session& s, const std::vector<float>& x,
                               const std::vector<size_t>& chunks, const LiveOptions& o) {
  Result<std::unique_ptr<LiveSession>> live = s.StartLive(o);
  EXPECT_TRUE(live.ok()) << live.status().ToString();
  if (!live.ok()) return {};
  std::vector<LiveEvent> ev;
  size_t i = 0;
  for (size_t k : chunks) {
    const Status st = (*live)->Feed(x.data() + i, k, &ev);
    EXPECT_TRUE(st.ok()) << st.ToString();
    i += k;
  }
  const Status st = (*live)->Finish(&ev);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return ev;
}

std::vector<const LiveEvent*> Finals(const std::vector<LiveEvent>& ev) {
  std::vector<const LiveEvent*> f;
  for (const LiveEvent& e : ev)
    if (e.kind == LiveEvent::Kind::kFinal) f.push_back(&e);
  return f;
}

TEST(Live, EncoderFeaturesOfAPrefixDependOnTheFramesAfterIt) {
  // One int8 scale per activation tensor (its absmax over every frame): the louder second
  // sentence changes the quantization of the first one's frames.
  auto model = TinyModel();
  ASSERT_TRUE(model);
  Session s(model, 1);
  std::vector<float> a = Clip(kHeldout + "000.wav");
  for (float& v : a) v *= 0.2f;
  const std::vector<float> b = Clip(kHeldout + "002.wav");
  Audio prefix{"prefix", a, 24000, 1};
  Audio whole{"whole", a, 24000, 1};
  whole.samples.insert(whole.samples.end(), b.begin(), b.end());
  Result<Features> fp = s.Encode(prefix), fw = s.Encode(whole);
  ASSERT_TRUE(fp.ok() && fw.ok());
  const int64_t frames = fp->frames - 1;  // the last prefix frame may see past its end
  ASSERT_GT(frames, 5);
  size_t differ = 0;
  for (int64_t i = 0; i < frames * fp->hidden; ++i) differ += fp->data[i] != fw->data[i];
  EXPECT_GT(differ, static_cast<size_t>(frames * fp->hidden / 10))
      << "features of the first frames did not change with the audio after them";
}

// Plain options, hotwords (they reach every piece's decoding), and a context (used as
// Transcribe uses it: dropped with a warning by a model that declares it was trained without).
class LiveFinals : public ::testing::TestWithParam<int> {};

TEST_P(LiveFinals, EqualOfflineTranscriptionOfThePieces) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  const std::vector<float> x = Stream();
  Session s(model, 2);
  LiveOptions o;
  if (GetParam() == 1) {
    o.transcribe.decoding.hotwords = {"lemons"};
    o.transcribe.decoding.hotword_boost = 6;
  }
  if (GetParam() == 2) o.transcribe.context = "a shopping list and the weather";
  const std::vector<LiveEvent> ev = RunLive(s, x, Chunks(x.size(), 11), o);
  const auto finals = Finals(ev);
  ASSERT_EQ(finals.size(), 4u) << "one piece per sentence";

  int64_t last_end = 0;
  int64_t piece = 0;
  bool partial_before_end = false;
  for (const LiveEvent& e : ev) {
    // nothing reopens a committed piece: every event belongs to the open one
    EXPECT_EQ(e.piece, piece);
    EXPECT_GE(e.start_sample, last_end);
    if (e.kind == LiveEvent::Kind::kPartial) {
      EXPECT_LT(e.end_sample, static_cast<int64_t>(x.size()));
      partial_before_end = true;
    }
    if (e.kind == LiveEvent::Kind::kFinal) {
      // each sentence ends in a pause: cut in its middle, decided once the pause was whole
      EXPECT_EQ(e.heard_sample - e.end_sample, 6000);
      last_end = e.end_sample;
      ++piece;
    }
  }
  EXPECT_TRUE(partial_before_end);

  Session offline(model, 1);
  std::string all;
  for (const LiveEvent* f : finals) {
    // the piece as a file: a float WAV, loaded (and normalized) as `tern transcribe` would
    const std::vector<char> wav =
        FloatWav(std::vector<float>(x.begin() + f->start_sample, x.begin() + f->end_sample));
    Result<Audio> a = LoadAudioFromMemory(wav.data(), wav.size(), "piece");
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    Result<Transcript> t = offline.Transcribe(*a, o.transcribe);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(f->text, t->text) << "piece " << f->piece;
    EXPECT_EQ(f->transcript.token_ids, t->token_ids) << "piece " << f->piece;
    if (GetParam() == 2 && f->text.empty()) {
      // A context can leave the small model speechless on a piece (the bundled one answers
      // "Add coffee and lemons to the list." with nothing under this topic line): then the
      // piece, as a file would, says why.
      bool said = false;
      for (const std::string& w : f->transcript.warnings)
        said = said || w.find("empty with this context") != std::string::npos;
      EXPECT_TRUE(said) << "piece " << f->piece;
    } else {
      EXPECT_FALSE(f->text.empty()) << "piece " << f->piece;
    }
    all += f->text + " | ";
  }
  std::printf("finals: %s\n", all.c_str());
  if (GetParam() == 2) {
    // every piece says what Transcribe says of these options on this model (the pieces'
    // texts already equal Transcribe's, with or without the context)
    for (const std::string& said : OptionWarnings(model->info(), o.transcribe)) {
      for (const LiveEvent* f : finals) {
        EXPECT_NE(std::find(f->transcript.warnings.begin(), f->transcript.warnings.end(), said),
                  f->transcript.warnings.end());
      }
    }
  }
  if (GetParam() == 1) {
    // the options changed something, or they would not be shown to reach the pieces
    Session plain(model, 1);
    const auto ev0 = RunLive(plain, x, Chunks(x.size(), 0), LiveOptions{});
    std::string all0;
    for (const LiveEvent* f : Finals(ev0)) all0 += f->text + " | ";
    EXPECT_NE(all, all0);
  }

  // the same finals whatever the chunking (the whole stream at once, other random cuts)
  for (unsigned seed : {0u, 5u}) {
    Session other(model, 1);
    const std::vector<LiveEvent> ev2 = RunLive(other, x, Chunks(x.size(), seed), o);
    const auto f2 = Finals(ev2);
    ASSERT_EQ(f2.size(), finals.size()) << "seed " << seed;
    for (size_t i = 0; i < f2.size(); ++i) {
      EXPECT_EQ(f2[i]->start_sample, finals[i]->start_sample) << seed;
      EXPECT_EQ(f2[i]->end_sample, finals[i]->end_sample) << seed;
      EXPECT_EQ(f2[i]->text, finals[i]->text) << seed;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Options, LiveFinals, ::testing::Values(0, 1, 2));

TEST(Live, EventsDoNotDependOnTheThreadCount) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  const std::vector<float> x = Stream();
  const std::vector<size_t> chunks = Chunks(x.size(), 23);
  LiveOptions o;
  std::vector<LiveEvent> first;
  for (int threads : {1, 2, 4}) {
    Session s(model, threads);
    const std::vector<LiveEvent> ev = RunLive(s, x, chunks, o);
    if (threads == 1) {
      first = ev;
      EXPECT_GT(ev.size(), 8u);
      continue;
    }
    ASSERT_EQ(ev.size(), first.size()) << threads << " threads";
    for (size_t i = 0; i < ev.size(); ++i) {
      EXPECT_EQ(ev[i].kind, first[i].kind) << threads << " threads, event " << i;
      EXPECT_EQ(ev[i].piece, first[i].piece) << threads << " threads, event " << i;
      EXPECT_EQ(ev[i].start_sample, first[i].start_sample) << threads << " threads, event " << i;
      EXPECT_EQ(ev[i].end_sample, first[i].end_sample) << threads << " threads, event " << i;
      EXPECT_EQ(ev[i].text, first[i].text) << threads << " threads, event " << i;
    }
  }
}

TEST(Live, OtherRatesAreResampledAndBadOptionsAreErrors) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  Session s(model, 1);
  LiveOptions bad;
  bad.pause_seconds = 0;
  Result<std::unique_ptr<LiveSession>> r = s.StartLive(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("pause"), std::string::npos) << r.status().ToString();
  bad = LiveOptions{};
  bad.update_seconds = -1;
  EXPECT_FALSE(s.StartLive(bad).ok());

  // 16 kHz in: a crude 3:2 decimation of a 24 kHz clip (the live resampler brings it back)
  const std::vector<float> c = Clip(kHeldout + "000.wav");
  std::vector<float> x16;
  for (size_t i = 0; i + 3 <= c.size(); i += 3) {
    x16.push_back(c[i]);
    x16.push_back(0.5f * (c[i + 1] + c[i + 2]));
  }
  LiveOptions o;
  o.sample_rate = 16000;
  const std::vector<LiveEvent> ev = RunLive(s, x16, Chunks(x16.size(), 4), o);
  const auto f = Finals(ev);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(f[0]->text.empty());
  EXPECT_NEAR(static_cast<double>(f[0]->end_sample), static_cast<double>(c.size()), 2400.0);
  std::vector<LiveEvent> more;
  Result<std::unique_ptr<LiveSession>> live = s.StartLive(o);
  ASSERT_TRUE(live.ok());
  ASSERT_TRUE((*live)->Finish(&more).ok());
  EXPECT_TRUE(more.empty()) << "no audio, no events";
  EXPECT_FALSE((*live)->Feed(x16.data(), 10, &more).ok()) << "Feed after Finish";
}

// Runs `command` through the shell; its stdout, and the exit status in *rc.
std::string Shell(const std::string& command, int* rc) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  *rc = pclose(p);
  return out;
}

TEST(LiveCli, RawPcmThroughAPipeGivesTheEnginesEvents) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  // the stream as s16le, and as the engine sees it
  const std::vector<float> x = Stream();
  std::vector<int16_t> pcm(x.size());
  std::vector<float> back(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    pcm[i] = static_cast<int16_t>(std::lround(std::clamp(x[i] * 32768.0f, -32768.0f, 32767.0f)));
    back[i] = static_cast<float>(pcm[i]) / 32768.0f;
  }
  const std::string raw = ::testing::TempDir() + "live_test.raw";
  FILE* f = std::fopen(raw.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(pcm.data(), 2, pcm.size(), f);
  std::fclose(f);
  Session s(model, 1);
  const auto expected = RunLive(s, back, Chunks(back.size(), 0), LiveOptions{});
  const auto ef = Finals(expected);
  ASSERT_EQ(ef.size(), 4u);

  const std::string base =
      std::string(TERN_BINARY) + " transcribe --model " + kModelDir + " -t 1 --live - ";
  // json: one event per line; the finals are the engine's
  int rc = -1;
  const std::string out = Shell("cat " + raw + " | " + base + "--output-format json", &rc);
  ASSERT_EQ(rc, 0) << out;
  std::vector<nlohmann::json> finals;
  size_t partials = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] == "final") finals.push_back(j);
    if (j["type"] == "partial") ++partials;
    EXPECT_TRUE(j.contains("lag_ms")) << line;
  }
  EXPECT_GT(partials, 0u);
  ASSERT_EQ(finals.size(), ef.size()) << out;
  for (size_t i = 0; i < ef.size(); ++i) {
    EXPECT_EQ(finals[i]["text"], ef[i]->text);
    EXPECT_EQ(finals[i]["piece"], ef[i]->piece);
    EXPECT_NEAR(finals[i]["end"].get<double>(), ef[i]->end_s(), 1e-9);
  }
  // txt into a pipe: only the finals, one line each
  const std::string txt = Shell("cat " + raw + " | " + base, &rc);
  ASSERT_EQ(rc, 0) << txt;
  std::string want;
  for (const LiveEvent* e : ef) want += e->text + "\n";
  EXPECT_EQ(txt, want);
  // a WAV stream whose header claims no data (as streaming writers do) reads the same
  std::string wav("RIFF\xff\xff\xff\xffWAVEfmt \x10\0\0\0\x01\0\x01\0", 24);
  const uint32_t rate = 24000, byte_rate = 48000;
  wav.append(reinterpret_cast<const char*>(&rate), 4);
  wav.append(reinterpret_cast<const char*>(&byte_rate), 4);
  wav.append("\x02\0\x10\0data\0\0\0\0", 12);
  const std::string wav_path = ::testing::TempDir() + "live_test.wav";
  f = std::fopen(wav_path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(wav.data(), 1, wav.size(), f);
  std::fwrite(pcm.data(), 2, pcm.size(), f);
  std::fclose(f);
  EXPECT_EQ(Shell("cat " + wav_path + " | " + base, &rc), want);
  EXPECT_EQ(rc, 0);
  // usage errors exit 2 and name the flag
  const std::string bad = Shell(base + "other.wav --output-format srt 2>&1", &rc);
  EXPECT_EQ(WEXITSTATUS(rc), 2) << bad;
  EXPECT_NE(bad.find("--live"), std::string::npos) << bad;
}

// The demo dialogue fed live with the JSON prompt, one piece per turn: each piece is its own
// prompt, whose answer numbers its one voice Speaker 0; the engine numbers the voices over
// the stream (the model declares a voice projection), so a voice keeps its number across
// pieces, as the dialogue's reference does.
TEST(Live, SpeakersHoldAcrossPieces) {
  auto model = TinyModel();
  ASSERT_TRUE(model);
  const std::string dir = TERN_SOURCE_DIR "/samples/";
  const std::vector<float> x = Clip(dir + "dialogue1.wav");
  std::ifstream in(dir + "dialogue1.json");
  const nlohmann::json ref = nlohmann::json::parse(in);  // [[start, end, speaker, text], ...]
  Session s(model, 2);
  LiveOptions o;
  o.transcribe.format = PromptFormat::kJson;
  const std::vector<LiveEvent> ev = RunLive(s, x, Chunks(x.size(), 3), o);
  std::vector<int> speakers;
  for (const LiveEvent* f : Finals(ev)) {
    ASSERT_TRUE(f->transcript.structured) << f->text;
    for (const Segment& g : f->transcript.segments) {
      speakers.push_back(g.speaker);
      // times from the stream's start, within the piece
      EXPECT_GE(g.start, f->start_s() - 1e-9);
      EXPECT_LE(g.end, f->end_s() + 1e-9);
    }
  }
  EXPECT_EQ(Finals(ev).size(), ref.size()) << "one piece per turn";
  ASSERT_EQ(speakers.size(), ref.size());
  EXPECT_EQ(speakers[0], 0);
  for (size_t i = 0; i < ref.size(); ++i) {
    for (size_t j = i + 1; j < ref.size(); ++j) {
      EXPECT_EQ(speakers[i] == speakers[j], ref[i][2] == ref[j][2]) << i << " " << j;
    }
  }

  // The CLI shows them: a final's JSON line carries the segments, the txt lines the speakers.
  const std::string base = std::string(TERN_BINARY) + " transcribe --model " + kModelDir +
                           " -t 1 --format json --live " + dir + "dialogue1.wav";
  int rc = -1;
  const std::string out = Shell(base + " --output-format json", &rc);
  ASSERT_EQ(rc, 0) << out;
  std::vector<int> cli;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j["type"] != "final") continue;
    for (const nlohmann::json& g : j["segments"]) cli.push_back(g["speaker"].get<int>());
  }
  EXPECT_EQ(cli, speakers) << out;
  // (The CLI reads the file's samples as they are, the test fed LoadAudio's normalized ones:
  // the words may differ by a rounding, the speakers do not.)
  std::istringstream txt(Shell(base, &rc));
  size_t k = 0;
  for (std::string line; std::getline(txt, line); ++k) {
    ASSERT_LT(k, speakers.size()) << line;
    EXPECT_EQ(line.rfind("Speaker " + std::to_string(speakers[k]) + ": ", 0), 0u) << line;
  }
  EXPECT_EQ(k, speakers.size());
}

}  // namespace
}  // namespace tern
