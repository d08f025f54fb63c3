#include "audio/audio.h"

#include <gtest/gtest.h>
#include <sndfile.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "audio/normalize.h"
#include "audio/resample.h"
#include "base/test_util.h"

namespace tern::audio {
namespace {

using testutil::Rms;

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/tern_audio_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string File(const std::string& name) const { return (fs::path(path_) / name).string(); }

 private:
  std::string path_;
};

// Writes interleaved float frames with libsndfile; false if this build cannot write `format`.
bool WriteFloat(const std::string& path, int format, int rate, int channels,
                const std::vector<float>& data) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = format;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (f == nullptr) return false;
  const sf_count_t frames = static_cast<sf_count_t>(data.size() / channels);
  const bool ok = sf_writef_float(f, data.data(), frames) == frames;
  sf_close(f);
  return ok;
}

bool WriteS16(const std::string& path, int format, int rate, int channels,
              const std::vector<int16_t>& data) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = format;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (f == nullptr) return false;
  const sf_count_t frames = static_cast<sf_count_t>(data.size() / channels);
  const bool ok = sf_writef_short(f, data.data(), frames) == frames;
  sf_close(f);
  return ok;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::vector<int16_t> RandomS16(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int16_t> v(n);
  for (auto& x : v) x = static_cast<int16_t>(static_cast<int32_t>(rng() % 65536) - 32768);
  return v;
}

std::vector<float> Sine(int rate, double hz, double amp, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(amp * std::sin(2 * M_PI * hz * i / rate));
  return v;
}

AudioOptions Raw() {
  AudioOptions o;
  o.normalize = false;
  return o;
}

Status Err(const Result<Audio>& r) { return r.ok() ? Status::Ok() : r.status(); }

TEST(Audio, Wav24kMonoPassesThroughWithLibsndfileScaling) {
  TempDir dir;
  const auto pcm = RandomS16(5000, 1);
  const std::string path = dir.File("a.wav");
  ASSERT_TRUE(WriteS16(path, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 24000, 1, pcm));
  auto a = LoadAudio(path, Raw());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->samples.size(), pcm.size());
  for (size_t i = 0; i < pcm.size(); ++i) ASSERT_EQ(a->samples[i], pcm[i] / 32768.0f) << i;
  EXPECT_EQ(a->source_rate, 24000);
  EXPECT_EQ(a->source_channels, 1);
  EXPECT_DOUBLE_EQ(a->duration_s(), 5000 / 24000.0);
  EXPECT_EQ(a->name, path);
}

TEST(Audio, StereoMixdownIsTheFloatMean) {
  TempDir dir;
  const auto pcm = RandomS16(2 * 4000, 2);
  const std::string path = dir.File("s.wav");
  ASSERT_TRUE(WriteS16(path, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 24000, 2, pcm));
  auto a = LoadAudio(path, Raw());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->samples.size(), 4000u);
  for (size_t i = 0; i < 4000; ++i) {
    const float want = (0.0f + pcm[2 * i] / 32768.0f + pcm[2 * i + 1] / 32768.0f) / 2.0f;
    ASSERT_EQ(a->samples[i], want) << i;
  }
  EXPECT_EQ(a->source_channels, 2);

  // Three float channels, summed in channel order before dividing by 3.
  std::vector<float> f3(3 * 1000);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& v : f3) v = u(rng);
  const std::string p3 = dir.File("f3.wav");
  ASSERT_TRUE(WriteFloat(p3, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 24000, 3, f3));
  auto b = LoadAudio(p3, Raw());
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  for (size_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(b->samples[i], (0.0f + f3[3 * i] + f3[3 * i + 1] + f3[3 * i + 2]) / 3.0f) << i;
  }
}

// soxr HQ: a 440 Hz sine at 16 kHz comes out as the same sine sampled at 24 kHz.
// Tolerance: HQ is a 20-bit design (~1e-6 of full scale); 1e-4 leaves room for the
// s/float rounding of the fixture while still failing on any shift of phase (a one-sample
// delay at 24 kHz is an error of ~0.06 here) or frequency.
TEST(Audio, Resample16kTo24kKeepsFrequencyAndLength) {
  TempDir dir;
  const size_t n = 16000;
  const std::string path = dir.File("sine16k.wav");
  ASSERT_TRUE(
      WriteFloat(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 16000, 1, Sine(16000, 440, 0.5, n)));
  auto a = LoadAudio(path, Raw());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_NEAR(static_cast<double>(a->samples.size()), n * 24000.0 / 16000.0, 1.0);
  const auto want = Sine(24000, 440, 0.5, a->samples.size());
  double max_err = 0;
  for (size_t i = 600; i + 600 < a->samples.size(); ++i) {
    max_err = std::max(max_err, std::fabs(static_cast<double>(a->samples[i]) - want[i]));
  }
  EXPECT_LT(max_err, 1e-4);

  // Upstream's linear interpolation: the error of linear interpolation of A sin(wt) with
  // step h is at most A (w h)^2 / 8 = 0.5 * (2 pi 440 / 16000)^2 / 8 = 1.87e-3.
  auto b = LoadAudio(path, Raw(), Resampler::kLinear);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->samples.size(), 24000u);  // (size_t)(16000 / (2/3))
  double lin_err = 0;
  for (size_t i = 0; i + 2 < b->samples.size(); ++i) {
    lin_err = std::max(lin_err, std::fabs(static_cast<double>(b->samples[i]) - want[i]));
  }
  EXPECT_LT(lin_err, 1.87e-3 + 1e-6);
  EXPECT_GT(lin_err, 1e-4);  // and it really is the linear one
}

TEST(Audio, LinearResamplerFollowsUpstreamFormula) {
  const std::vector<float> in = {0, 1, 2, 3};
  EXPECT_EQ(ResampleLinear(in, 16000, 24000),
            (std::vector<float>{0.0f, static_cast<float>(2.0 / 3), static_cast<float>(4.0 / 3),
                                2.0f, static_cast<float>(8.0 / 3), 3.0f}));
  // Downsampling 48 kHz -> 24 kHz keeps every other sample.
  EXPECT_EQ(ResampleLinear({1, 2, 3, 4, 5}, 48000, 24000), (std::vector<float>{1, 3}));
}

TEST(Audio, SoxrOutputDoesNotDependOnBlocking) {
  const auto x = Sine(44100, 1000, 0.3, 30000);
  auto whole = SoxrResampler::Create(44100, 24000);
  ASSERT_TRUE(whole.ok());
  std::vector<float> a, b;
  ASSERT_TRUE((*whole)->Push(x.data(), x.size(), &a).ok());
  ASSERT_TRUE((*whole)->Finish(&a).ok());
  auto parts = SoxrResampler::Create(44100, 24000);
  std::mt19937 rng(5);
  for (size_t p = 0; p < x.size();) {
    const size_t k = std::min<size_t>(x.size() - p, 1 + rng() % 3000);
    ASSERT_TRUE((*parts)->Push(x.data() + p, k, &b).ok());
    p += k;
  }
  ASSERT_TRUE((*parts)->Finish(&b).ok());
  EXPECT_EQ(a, b);
  EXPECT_NEAR(static_cast<double>(a.size()), 30000 * 24000.0 / 44100, 1.0);
}

TEST(Audio, RealLibriSpeechClipsLoadAt24k) {
  for (const char* id : {"6930-75918-0000", "6930-75918-0001"}) {
    const std::string path =
        std::string(TERN_SPEECH_DIR) + "/librispeech_test_clean_" + id + ".wav";
    SF_INFO info{};
    SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
    ASSERT_NE(f, nullptr) << path;
    sf_close(f);
    ASSERT_EQ(info.samplerate, 16000);
    auto a = LoadAudio(path);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_NEAR(static_cast<double>(a->samples.size()), info.frames * 1.5, 1.0) << path;
    EXPECT_EQ(a->source_rate, 16000);
    // -25 dBFS: the float scalar is exact to ~1e-6 relative, so 0.001 dB is plenty.
    EXPECT_NEAR(20 * std::log10(Rms(a->samples)), -25.0, 1e-3) << path;
    float peak = 0;
    for (float v : a->samples) peak = std::max(peak, std::fabs(v));
    EXPECT_LE(peak, 1.0f);
  }
}

TEST(Audio, NormalizeAndClipGuard) {
  std::vector<float> x = Sine(24000, 300, 0.01, 24000);
  const float rms_before = NormalizeRms(&x);
  EXPECT_NEAR(rms_before, 0.01 / std::sqrt(2.0), 1e-6);
  // The +1e-6 in the divisor leaves the result short by rms / (rms + 1e-6); float rounding
  // of the scalar and the samples is ~1e-7 relative.
  const double target = std::pow(10.0, -25.0 / 20.0);
  EXPECT_NEAR(Rms(x), target * rms_before / (rms_before + 1e-6), 1e-6 * target);

  std::vector<float> quiet(100, 1e-7f);  // rms < 1e-6: left alone
  NormalizeRms(&quiet);
  EXPECT_EQ(quiet, std::vector<float>(100, 1e-7f));

  // A lone spike: after -25 dBFS scaling it is far above 1, and the guard divides it back.
  TempDir dir;
  std::vector<float> spike(24000, 0.0f);
  spike[100] = 0.9f;
  spike[200] = -0.1f;
  const std::string path = dir.File("spike.wav");
  ASSERT_TRUE(WriteFloat(path, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 24000, 1, spike));
  auto guarded = LoadAudio(path);
  ASSERT_TRUE(guarded.ok()) << guarded.status().ToString();
  AudioOptions no_guard;
  no_guard.clip_guard = false;
  auto unguarded = LoadAudio(path, no_guard);
  ASSERT_TRUE(unguarded.ok());
  const float big = unguarded->samples[100];
  EXPECT_GT(big, 1.0f);
  const double spike_rms = std::sqrt((0.9 * 0.9 + 0.1 * 0.1) / 24000);
  EXPECT_NEAR(Rms(unguarded->samples), target * spike_rms / (spike_rms + 1e-6), 1e-6 * target);
  EXPECT_EQ(guarded->samples[100], big / (big + 1e-6f));
  EXPECT_EQ(guarded->samples[200], unguarded->samples[200] / (big + 1e-6f));
  // no_normalize leaves the decoded samples alone.
  auto raw = LoadAudio(path, Raw());
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->samples, spike);
  // The gain undoes both steps: samples / gain is the source's level (the no-speech check).
  EXPECT_EQ(raw->gain, 1.0f);
  EXPECT_NEAR(unguarded->samples[100] / unguarded->gain, 0.9f, 1e-5f);
  EXPECT_NEAR(guarded->samples[100] / guarded->gain, 0.9f, 1e-5f);
  EXPECT_NEAR(guarded->samples[200] / guarded->gain, -0.1f, 1e-6f);
  EXPECT_LT(guarded->gain, unguarded->gain);
}

TEST(Audio, FlacOggMp3Decode) {
  TempDir dir;
  const auto pcm = RandomS16(16000, 7);
  // A 16 kHz voice-like signal for the lossy codecs: two tones.
  std::vector<float> tones = Sine(16000, 300, 0.3, 32000);
  const auto t2 = Sine(16000, 1200, 0.2, 32000);
  for (size_t i = 0; i < tones.size(); ++i) tones[i] += t2[i];

  const std::string wav = dir.File("x.wav"), flac = dir.File("x.flac");
  ASSERT_TRUE(WriteS16(wav, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, pcm));
  ASSERT_TRUE(WriteS16(flac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 16000, 1, pcm));
  auto w = LoadAudio(wav), f = LoadAudio(flac);
  ASSERT_TRUE(w.ok() && f.ok()) << Err(f).ToString();
  EXPECT_EQ(w->samples, f->samples);  // lossless: identical after the same pipeline

  const std::string ogg = dir.File("x.ogg");
  ASSERT_TRUE(WriteFloat(ogg, SF_FORMAT_OGG | SF_FORMAT_VORBIS, 16000, 1, tones));
  auto o = LoadAudio(ogg);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->source_rate, 16000);
  EXPECT_NEAR(static_cast<double>(o->samples.size()), 48000.0, 1.0);
  EXPECT_NEAR(20 * std::log10(Rms(o->samples)), -25.0, 1e-3);

  const std::string mp3 = dir.File("x.mp3");
  if (!WriteFloat(mp3, SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, 16000, 1, tones)) {
    GTEST_SKIP() << "this libsndfile cannot encode MP3 (decoding is still built in)";
  }
  auto m = LoadAudio(mp3);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->source_rate, 16000);
  // MP3 frames are 576 samples at 16 kHz; the decoder may keep encoder padding.
  EXPECT_NEAR(static_cast<double>(m->samples.size()), 48000.0, 1.5 * 2 * 1152);
  EXPECT_NEAR(20 * std::log10(Rms(m->samples)), -25.0, 1e-3);
  const std::string bytes = ReadBytes(mp3);
  auto mm = LoadAudioFromMemory(bytes.data(), bytes.size(), "upload.mp3");
  ASSERT_TRUE(mm.ok()) << mm.status().ToString();
  EXPECT_EQ(mm->samples, m->samples);
}

TEST(Audio, FromMemoryEqualsFromPath) {
  TempDir dir;
  const std::string flac = dir.File("m.flac");
  ASSERT_TRUE(WriteS16(flac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 44100, 2, RandomS16(2 * 20000, 9)));
  const std::string bytes = ReadBytes(flac);
  auto p = LoadAudio(flac), m = LoadAudioFromMemory(bytes.data(), bytes.size(), "m.flac");
  ASSERT_TRUE(p.ok() && m.ok()) << Err(m).ToString();
  EXPECT_EQ(p->samples, m->samples);
  EXPECT_EQ(m->source_rate, 44100);
  EXPECT_EQ(m->source_channels, 2);
}

// A server loads uploads concurrently: same results as one at a time, and each failure
// reports its own input.
TEST(Audio, ConcurrentLoadsFromMemory) {
  const std::string clip =
      ReadBytes(std::string(TERN_SPEECH_DIR) + "/librispeech_test_clean_6930-75918-0000.wav");
  auto ref = LoadAudioFromMemory(clip.data(), clip.size(), "clip");
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  std::vector<int> bad(4, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      const std::string junk = "not audio " + std::to_string(k) + std::string(100, 'x');
      const std::string jname = "junk" + std::to_string(k);
      for (int rep = 0; rep < 5; ++rep) {
        auto a = LoadAudioFromMemory(clip.data(), clip.size(), "clip");
        if (!a.ok() || a->samples != ref->samples) ++bad[k];
        auto j = LoadAudioFromMemory(junk.data(), junk.size(), jname);
        if (j.ok() || j.status().message().find(jname) == std::string::npos ||
            j.status().message().find("libsndfile") == std::string::npos) {
          ++bad[k];
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < 4; ++k) EXPECT_EQ(bad[k], 0) << "thread " << k;
}

void ExpectError(const Result<Audio>& r, ErrorCode code, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  for (const auto& p : parts) {
    EXPECT_NE(r.status().message().find(p), std::string::npos)
        << "'" << p << "' not in: " << r.status().message();
  }
}

// A canonical 44-byte-header PCM16 WAV with any rate/channel values.
std::string WavBytes(uint32_t rate, uint16_t channels, uint32_t frames) {
  auto u32 = [](uint32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [](uint16_t v) { return std::string(reinterpret_cast<const char*>(&v), 2); };
  const uint32_t data = frames * channels * 2;
  std::string s = "RIFF" + u32(36 + data) + "WAVEfmt " + u32(16) + u16(1) + u16(channels) +
                  u32(rate) + u32(rate * channels * 2) + u16(channels * 2) + u16(16) + "data" +
                  u32(data);
  for (uint32_t i = 0; i < data / 2; ++i) s += u16(static_cast<uint16_t>(i * 37));
  return s;
}

TEST(AudioErrors, FilesAndBytes) {
  TempDir dir;
  ExpectError(LoadAudio(dir.File("missing.wav")), ErrorCode::kNotFound, {"missing.wav", "no such"});
  ExpectError(LoadAudio(dir.File("")), ErrorCode::kInvalidArgument, {"directory"});

  const std::string empty = dir.File("empty.wav");
  WriteBytes(empty, "");
  ExpectError(LoadAudio(empty), ErrorCode::kFormat, {"empty.wav", "empty"});
  ExpectError(LoadAudioFromMemory("", 0, "upload"), ErrorCode::kFormat, {"upload"});

  std::string garbage(4000, '\0');
  std::mt19937 rng(11);
  for (auto& c : garbage) c = static_cast<char>(rng());
  const std::string gpath = dir.File("garbage.mp3");
  WriteBytes(gpath, garbage);
  ExpectError(LoadAudio(gpath), ErrorCode::kFormat, {"garbage.mp3", "libsndfile"});
  ExpectError(LoadAudioFromMemory(garbage.data(), garbage.size(), "blob"), ErrorCode::kFormat,
              {"blob", "libsndfile"});

  // A WAV cut inside its header.
  const std::string wav = WavBytes(16000, 1, 1000);
  const std::string cut = dir.File("cut.wav");
  WriteBytes(cut, wav.substr(0, 30));
  ExpectError(LoadAudio(cut), ErrorCode::kFormat, {"cut.wav"});

  // A WAV with a header and no frames.
  const std::string none = dir.File("none.wav");
  WriteBytes(none, WavBytes(16000, 1, 0));
  ExpectError(LoadAudio(none), ErrorCode::kFormat, {"none.wav", "no audio samples"});
}

#if !TERN_HAVE_AV
// Without FFmpeg, a container libsndfile does not read is an error that says what is missing.
TEST(AudioErrors, WithoutFfmpegAnM4aSaysWhatItNeeds) {
  std::string m4a(
      "\0\0\0\x18"
      "ftypM4A \0\0\0\0M4A isom",
      24);
  m4a += std::string(64, '\0');
  ExpectError(LoadAudioFromMemory(m4a.data(), m4a.size(), "memo.m4a"), ErrorCode::kFormat,
              {"memo.m4a: ", "libsndfile", "needs tern built with FFmpeg (libavformat)"});
}
#endif

TEST(AudioErrors, TruncatedStreams) {
  TempDir dir;
  const auto pcm = RandomS16(64000, 4);
  const std::string flac = dir.File("t.flac"), wav = dir.File("t.wav");
  ASSERT_TRUE(WriteS16(flac, SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 16000, 1, pcm));
  ASSERT_TRUE(WriteS16(wav, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, pcm));
  const std::string fb = ReadBytes(flac).substr(0, ReadBytes(flac).size() / 2);
  ExpectError(LoadAudioFromMemory(fb.data(), fb.size(), "half.flac"), ErrorCode::kFormat,
              {"half.flac", "truncated", "64000 frames"});
  const std::string wb = ReadBytes(wav).substr(0, 44 + 64000);
  ExpectError(LoadAudioFromMemory(wb.data(), wb.size(), "half.wav"), ErrorCode::kFormat,
              {"half.wav", "truncated", "128000 bytes", "holds 64000"});
  // A streaming writer's placeholder size (0xFFFFFFFF) is not truncation.
  std::string stream = ReadBytes(wav);
  for (int i = 0; i < 4; ++i) stream[40 + i] = '\xFF';
  auto s = LoadAudioFromMemory(stream.data(), stream.size(), "pipe.wav", Raw());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->samples.size(), 96000u);
}

TEST(AudioErrors, Content) {
  TempDir dir;
  const std::string silent = dir.File("silent.wav");
  ASSERT_TRUE(
      WriteS16(silent, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, std::vector<int16_t>(8000, 0)));
  ExpectError(LoadAudio(silent), ErrorCode::kInvalidArgument, {"silent.wav", "silent"});
  // Opposite channels cancel in the mix: also silent.
  std::vector<int16_t> anti(2 * 1000);
  for (size_t i = 0; i < 1000; ++i) {
    anti[2 * i] = static_cast<int16_t>(i);
    anti[2 * i + 1] = static_cast<int16_t>(-static_cast<int>(i));
  }
  const std::string ap = dir.File("anti.wav");
  ASSERT_TRUE(WriteS16(ap, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 2, anti));
  ExpectError(LoadAudio(ap), ErrorCode::kInvalidArgument, {"silent"});

  std::vector<float> nan(1000, 0.1f);
  nan[500] = std::nanf("");
  const std::string np = dir.File("nan.wav");
  ASSERT_TRUE(WriteFloat(np, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 24000, 1, nan));
  ExpectError(LoadAudio(np), ErrorCode::kFormat, {"nan.wav", "sample 500", "NaN"});
  std::vector<float> inf(1000, 0.1f);
  inf[7] = -INFINITY;
  const std::string ip = dir.File("inf.wav");
  ASSERT_TRUE(WriteFloat(ip, SF_FORMAT_WAV | SF_FORMAT_FLOAT, 24000, 1, inf));
  ExpectError(LoadAudio(ip), ErrorCode::kFormat, {"sample 7", "infinite"});

  const std::string low = WavBytes(500, 1, 100), many = WavBytes(16000, 65, 10),
                    high = WavBytes(800000, 1, 100);
  ExpectError(LoadAudioFromMemory(low.data(), low.size(), "low"), ErrorCode::kUnsupported,
              {"low", "500 Hz"});
  ExpectError(LoadAudioFromMemory(high.data(), high.size(), "high"), ErrorCode::kUnsupported,
              {"800000 Hz"});
  ExpectError(LoadAudioFromMemory(many.data(), many.size(), "many"), ErrorCode::kUnsupported,
              {"many", "65 channels", "1 to 64"});
  const std::string ok64 = WavBytes(16000, 64, 10);
  EXPECT_TRUE(LoadAudioFromMemory(ok64.data(), ok64.size(), "64ch").ok());
}

// --offset / --duration: the excerpt is exactly the slice of the whole (before normalization),
// then normalized on its own; bad excerpts are errors that say why.
TEST(Audio, ExcerptIsTheSliceOfTheWhole) {
  TempDir dir;
  const auto pcm = RandomS16(24000, 5);  // 1 s at 24 kHz
  const std::string path = dir.File("e.wav");
  ASSERT_TRUE(WriteS16(path, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 24000, 1, pcm));
  auto whole = LoadAudio(path, Raw());
  ASSERT_TRUE(whole.ok());
  AudioOptions o = Raw();
  o.offset_s = 0.25;
  o.duration_s = 0.5;
  auto part = LoadAudio(path, o);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(part->samples,
            std::vector<float>(whole->samples.begin() + 6000, whole->samples.begin() + 18000));
  EXPECT_DOUBLE_EQ(part->offset_s, 0.25);
  EXPECT_DOUBLE_EQ(part->duration_s(), 0.5);
  o.duration_s = 0;  // to the end
  auto tail = LoadAudio(path, o);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->samples.size(), 18000u);
  o.duration_s = 5;  // past the end: to the end
  EXPECT_EQ(LoadAudio(path, o)->samples.size(), 18000u);
  AudioOptions norm;
  norm.offset_s = 0.5;
  auto normalized = LoadAudio(path, norm);
  ASSERT_TRUE(normalized.ok());
  EXPECT_NEAR(20 * std::log10(Rms(normalized->samples)), -25.0, 0.01);

  o.offset_s = 1.0;
  ExpectError(LoadAudio(path, o), ErrorCode::kInvalidArgument,
              {"e.wav", "--offset", "past the end"});
  o.offset_s = 0;
  o.duration_s = 1e-6;
  ExpectError(LoadAudio(path, o), ErrorCode::kInvalidArgument, {"e.wav", "--duration"});
  // A silent stretch of an audible file.
  std::vector<int16_t> gap = pcm;
  std::fill(gap.begin() + 12000, gap.end(), int16_t{0});
  const std::string gapped = dir.File("gap.wav");
  ASSERT_TRUE(WriteS16(gapped, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 24000, 1, gap));
  AudioOptions silent;
  silent.offset_s = 0.6;
  ExpectError(LoadAudio(gapped, silent), ErrorCode::kInvalidArgument, {"gap.wav", "silent"});
  for (double bad : {-0.5, std::nan(""), 1e12}) {
    AudioOptions b;
    b.offset_s = bad;
    EXPECT_FALSE(b.Validate().ok()) << bad;
    b = AudioOptions();
    b.duration_s = bad;
    EXPECT_FALSE(b.Validate().ok()) << bad;
  }
}

TEST(AudioErrors, LengthLimitAndOptions) {
  TempDir dir;
  const std::string path = dir.File("long.wav");
  ASSERT_TRUE(WriteS16(path, SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 1, RandomS16(16000, 3)));
  AudioOptions o;
  o.max_seconds = 0.5;
  ExpectError(LoadAudio(path, o), ErrorCode::kResourceExhausted,
              {"long.wav", "1.0 s", "0.5 s", "--max-audio-seconds"});
  o.max_seconds = 1.0;
  EXPECT_TRUE(LoadAudio(path, o).ok());
  // Without a frame count in the header (OGG) the limit is enforced while decoding.
  const std::string ogg = dir.File("long.ogg");
  ASSERT_TRUE(
      WriteFloat(ogg, SF_FORMAT_OGG | SF_FORMAT_VORBIS, 16000, 1, Sine(16000, 200, 0.3, 160000)));
  o.max_seconds = 2.0;
  ExpectError(LoadAudio(ogg, o), ErrorCode::kResourceExhausted, {"long.ogg", "2.0 s"});

  for (double bad : {0.0, -1.0, std::nan(""), static_cast<double>(INFINITY), 1e12}) {
    AudioOptions b;
    b.max_seconds = bad;
    EXPECT_FALSE(b.Validate().ok()) << bad;
    EXPECT_FALSE(LoadAudio(path, b).ok());
  }
  EXPECT_TRUE(AudioOptions().Validate().ok());
}

}  // namespace
}  // namespace tern::audio
