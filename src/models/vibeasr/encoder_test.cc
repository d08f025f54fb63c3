// The encoder on the tiny synthetic checkpoint: every op's int8 bytes and scale against the
// test-only scalar reference (encoder_reference_test.h), frame counts around the 3200-sample
// boundaries, thread-count independence, and load errors that name the tensor.
#include "models/vibeasr/encoder.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <random>
#include <cstring>
#include <thread>

#include "gguf/writer.h"
#include "models/vibeasr/encoder_reference_test.h"
#include "models/vibeasr/synth.h"

namespace tern::vibeasr {
namespace {

// Files are per process: ctest runs every TEST as its own process, possibly in parallel, and
// rewriting a file another process has mapped would kill that process with SIGBUS.
std::vector<std::string>& Created() {
  static std::vector<std::string> files;
  return files;
}
std::string TempFile(const std::string& tag) {
  std::string p =
      testing::TempDir() + "/tern_encoder_" + tag + "_" + std::to_string(getpid()) + ".gguf";
  if (Created().empty())
    std::atexit([] {
      for (const std::string& f : Created()) std::remove(f.c_str());
    });
  Created().push_back(p);
  return p;
}

std::string TinyPath() {
  static const std::string path = [] {
    std::string p = TempFile("tiny");
    SynthOptions o;
    o.geometry = SynthGeometry::kTiny;
    o.seed = 7;
    const Status st = WriteSyntheticEncoder(o, p);
    if (!st.ok()) std::fprintf(stderr, "synth: %s\n", st.ToString().c_str());
    return p;
  }();
  return path;
}

const Encoder& Tiny() {
  static std::unique_ptr<Encoder> enc = [] {
    auto r = Encoder::Load(TinyPath());
    if (!r.ok()) std::fprintf(stderr, "load: %s\n", r.status().ToString().c_str());
    return r.ok() ? std::move(r).value() : nullptr;
  }();
  if (!enc) std::abort();
  return *enc;
}

// Speech-like test signal: a few tones plus noise, in [-1, 1].
std::vector<float> Signal(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  std::vector<float> a(n);
  for (size_t i = 0; i < n; ++i) {
    const float t = static_cast<float>(i) / 24000.0f;
    a[i] = 0.4f * std::sin(2 * 3.14159265f * 220 * t) +
           0.2f * std::sin(2 * 3.14159265f * 1375 * t) + noise(rng);
  }
  return a;
}

struct Snap {
  std::vector<int8_t> q;
  int64_t ne0, ne1;
  float scale;
};

TEST(Encoder, EveryStageMatchesTheScalarReference) {
  const Encoder& enc = Tiny();
  auto file = gguf::File::Open(TinyPath());
  ASSERT_TRUE(file.ok());
  const auto a = Signal(3 * 3200 + 777, 1);
  for (Branch br : {Branch::kAcoustic, Branch::kSemantic}) {
    const VaeGeometry& g = enc.geometry(br);
    std::map<std::string, Snap> got;
    std::vector<std::string> order;
    Encoder::StageHook hook = [&](const std::string& step, const ops::I8sTensor& x) {
      got[step] = Snap{std::vector<int8_t>(x.q, x.q + x.size()), x.ne0, x.ne1, x.scale};
      order.push_back(step);
    };
    ThreadPool pool(2);
    auto feats = enc.RunBranch(br, a.data(), a.size(), pool, &hook);
    ASSERT_TRUE(feats.ok()) << feats.status().ToString();
    // StepNames (what `tern-dev encode --step` checks names against) is the hook's sequence.
    EXPECT_EQ(enc.StepNames(br), order);
    int compared = 0;
    ref::RefBranch(**file, g.prefix, g.strides, g.depths, a.data(), static_cast<int64_t>(a.size()),
                   [&](const std::string& step, const ref::T8& r) {
                     auto it = got.find(step);
                     ASSERT_NE(it, got.end()) << "no hook for " << step;
                     const Snap& s = it->second;
                     ASSERT_EQ(s.ne0, r.ne0) << g.prefix << " " << step;
                     ASSERT_EQ(s.ne1, r.ne1) << g.prefix << " " << step;
                     ASSERT_EQ(s.scale, r.scale) << g.prefix << " " << step;
                     ASSERT_EQ(s.q, r.q) << g.prefix << " " << step;
                     ++compared;
                   });
    EXPECT_EQ(compared, static_cast<int>(got.size()));
    EXPECT_GT(compared, 20);
    // The features are the dequantized last stage.
    const Snap& last = got.at("conn.fc2");
    ASSERT_EQ(feats->frames, 3);
    ASSERT_EQ(feats->hidden, g.hidden);
    for (size_t i = 0; i < last.q.size(); ++i)
      ASSERT_EQ(feats->data[i], static_cast<float>(last.q[i]) * last.scale);
    // Healthy activations: the synthetic weights keep the signal alive to the end.
    int nonzero = 0;
    for (int8_t v : last.q) nonzero += v != 0;
    EXPECT_GT(nonzero, static_cast<int>(last.q.size()) / 2);
  }
}

TEST(Encoder, RunSumsTheBranches) {
  const Encoder& enc = Tiny();
  const auto a = Signal(2 * 3200 + 5, 2);
  ThreadPool pool(1);
  auto f = enc.Run(a.data(), a.size(), pool);
  auto fa = enc.RunBranch(Branch::kAcoustic, a.data(), a.size(), pool);
  auto fs = enc.RunBranch(Branch::kSemantic, a.data(), a.size(), pool);
  ASSERT_TRUE(f.ok() && fa.ok() && fs.ok());
  EXPECT_EQ(f->frames, 2);
  EXPECT_EQ(f->hidden, enc.hidden());
  ASSERT_EQ(f->data.size(), static_cast<size_t>(2 * enc.hidden()));
  for (size_t i = 0; i < f->data.size(); ++i) ASSERT_EQ(f->data[i], fa->data[i] + fs->data[i]);
}

// The Session sizes long-audio pieces by WorkspaceBytes: it must grow with the length, about
// linearly (the buffers are per sample and per frame), and never shrink.
TEST(Encoder, WorkspaceGrowsLinearlyWithTheLength) {
  const Encoder& enc = Tiny();
  size_t prev = 0;
  for (size_t n : {1, 3200, 3201, 48000, 480000, 4800000}) {
    const size_t b = enc.WorkspaceBytes(n);
    EXPECT_GE(b, prev) << n;
    prev = b;
  }
  const size_t one = enc.WorkspaceBytes(480000), ten = enc.WorkspaceBytes(4800000);
  EXPECT_GT(ten, 9 * one);
  EXPECT_LT(ten, 11 * one);
  EXPECT_GT(one, 480000u);  // at least the quantized input
}

TEST(Encoder, FrameCountsAroundTheBoundaries) {
  const Encoder& enc = Tiny();
  ThreadPool pool(2);
  for (size_t n : {size_t{1}, size_t{2}, size_t{100}, size_t{3199}, size_t{3200}, size_t{3201},
                   size_t{6399}, size_t{6400}, size_t{6401}, size_t{9599}, size_t{16000}}) {
    const int64_t want = n < 3200 ? 1 : static_cast<int64_t>(n / 3200);
    EXPECT_EQ(Encoder::FramesFor(n), want) << n;
    const auto a = Signal(n, 3);
    auto f = enc.Run(a.data(), n, pool);
    ASSERT_TRUE(f.ok()) << n << ": " << f.status().ToString();
    EXPECT_EQ(f->frames, want) << n;
    EXPECT_EQ(f->data.size(), static_cast<size_t>(want * enc.hidden()));
    for (float v : f->data) ASSERT_TRUE(std::isfinite(v)) << n;
  }
  EXPECT_EQ(Encoder::FramesFor(0), 0);
  EXPECT_EQ(Encoder::FramesFor(24000 * 60), 450);
}

TEST(Encoder, EmptyInputIsAnError) {
  ThreadPool pool(1);
  float x = 0;
  auto f = Tiny().Run(&x, 0, pool);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), ErrorCode::kInvalidArgument);
}

TEST(Encoder, SilenceGivesFiniteFeatures) {
  std::vector<float> z(8000, 0.0f);
  ThreadPool pool(2);
  auto f = Tiny().Run(z.data(), z.size(), pool);
  ASSERT_TRUE(f.ok());
  for (float v : f->data) ASSERT_TRUE(std::isfinite(v));
}

TEST(Encoder, FeaturesDoNotDependOnTheThreadCount) {
  const auto a = Signal(5 * 3200 + 1234, 4);
  std::vector<float> first;
  for (int nth : {1, 2, 4}) {
    ThreadPool pool(nth);
    auto f = Tiny().Run(a.data(), a.size(), pool);
    ASSERT_TRUE(f.ok());
    if (first.empty())
      first = f->data;
    else
      EXPECT_EQ(std::memcmp(first.data(), f->data.data(), first.size() * 4), 0) << nth;
  }
}

// A Session keeps one Scratch across calls: later runs, longer or shorter, reuse its buffers
// (their stale contents must not leak into the result), and a run needing more than the
// keep limit releases them afterwards.
TEST(Encoder, ScratchKeptBetweenRunsGivesTheSameFeatures) {
  const Encoder& enc = Tiny();
  const auto a = Signal(9 * 3200 + 77, 5), b = Signal(3 * 3200 + 5, 6);
  for (int nth : {1, 2, 4}) {
    ThreadPool pool(nth);
    auto fa = enc.Run(a.data(), a.size(), pool);
    auto fb = enc.Run(b.data(), b.size(), pool);
    ASSERT_TRUE(fa.ok() && fb.ok());
    Encoder::Scratch scratch;
    size_t held = 0;
    for (int round = 0; round < 2; ++round) {
      for (const auto* x : {&a, &b}) {
        auto f = enc.Run(x->data(), x->size(), pool, nullptr, &scratch);
        ASSERT_TRUE(f.ok());
        const auto& want = x == &a ? fa->data : fb->data;
        ASSERT_EQ(f->data.size(), want.size());
        EXPECT_EQ(std::memcmp(f->data.data(), want.data(), want.size() * 4), 0)
            << nth << " threads, round " << round << (x == &a ? ", long" : ", short");
      }
      if (round == 0) held = scratch.bytes();
      EXPECT_GT(scratch.bytes(), 0u);
      EXPECT_EQ(scratch.bytes(), held) << "the buffers of the first long run are reused";
    }
    Encoder::Scratch small(held - 1);
    ASSERT_TRUE(enc.Run(a.data(), a.size(), pool, nullptr, &small).ok());
    EXPECT_EQ(small.bytes(), 0u) << "over the keep limit: released";
    ASSERT_TRUE(enc.Run(b.data(), b.size(), pool, nullptr, &small).ok());
    EXPECT_GT(small.bytes(), 0u);
    EXPECT_LE(small.bytes(), held - 1);
  }
}

// The Scratch also keeps the branches' thread pools: one Scratch used from callers' pools of
// different sizes (so its branch pools are remade) gives each the features of a fresh run.
TEST(Encoder, ScratchPoolsFollowTheCallersPool) {
  const Encoder& enc = Tiny();
  const auto a = Signal(6 * 3200 + 11, 7);
  ThreadPool p1(1);
  auto want = enc.Run(a.data(), a.size(), p1);
  ASSERT_TRUE(want.ok());
  Encoder::Scratch scratch;
  for (int nth : {4, 3, 4, 2, 5}) {
    ThreadPool pool(nth);
    auto f = enc.Run(a.data(), a.size(), pool, nullptr, &scratch);
    ASSERT_TRUE(f.ok());
    ASSERT_EQ(f->data.size(), want->data.size());
    EXPECT_EQ(std::memcmp(f->data.data(), want->data.data(), want->data.size() * 4), 0) << nth;
  }
}

TEST(Encoder, ConcurrentRunsShareOneEncoder) {
  const auto a = Signal(4 * 3200, 5);
  ThreadPool p0(1);
  auto want = Tiny().Run(a.data(), a.size(), p0);
  ASSERT_TRUE(want.ok());
  std::vector<std::vector<float>> got(3);
  std::vector<std::thread> ts;
  for (int i = 0; i < 3; ++i)
    ts.emplace_back([&, i] {
      ThreadPool pool(1 + i % 2);
      auto f = Tiny().Run(a.data(), a.size(), pool);
      if (f.ok()) got[i] = f->data;
    });
  for (auto& t : ts) t.join();
  for (auto& g : got) EXPECT_EQ(g, want->data);
}

// ---- Load errors: copies of the tiny file with one thing changed -------------------------------

struct Edit {
  std::string drop;      // tensor to leave out
  std::string retype;    // tensor written as F32 (values reinterpreted, size adjusted)
  std::string reshape;   // tensor whose ne[0] and ne[1] are swapped
  bool drop_kv = false;  // leave out the vae.* keys
  std::string poison;    // I8_S tensor whose element 5 becomes -128
};

std::string WriteEdited(const Edit& e, const std::string& tag) {
  auto src = gguf::File::Open(TinyPath());
  if (!src.ok()) std::abort();
  gguf::Writer w;
  for (const auto& [k, v] : (*src)->kv())
    if (!(e.drop_kv && k.rfind("vae.", 0) == 0)) w.SetValue(k, v);
  for (const gguf::TensorInfo& t : (*src)->tensors()) {
    if (t.name == e.drop) continue;
    std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
    std::vector<uint8_t> bytes(t.data, t.data + t.n_bytes);
    DType type = t.type;
    if (t.name == e.retype) {
      type = DType::kF32;
      bytes.assign(static_cast<size_t>(t.n_elements) * 4, 0);
    }
    if (t.name == e.reshape && ne.size() >= 2) std::swap(ne[0], ne[1]);
    if (t.name == e.poison) bytes[5] = 0x80;
    if (!w.AddTensor(t.name, type, ne, std::move(bytes)).ok()) std::abort();
  }
  const std::string path = TempFile(tag);
  if (!w.WriteTo(path).ok()) std::abort();
  return path;
}

TEST(Encoder, LoadErrorsNameTheTensor) {
  {
    const std::string name = "semantic.stages.2.0.ffn.linear1.bias";
    auto r = Encoder::Load(WriteEdited(Edit{name, "", "", false, ""}, "missing"));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
  }
  {
    const std::string name = "acoustic.stages.1.0.ffn.linear2.weight";
    auto r = Encoder::Load(WriteEdited(Edit{"", name, "", false, ""}, "retyped"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("expected I8_S, got F32"), std::string::npos)
        << r.status().message();
  }
  {
    const std::string name = "acoustic_connector.fc1.weight";
    auto r = Encoder::Load(WriteEdited(Edit{"", "", name, false, ""}, "reshaped"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
  }
  {
    const std::string name = "semantic.stages.4.0.mixer.conv.conv.conv.weight";
    auto r = Encoder::Load(WriteEdited(Edit{"", "", name, false, ""}, "reshaped2"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("expected shape"), std::string::npos);
  }
  {
    const std::string name = "semantic.stages.6.1.ffn.linear2.weight";
    Edit e;
    e.poison = name;
    auto r = Encoder::Load(WriteEdited(e, "poisoned"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(name), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("element 5 is -128"), std::string::npos)
        << r.status().message();
  }
  {
    // Both branches bad: they load side by side, and the acoustic branch's error is the one
    // reported whichever thread fails first.
    const std::string acoustic = "acoustic.stages.3.0.ffn.linear1.weight";
    const std::string semantic = "semantic.stages.0.0.ffn.linear1.bias";
    auto r = Encoder::Load(WriteEdited(Edit{semantic, acoustic, "", false, ""}, "both"));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(acoustic), std::string::npos) << r.status().message();
  }
  {
    auto r = Encoder::Load(testing::TempDir() + "/does_not_exist.gguf");
    EXPECT_FALSE(r.ok());
  }
}

TEST(Encoder, GeometryWithoutKvKeysFallsBackToTensorShapes) {
  auto r = Encoder::Load(WriteEdited(Edit{"", "", "", true, ""}, "nokv"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const VaeGeometry& g = (*r)->geometry(Branch::kSemantic);
  EXPECT_EQ(g.strides, (std::vector<int64_t>{1, 2, 2, 4, 5, 5, 8}));
  EXPECT_EQ(g.depths, (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 2}));
  EXPECT_EQ(g.channels, (std::vector<int64_t>{8, 16, 32, 64, 128, 256, 512}));
  EXPECT_EQ(g.kernels, (std::vector<int64_t>{8, 4, 4, 8, 16, 16, 16}));
  EXPECT_EQ(g.latent, 128);
  const auto a = Signal(3200 * 2, 6);
  ThreadPool pool(1);
  auto f1 = (*r)->Run(a.data(), a.size(), pool);
  auto f2 = Tiny().Run(a.data(), a.size(), pool);
  ASSERT_TRUE(f1.ok() && f2.ok());
  EXPECT_EQ(f1->data, f2->data);
}

}  // namespace
}  // namespace tern::vibeasr
