// The FFmpeg decode path (av_decode.h) on signals encoded here with FFmpeg's own encoders:
// WebM/Opus (what browsers record) and M4A/AAC (what phones save) come back as the signal
// that went in, mixed to mono as the mean of the channels; broken, hostile and playlist
// inputs are errors naming the file, and FFmpeg writes nothing to stderr.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <atomic>
#include <vector>

#include "audio/audio.h"
#include "audio/av_decode.h"
#include "audio/av_encode_testutil.h"

namespace tern::audio {
namespace {

namespace fs = std::filesystem;

constexpr int kEncodeRate = 48000;
constexpr double kSeconds = 2.0;

// Two different channels (a mix by the mean differs from any weighted downmix), neither
// periodic (a chirp; a tone under a slow tremolo), so only one lag lines them up.
double Left(double t) {
  const double f0 = 200, f1 = 3000;
  return 0.30 * std::sin(2 * M_PI * (f0 * t + (f1 - f0) * t * t / (2 * kSeconds)));
}
double Right(double t) {
  return 0.20 * std::sin(2 * M_PI * 660 * t + 0.5) * (0.6 + 0.4 * std::sin(2 * M_PI * 3 * t)) +
         0.05 * std::sin(2 * M_PI * 1700 * t);
}

std::vector<float> StereoAt48k() {
  const size_t n = static_cast<size_t>(kSeconds * kEncodeRate);
  std::vector<float> v(2 * n);
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / kEncodeRate;
    v[2 * i] = static_cast<float>(Left(t));
    v[2 * i + 1] = static_cast<float>(Right(t));
  }
  return v;
}

// The expected mono signal at 24 kHz: (left + right) / 2.
std::vector<double> Mono() {
  std::vector<double> v(static_cast<size_t>(kSeconds * kTargetRate));
  for (size_t i = 0; i < v.size(); ++i) {
    const double t = static_cast<double>(i) / kTargetRate;
    v[i] = (Left(t) + Right(t)) / 2;
  }
  return v;
}

// SNR in dB of `got` against Mono() over the middle of the signal (0.2 s trimmed at each
// end: codec start-up and the encoder's last padded frame), at the lag in [-480, 480]
// samples (20 ms) that fits best: containers differ in how exactly they trim encoder delay, and a
// constant shift is not what this measures. `lag` receives it.
double SnrDb(const std::vector<float>& got, int* lag) {
  const std::vector<double> mono = Mono();
  const int64_t edge = kTargetRate / 5;
  const int64_t n = static_cast<int64_t>(mono.size());
  double best = -1e9;
  for (int d = -480; d <= 480; ++d) {
    double sig = 0, err = 0;
    for (int64_t i = edge; i < n - edge; ++i) {
      const int64_t j = i + d;
      if (j < 0 || j >= static_cast<int64_t>(got.size())) continue;
      const double want = mono[static_cast<size_t>(i)];
      sig += want * want;
      err += (got[j] - want) * (got[j] - want);
    }
    const double snr = 10 * std::log10(sig / std::max(err, 1e-30));
    if (snr > best) {
      best = snr;
      *lag = d;
    }
  }
  return best;
}

AudioOptions Raw() {
  AudioOptions o;
  o.normalize = false;
  return o;
}

void ExpectError(const Result<Audio>& r, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.ok());
  for (const auto& p : parts) {
    EXPECT_NE(r.status().message().find(p), std::string::npos)
        << "'" << p << "' not in: " << r.status().message();
  }
}

std::string Encode(const char* container, const char* encoder, int bit_rate) {
  auto bytes = testutil::EncodeWithAv(container, encoder, kEncodeRate, 2, StereoAt48k(), bit_rate);
  return bytes.ok() ? *bytes : std::string();
}

struct Codec {
  const char* container;
  const char* encoder;
  const char* name;  // the upload's name
  int bit_rate;
  double min_snr_db;
};

class AvCodecs : public ::testing::TestWithParam<Codec> {};

TEST_P(AvCodecs, DecodeToTheSignalEncoded) {
  const Codec c = GetParam();
  const std::string bytes = Encode(c.container, c.encoder, c.bit_rate);
  if (bytes.empty()) GTEST_SKIP() << "this FFmpeg cannot encode " << c.encoder;
  auto a = LoadAudioFromMemory(bytes.data(), bytes.size(), c.name, Raw());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->source_rate, kEncodeRate);
  EXPECT_EQ(a->source_channels, 2);
  EXPECT_EQ(a->name, c.name);
  // Within a codec frame or two (encoder delay, the last frame's padding) of 2 s.
  EXPECT_NEAR(a->duration_s(), kSeconds, 0.05);
  int lag = 0;
  const double snr = SnrDb(a->samples, &lag);
  std::printf("%s (%s, %d kbit/s): SNR %.1f dB at lag %d samples, %zu bytes\n", c.name, c.encoder,
              c.bit_rate / 1000, snr, lag, bytes.size());
  EXPECT_GE(snr, c.min_snr_db);
  EXPECT_LE(std::abs(lag), 48);  // the container's delay trimming is honoured (2 ms)

  // From a file: the same samples.
  const std::string path =
      (fs::temp_directory_path() / (std::string("tern_av_") + c.name)).string();
  std::ofstream(path, std::ios::binary) << bytes;
  auto f = LoadAudio(path, Raw());
  fs::remove(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->samples, a->samples);
  EXPECT_EQ(f->name, path);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, AvCodecs,
    // Perceptual codecs keep what is heard, not the waveform: the bounds sit under what this
    // FFmpeg's encoders give (Opus 96 kbit/s: 40.8 dB; its native AAC at 128 kbit/s: 20.2
    // dB) and far above what a wrong mix gives (the left channel alone: ~0 dB; a -3 dB
    // "downmix" of both: 7.7 dB) or a one-sample shift (~17 dB for Opus' content here).
    ::testing::Values(Codec{"webm", "libopus", "rec.webm", 96000, 30.0},
                      Codec{"ipod", "aac", "memo.m4a", 128000, 15.0}),
    [](const auto& p) { return std::string(p.param.encoder); });

// Runs `f` and returns what it wrote to stderr.
template <typename F>
std::string Stderr(F f) {
  ::testing::internal::CaptureStderr();
  f();
  return ::testing::internal::GetCapturedStderr();
}

TEST(AvErrors, BrokenFilesNameTheFileAndStayOffStderr) {
  const std::string m4a = Encode("ipod", "aac", 128000);
  const std::string webm = Encode("webm", "libopus", 96000);
  if (m4a.empty() || webm.empty()) GTEST_SKIP() << "this FFmpeg cannot encode aac/opus";
  std::string out = Stderr([&] {
    // An M4A keeps its index at the end: cut, nothing says where the samples are.
    const std::string half = m4a.substr(0, m4a.size() / 2);
    ExpectError(LoadAudioFromMemory(half.data(), half.size(), "cut.m4a"), {"cut.m4a: "});
    // Only the header of a WebM.
    const std::string head = webm.substr(0, 200);
    ExpectError(LoadAudioFromMemory(head.data(), head.size(), "head.webm"), {"head.webm: "});
    // Garbage after a valid start: errors, never a crash.
    std::mt19937 rng(5);
    for (int k = 0; k < 20; ++k) {
      std::string bad = (k % 2 ? m4a : webm);
      for (size_t i = bad.size() / 4; i < bad.size(); i += 1 + rng() % 64) {
        bad[i] = static_cast<char>(rng());
      }
      auto r = LoadAudioFromMemory(bad.data(), bad.size(), "noisy.bin");
      if (!r.ok()) {
        EXPECT_EQ(r.status().message().rfind("noisy.bin: ", 0), 0u);
      }
    }
    // Bytes no decoder recognises.
    std::string garbage(5000, '\0');
    for (auto& c : garbage) c = static_cast<char>(rng() % 64 + 64);
    ExpectError(LoadAudioFromMemory(garbage.data(), garbage.size(), "junk.webm"),
                {"junk.webm: ", "not a readable audio file", "libsndfile", "FFmpeg"});
  });
  EXPECT_EQ(out, "");
}

TEST(AvErrors, CutWebmIsAnErrorOrItsFirstPart) {
  // A WebM cut mid-stream (an interrupted upload) has no index at its end to say how long it
  // should be; what decodes is the audio before the cut, or an error naming the file.
  const std::string webm = Encode("webm", "libopus", 96000);
  if (webm.empty()) GTEST_SKIP() << "this FFmpeg cannot encode opus";
  const std::string half = webm.substr(0, webm.size() / 2);
  auto r = LoadAudioFromMemory(half.data(), half.size(), "half.webm", Raw());
  if (r.ok()) {
    EXPECT_LT(r->duration_s(), kSeconds * 0.6);
  } else {
    EXPECT_EQ(r.status().message().rfind("half.webm: ", 0), 0u) << r.status().ToString();
  }
}

TEST(AvErrors, PlaylistsThatOpenOtherFilesAreRefused) {
  // A real file the playlists point at: refusing must not depend on it being absent.
  const std::string target = (fs::temp_directory_path() / "tern_av_target.webm").string();
  std::ofstream(target, std::ios::binary) << Encode("webm", "libopus", 96000);
  const std::string concat = "ffconcat version 1.0\nfile '" + target + "'\n";
  const std::string hls =
      "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\nfile://" + target + "\n#EXT-X-ENDLIST\n";
  std::string out = Stderr([&] {
    for (const auto& [bytes, name] : {std::pair{concat, "list.txt"}, std::pair{hls, "list.m3u8"}}) {
      auto r = LoadAudioFromMemory(bytes.data(), bytes.size(), name);
      ASSERT_FALSE(r.ok()) << name << " decoded " << r->samples.size() << " samples";
      EXPECT_EQ(r.status().message().rfind(std::string(name) + ": ", 0), 0u)
          << r.status().ToString();
    }
  });
  fs::remove(target);
  EXPECT_EQ(out, "");
}

// A server decodes uploads on several threads at once: each gets its own samples and its own
// error text (FFmpeg's log is captured per thread).
TEST(AvDecode, ConcurrentDecodesAreIndependent) {
  const std::string webm = Encode("webm", "libopus", 96000);
  const std::string m4a = Encode("ipod", "aac", 128000);
  if (webm.empty() || m4a.empty()) GTEST_SKIP() << "this FFmpeg cannot encode aac/opus";
  auto w = LoadAudioFromMemory(webm.data(), webm.size(), "a.webm");
  auto m = LoadAudioFromMemory(m4a.data(), m4a.size(), "b.m4a");
  ASSERT_TRUE(w.ok() && m.ok());
  const std::string cut = m4a.substr(0, m4a.size() / 2);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) {
        auto a = LoadAudioFromMemory(webm.data(), webm.size(), "a.webm");
        auto b = LoadAudioFromMemory(m4a.data(), m4a.size(), "b.m4a");
        const std::string name = "cut" + std::to_string(t) + ".m4a";
        auto c = LoadAudioFromMemory(cut.data(), cut.size(), name);
        if (!a.ok() || a->samples != w->samples || !b.ok() || b->samples != m->samples || c.ok() ||
            c.status().message().rfind(name + ": ", 0) != 0 ||
            c.status().message().find("moov atom not found") == std::string::npos) {
          ++bad;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(AvErrors, LengthLimitHolds) {
  const std::string webm = Encode("webm", "libopus", 96000);
  if (webm.empty()) GTEST_SKIP() << "this FFmpeg cannot encode opus";
  AudioOptions o;
  o.max_seconds = 1.0;
  ExpectError(LoadAudioFromMemory(webm.data(), webm.size(), "long.webm", o),
              {"long.webm: ", "over the limit of 1.0 s", "--max-audio-seconds"});
}

}  // namespace
}  // namespace tern::audio
