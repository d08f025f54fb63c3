// Speakers by voice: the tern.voices.* keys read or refused, the clustering equal to a
// plain average-linkage loop, and segments of two synthetic voices labelled apart.
#include "engine/speakers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "gguf/test_parse.h"
#include "gguf/writer.h"

namespace tern::engine {
namespace {

using gguf::Parsed;
Parsed Parse(const gguf::Writer& w) { return gguf::ParseWritten(w); }

constexpr int kF = audio::kVoiceFeatureCount;

gguf::Writer Declared(int dims, float link) {
  gguf::Writer w;
  w.SetF32Array(kVoicesMeanKey, std::vector<float>(kF, 0.5f));
  std::vector<float> proj(static_cast<size_t>(kF) * dims, 0.0f);
  for (int i = 0; i < std::min(kF, dims); ++i) proj[static_cast<size_t>(i) * dims + i] = 1.0f;
  w.SetF32Array(kVoicesProjectionKey, proj);
  w.SetF32(kVoicesLinkDistanceKey, link);
  return w;
}

TEST(VoiceProjection, AbsentKeysKeepTheModelsLabels) {
  gguf::Writer w;
  w.SetString("general.name", "published");
  Parsed p = Parse(w);
  Result<std::optional<VoiceProjection>> v = ReadVoiceProjection(*p.file);
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_value());
}

TEST(VoiceProjection, ReadWhenDeclared) {
  Parsed p = Parse(Declared(3, 0.25f));
  Result<std::optional<VoiceProjection>> v = ReadVoiceProjection(*p.file);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ((*v)->dims, 3);
  EXPECT_DOUBLE_EQ((*v)->link_distance, 0.25);
  audio::VoiceFeatures f{};
  f[0] = 2.5;
  f[2] = 1.5;
  const std::vector<double> e = (*v)->Embed(f);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_DOUBLE_EQ(e[0], 2.0);   // (2.5 - 0.5) * 1
  EXPECT_DOUBLE_EQ(e[1], -0.5);  // (0 - 0.5) * 1
  EXPECT_DOUBLE_EQ(e[2], 1.0);
}

void ExpectRefused(const gguf::Writer& w, const std::string& names) {
  Parsed p = Parse(w);
  Result<std::optional<VoiceProjection>> v = ReadVoiceProjection(*p.file);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("m.gguf"), std::string::npos) << v.status().ToString();
  EXPECT_NE(v.status().message().find(names), std::string::npos) << v.status().ToString();
}

TEST(VoiceProjection, RefusedWhenIncompleteOrWrong) {
  {
    gguf::Writer w;
    w.SetF32Array(kVoicesMeanKey, std::vector<float>(kF, 0.0f));
    ExpectRefused(w, kVoicesProjectionKey);  // partners missing
  }
  {
    gguf::Writer w = Declared(2, 0.3f);
    w.SetF32Array(kVoicesMeanKey, std::vector<float>(kF - 1, 0.0f));
    ExpectRefused(w, kVoicesMeanKey);
  }
  {
    gguf::Writer w = Declared(2, 0.3f);
    w.SetF32Array(kVoicesProjectionKey, std::vector<float>(kF * 2 + 1, 0.0f));
    ExpectRefused(w, kVoicesProjectionKey);
  }
  {
    gguf::Writer w = Declared(2, 0.3f);
    std::vector<float> mean(kF, 0.0f);
    mean[7] = NAN;
    w.SetF32Array(kVoicesMeanKey, mean);
    ExpectRefused(w, "tern.voices.mean[7]");
  }
  ExpectRefused(Declared(2, 0.0f), kVoicesLinkDistanceKey);
  ExpectRefused(Declared(2, 2.5f), kVoicesLinkDistanceKey);
  {
    gguf::Writer w = Declared(2, 0.3f);
    w.SetString(kVoicesLinkDistanceKey, "near");
    ExpectRefused(w, kVoicesLinkDistanceKey);
  }
}

// Average linkage as written in training/voices.py: every pass scans all pairs of groups
// for the smallest mean member distance.
std::vector<int> PlainLinkage(const std::vector<std::vector<double>>& pts, double link) {
  const size_t n = pts.size();
  auto dist = [&](size_t i, size_t j) {
    double dot = 0, a = 0, b = 0;
    for (size_t k = 0; k < pts[i].size(); ++k) {
      dot += pts[i][k] * pts[j][k];
      a += pts[i][k] * pts[i][k];
      b += pts[j][k] * pts[j][k];
    }
    return 1.0 - dot / ((std::sqrt(a) + 1e-12) * (std::sqrt(b) + 1e-12));
  };
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < n; ++i) groups.push_back({i});
  while (groups.size() > 1) {
    double best = INFINITY;
    size_t bi = 0, bj = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
      for (size_t j = i + 1; j < groups.size(); ++j) {
        double s = 0;
        for (size_t a : groups[i])
          for (size_t b : groups[j]) s += dist(a, b);
        s /= static_cast<double>(groups[i].size() * groups[j].size());
        if (s < best) {
          best = s;
          bi = i;
          bj = j;
        }
      }
    }
    if (best > link) break;
    groups[bi].insert(groups[bi].end(), groups[bj].begin(), groups[bj].end());
    groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(bj));
  }
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    return *std::min_element(a.begin(), a.end()) < *std::min_element(b.begin(), b.end());
  });
  std::vector<int> labels(n);
  for (size_t g = 0; g < groups.size(); ++g)
    for (size_t i : groups[g]) labels[i] = static_cast<int>(g);
  return labels;
}

TEST(LinkByVoice, EqualsPlainAverageLinkage) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 1 + trial % 23, dims = 2 + trial % 7, voices = 1 + trial % 4;
    std::vector<std::vector<double>> centre(voices, std::vector<double>(dims));
    for (auto& c : centre)
      for (double& v : c) v = 3 * noise(rng);
    std::vector<std::vector<double>> pts(n, std::vector<double>(dims));
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < dims; ++k) pts[i][k] = centre[rng() % voices][k] + noise(rng);
    for (double link : {0.05, 0.2, 0.5, 1.0, 1.9}) {
      EXPECT_EQ(LinkByVoice(pts, link), PlainLinkage(pts, link))
          << "trial " << trial << " link " << link;
    }
  }
  EXPECT_TRUE(LinkByVoice({}, 0.5).empty());
}

TEST(LinkByVoice, NumbersGroupsInOrderOfFirstAppearance) {
  const std::vector<std::vector<double>> pts = {{0, 1}, {1, 0}, {0.05, 1}, {1, 0.02}, {-1, 0}};
  EXPECT_EQ(LinkByVoice(pts, 0.1), (std::vector<int>{0, 1, 0, 1, 2}));
  EXPECT_EQ(LinkByVoice(pts, 2.0), (std::vector<int>{0, 0, 0, 0, 0}));
}

// A "voice": a 140 Hz or 230 Hz buzz through a formant-like spectral envelope.
std::vector<float> Voice(double f0, double formant, double seconds, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-0.02, 0.02);
  const int n = static_cast<int>(seconds * 24000);
  std::vector<float> x(n);
  const double pi = std::numbers::pi;
  const double f = f0 * (1 + jitter(rng));
  for (int h = 1; h * f < 7000; ++h) {
    const double fh = h * f;
    const double gain = std::exp(-std::pow((fh - formant) / 600.0, 2)) + 0.05;
    const double phase = 2 * pi * jitter(rng) * 25;
    for (int i = 0; i < n; ++i)
      x[i] += static_cast<float>(0.1 * gain * std::sin(2 * pi * fh * i / 24000 + phase));
  }
  return x;
}

// The raw features as the projection (identity), centred on the two voices' midpoint as a
// fitted mean is, so the tests depend on no fit.
VoiceProjection TwoVoiceProjection() {
  VoiceProjection p;
  p.dims = kF;
  p.projection.assign(static_cast<size_t>(kF) * kF, 0.0);
  for (int i = 0; i < kF; ++i) p.projection[static_cast<size_t>(i) * kF + i] = 1.0;
  audio::VoiceFeatures a, b;
  const std::vector<float> va = Voice(140, 700, 1.0, 99), vb = Voice(230, 1900, 1.0, 98);
  EXPECT_TRUE(audio::ComputeVoiceFeatures(va.data(), static_cast<int64_t>(va.size()), &a));
  EXPECT_TRUE(audio::ComputeVoiceFeatures(vb.data(), static_cast<int64_t>(vb.size()), &b));
  for (int i = 0; i < kF; ++i) p.mean.push_back((a[i] + b[i]) / 2);
  p.link_distance = 1.0;
  return p;
}

TEST(LabelSpeakersByVoice, TellsTwoVoicesApartAcrossTheAudio) {
  // A, B, A, B, a 0.05 s fragment, A: with 0.2 s gaps.
  Audio audio;
  audio.offset_s = 10.0;  // an excerpt: segment times count from the source's start
  Transcript t;
  t.structured = true;
  double at = 0;
  const struct {
    double f0, formant, seconds;
  } parts[] = {{140, 700, 1.2},  {230, 1900, 0.9}, {140, 700, 1.5},
               {230, 1900, 1.1}, {140, 700, 0.05}, {140, 700, 0.8}};
  uint32_t seed = 1;
  for (const auto& p : parts) {
    std::vector<float> v = Voice(p.f0, p.formant, p.seconds, seed++);
    audio.samples.insert(audio.samples.end(), v.begin(), v.end());
    t.segments.push_back(Segment{10.0 + at, 10.0 + at + p.seconds, 0, "words"});
    at += p.seconds + 0.2;
    audio.samples.insert(audio.samples.end(), 4800, 0.0f);
  }
  t.segments.push_back(Segment{-1, -1, 0, "no times"});
  const VoiceProjection p = TwoVoiceProjection();
  Transcript out = t;
  EXPECT_EQ(LabelSpeakersByVoice(p, audio, &out), "");
  std::vector<int> got;
  for (const Segment& s : out.segments) got.push_back(s.speaker);
  // The fragment and the untimed segment take the label before them.
  EXPECT_EQ(got, (std::vector<int>{0, 1, 0, 1, 1, 0, 0}));
  // A text (unstructured) transcript is left alone.
  Transcript plain = t;
  plain.structured = false;
  EXPECT_EQ(LabelSpeakersByVoice(p, audio, &plain), "");
  EXPECT_EQ(plain.segments[1].speaker, 0);
}

// A live piece: the voices one after another, 0.2 s apart, times from the piece's start.
struct Piece {
  Audio audio;
  Transcript t;
};
Piece MakePiece(std::initializer_list<char> voices, uint32_t seed) {
  Piece p;
  p.t.structured = true;
  double at = 0;
  for (char v : voices) {
    const double seconds = 0.8 + 0.1 * (seed % 3);
    const std::vector<float> x =
        v == 'A' ? Voice(140, 700, seconds, seed) : Voice(230, 1900, seconds, seed);
    p.audio.samples.insert(p.audio.samples.end(), x.begin(), x.end());
    p.t.segments.push_back(Segment{at, at + seconds, 0, std::string(1, v)});
    at += seconds + 0.2;
    p.audio.samples.insert(p.audio.samples.end(), 4800, 0.0f);
    ++seed;
  }
  return p;
}

std::vector<int> Speakers(const Transcript& t) {
  std::vector<int> s;
  for (const Segment& g : t.segments) s.push_back(g.speaker);
  return s;
}

TEST(StreamSpeakers, NumbersHoldAcrossPieces) {
  StreamSpeakers stream(TwoVoiceProjection());
  // B speaks first and alone; then A; then both; then B again.
  const std::vector<std::vector<char>> pieces = {{'B'}, {'A'}, {'A', 'B'}, {'B', 'B'}, {'A'}};
  const std::vector<std::vector<int>> want = {{0}, {1}, {1, 0}, {0, 0}, {1}};
  uint32_t seed = 10;
  for (size_t k = 0; k < pieces.size(); ++k) {
    Piece p;
    if (pieces[k].size() == 1)
      p = MakePiece({pieces[k][0]}, seed);
    else
      p = MakePiece({pieces[k][0], pieces[k][1]}, seed);
    seed += 7;
    Transcript alone = p.t;
    ASSERT_EQ(LabelSpeakersByVoice(TwoVoiceProjection(), p.audio, &alone), "");
    stream.Label(p.audio, &p.t);
    EXPECT_EQ(Speakers(p.t), want[k]) << "piece " << k;
    // Labelled alone, every piece starts again at Speaker 0: A would be 0 in piece 1.
    if (k == 1) EXPECT_EQ(Speakers(alone), (std::vector<int>{0}));
  }
}

TEST(StreamSpeakers, UnheardSegmentsTakeTheLastNumberSent) {
  StreamSpeakers stream(TwoVoiceProjection());
  Piece a = MakePiece({'A'}, 1), b = MakePiece({'B'}, 2);
  stream.Label(a.audio, &a.t);
  stream.Label(b.audio, &b.t);
  ASSERT_EQ(Speakers(b.t), (std::vector<int>{1}));
  // A piece whose only segment has no times, and one too short to describe.
  Piece untimed = MakePiece({'A'}, 3);
  untimed.t.segments[0].start = untimed.t.segments[0].end = -1;
  stream.Label(untimed.audio, &untimed.t);
  EXPECT_EQ(Speakers(untimed.t), (std::vector<int>{1}));
  Piece fragment = MakePiece({'A'}, 4);
  fragment.t.segments[0].end = fragment.t.segments[0].start + 0.05;
  stream.Label(fragment.audio, &fragment.t);
  EXPECT_EQ(Speakers(fragment.t), (std::vector<int>{1}));
  // A text transcript is left alone.
  Piece text = MakePiece({'A'}, 5);
  text.t.structured = false;
  text.t.segments[0].speaker = 7;
  stream.Label(text.audio, &text.t);
  EXPECT_EQ(Speakers(text.t), (std::vector<int>{7}));
  // A is still Speaker 0.
  Piece again = MakePiece({'A'}, 6);
  stream.Label(again.audio, &again.t);
  EXPECT_EQ(Speakers(again.t), (std::vector<int>{0}));
}

}  // namespace
}  // namespace tern::engine
