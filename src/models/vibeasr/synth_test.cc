// The tiny synthetic package, read back through gguf::File: the names, types, shapes and
// stored sizes of spec 1.3/1.4 (the expected table is rebuilt here from the spec, not taken
// from synth.cc), the KV keys, the vocabulary, and determinism by seed.
#include "models/vibeasr/synth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/test_util.h"
#include "gguf/gguf.h"
#include "tensor/quant_ref.h"

namespace tern::vibeasr {
namespace {

namespace fs = std::filesystem;
using testutil::ReadFile;

struct Expected {
  std::string name;
  DType type;
  std::vector<int64_t> ne;
};

std::string VocabDir() {
  if (const char* env = std::getenv("TERN_QWEN2_TOKENIZER_DIR")) return env;
  return TERN_QWEN2_TOKENIZER_DIR;
}

// Spec 1.3 for widths 8..512, depths 1,1,1,1,1,1,2, connector 256.
std::vector<Expected> ExpectedEncoder() {
  const int64_t widths[7] = {8, 16, 32, 64, 128, 256, 512};
  const int depths[7] = {1, 1, 1, 1, 1, 1, 2};
  const int64_t stored_k[7] = {8, 4, 4, 8, 16, 16, 16};  // 7->8, 4, 4, 8, 10->16, 10->16, 16
  std::vector<Expected> e;
  for (const std::string p : {"acoustic", "semantic"}) {
    const int64_t d = p == "acoustic" ? 64 : 128;
    int64_t in = 1;
    for (int s = 0; s < 7; ++s) {
      const int64_t c = widths[s];
      const std::string ds = p + ".downsample_layers." + std::to_string(s) + ".0.conv.conv.";
      e.push_back({ds + "weight", DType::kI8_S, {stored_k[s], in, c}});
      e.push_back({ds + "bias", DType::kF32, {c, 1}});
      for (int b = 0; b < depths[s]; ++b) {
        const std::string bp = p + ".stages." + std::to_string(s) + "." + std::to_string(b) + ".";
        e.push_back({bp + "norm.weight", DType::kF32, {c}});
        e.push_back({bp + "mixer.conv.conv.conv.weight", DType::kI8_S, {8, 1, c}});
        e.push_back({bp + "mixer.conv.conv.conv.bias", DType::kF32, {c, 1}});
        e.push_back({bp + "gamma", DType::kF32, {c}});
        e.push_back({bp + "ffn_norm.weight", DType::kF32, {c}});
        e.push_back({bp + "ffn.linear1.weight", DType::kI8_S, {c, 4 * c}});
        e.push_back({bp + "ffn.linear1.bias", DType::kF32, {4 * c, 1}});
        e.push_back({bp + "ffn.linear2.weight", DType::kI8_S, {4 * c, c}});
        e.push_back({bp + "ffn.linear2.bias", DType::kF32, {c, 1}});
        e.push_back({bp + "ffn_gamma", DType::kF32, {c}});
      }
      in = c;
    }
    e.push_back({p + ".head.conv.conv.weight", DType::kI8_S, {8, 512, d}});
    e.push_back({p + ".head.conv.conv.bias", DType::kF32, {d, 1}});
    e.push_back({p + "_connector.fc1.weight", DType::kI8_S, {d, 256}});
    e.push_back({p + "_connector.fc1.bias", DType::kF32, {256, 1}});
    e.push_back({p + "_connector.norm.weight", DType::kF32, {256}});
    e.push_back({p + "_connector.fc2.weight", DType::kI8_S, {256, 256}});
    e.push_back({p + "_connector.fc2.bias", DType::kF32, {256, 1}});
  }
  return e;
}

// Spec 1.4 for hidden 256, 2 layers, 8 heads of 32, 2 KV heads, FFN 384, vocab 151936.
std::vector<Expected> ExpectedDecoder() {
  std::vector<Expected> e = {
      {"token_embd.weight", DType::kQ6_K, {256, 151936}},
      {"output_norm.weight", DType::kF32, {256}},
      {"output.weight", DType::kF16, {256, 151936}},
  };
  for (int l = 0; l < 2; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    e.push_back({b + "attn_norm.weight", DType::kF32, {256}});
    e.push_back({b + "ffn_norm.weight", DType::kF32, {256}});
    e.push_back({b + "attn_q.weight", DType::kI2_S, {256, 256}});
    e.push_back({b + "attn_k.weight", DType::kI2_S, {256, 64}});
    e.push_back({b + "attn_v.weight", DType::kI2_S, {256, 64}});
    e.push_back({b + "attn_output.weight", DType::kI2_S, {256, 256}});
    e.push_back({b + "ffn_gate.weight", DType::kI2_S, {256, 384}});
    e.push_back({b + "ffn_up.weight", DType::kI2_S, {256, 384}});
    e.push_back({b + "ffn_down.weight", DType::kI2_S, {384, 256}});
    e.push_back({b + "attn_q.bias", DType::kF32, {256}});
    e.push_back({b + "attn_k.bias", DType::kF32, {64}});
    e.push_back({b + "attn_v.bias", DType::kF32, {64}});
  }
  return e;
}

// Each ctest entry is its own process, so each test writes only the file it reads.
class SynthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { dir_ = new std::string(MakeDir("seed7a")); }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }
  static SynthOptions Options(uint64_t seed, const std::string& out_dir) {
    SynthOptions o;
    o.seed = seed;
    o.vocab_dir = VocabDir();
    o.out_dir = out_dir;
    return o;
  }
  static bool HaveVocab() { return fs::exists(VocabDir() + "/vocab.json"); }
  static std::string MakeDir(const std::string& tag) {
    const fs::path p =
        fs::path(::testing::TempDir()) / ("tern_synth_" + tag + "_" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p.string();
  }
  // Writes (once per process) and opens the seed-7 encoder or decoder file.
  static std::unique_ptr<gguf::File> Open(const char* file) {
    const std::string path = *dir_ + "/" + file;
    if (!fs::exists(path)) {
      const SynthOptions o = Options(7, *dir_);
      const Status st = std::string(file) == kSynthVaeFileName ? WriteSyntheticEncoder(o, path)
                                                               : WriteSyntheticDecoder(o, path);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    auto f = gguf::File::Open(path);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    return f.ok() ? std::move(f).value() : nullptr;
  }
  static void CheckTensors(const gguf::File& f, const std::vector<Expected>& want, uint32_t i8s_id,
                           uint32_t i2s_id) {
    EXPECT_EQ(f.tensors().size(), want.size());
    EXPECT_EQ(f.alignment(), 32u);
    EXPECT_EQ(f.Find("general.alignment"), nullptr);
    for (const Expected& e : want) {
      const gguf::TensorInfo* t = f.FindTensor(e.name);
      ASSERT_NE(t, nullptr) << e.name;
      EXPECT_EQ(t->type, e.type) << e.name;
      ASSERT_EQ(t->n_dims, static_cast<int>(e.ne.size())) << e.name;
      int64_t n = 1;
      for (size_t i = 0; i < e.ne.size(); ++i) {
        EXPECT_EQ(t->ne[i], e.ne[i]) << e.name << " dim " << i;
        n *= e.ne[i];
      }
      EXPECT_EQ(t->n_bytes, static_cast<uint64_t>(StoredBytes(e.type, n))) << e.name;
      EXPECT_EQ(t->offset % 32, 0u) << e.name;
      const uint32_t want_id = e.type == DType::kI8_S   ? i8s_id
                               : e.type == DType::kI2_S ? i2s_id
                               : e.type == DType::kQ6_K ? 14u
                               : e.type == DType::kF16  ? 1u
                                                        : 0u;
      EXPECT_EQ(t->type_id, want_id) << e.name;
      if (e.type == DType::kI8_S || e.type == DType::kI2_S) {
        const float s =
            e.type == DType::kI8_S ? ReadI8SScale(t->data, n) : ReadI2SScale(t->data, n);
        EXPECT_TRUE(std::isfinite(s) && s > 0) << e.name << " scale " << s;
        const uint8_t* pad = t->data + InBandScaleOffset(e.type, n) + 4;
        for (int i = 0; i < 28; ++i) ASSERT_EQ(pad[i], 0) << e.name << " pad byte " << i;
      }
    }
  }
  static std::string* dir_;
};
std::string* SynthTest::dir_ = nullptr;

TEST_F(SynthTest, EncoderFileHasPublishedNamesTypesShapesAndKeys) {
  auto f = Open(kSynthVaeFileName);
  ASSERT_NE(f, nullptr);
  CheckTensors(*f, ExpectedEncoder(), gguf::kPublishedI8S, gguf::kPublishedI2S);
  EXPECT_EQ(*f->GetString("general.architecture"), "vibeasr-vae");
  for (const std::string p : {"acoustic", "semantic"}) {
    EXPECT_EQ(*f->GetU64("vae." + p + ".output_dim"), p == "acoustic" ? 64u : 128u);
    EXPECT_EQ(*f->GetIntArray("vae." + p + ".stage_depths"),
              (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 2}));
    EXPECT_EQ(*f->GetIntArray("vae." + p + ".downsample_strides"),
              (std::vector<int64_t>{8, 5, 5, 4, 2, 2}));
  }
  EXPECT_FLOAT_EQ(static_cast<float>(*f->GetF64("vae.rms_norm_eps")), 1e-6f);
  EXPECT_EQ(*f->GetU64("vae.kernel_size"), 7u);
  EXPECT_TRUE(f->GetF64("vae.layer_scale_init_value").ok());
}

TEST_F(SynthTest, EncoderKernelsZeroPaddedAtTheFrontAndMagnitudesSane) {
  auto f = Open(kSynthVaeFileName);
  ASSERT_NE(f, nullptr);
  int convs = 0;
  for (const gguf::TensorInfo& t : f->tensors()) {
    const std::string name = t.name;
    const bool conv = name.find(".conv.weight") != std::string::npos;
    std::vector<float> v(static_cast<size_t>(t.n_elements));
    DequantizeRef(t.type, t.data, t.n_elements, v.data());
    if (conv) {
      // Raw kernel = 7 for stem/depthwise/head, 2*stride for the downsampling convs.
      const int64_t kp = t.ne[0];
      int raw = 7;
      if (name.find("downsample_layers.") != std::string::npos) {
        const int s = name[name.find("downsample_layers.") + 18] - '0';
        const int strides[7] = {1, 2, 2, 4, 5, 5, 8};
        raw = s == 0 ? 7 : 2 * strides[s];
      }
      ASSERT_EQ(kp, PaddedKernelSize(raw)) << name;
      bool any_live = false;
      for (int64_t i = 0; i < t.n_elements; ++i) {
        if (i % kp < kp - raw) {
          ASSERT_EQ(v[i], 0.0f) << name << " padded tap " << i % kp;
        } else {
          any_live |= v[i] != 0.0f;
        }
      }
      EXPECT_TRUE(any_live) << name;
      ++convs;
    }
    const bool gamma = name.size() > 5 && name.compare(name.size() - 5, 5, "gamma") == 0;
    const bool norm = name.find("norm.weight") != std::string::npos;
    for (float x : v) {
      ASSERT_TRUE(std::isfinite(x)) << name;
      if (gamma) {
        ASSERT_TRUE(x >= 0.1f && x < 0.5f) << name << " " << x;
      }
      if (norm) {
        ASSERT_TRUE(x >= 0.8f && x < 1.2f) << name << " " << x;
      }
    }
  }
  EXPECT_EQ(convs, 2 * (7 + 8 + 1));  // downsampling, depthwise mixers, head
}

TEST_F(SynthTest, DecoderFileHasPublishedTensorsKeysAndVocabulary) {
  if (!HaveVocab()) GTEST_SKIP() << "no Qwen2 tokenizer at " << VocabDir();
  auto f = Open(kSynthLmFileName);
  ASSERT_NE(f, nullptr);
  CheckTensors(*f, ExpectedDecoder(), gguf::kPublishedI8S, gguf::kPublishedI2S);
  EXPECT_EQ(*f->GetString("general.architecture"), "qwen2");
  EXPECT_EQ(*f->GetU64("qwen2.vocab_size"), 151936u);
  EXPECT_EQ(*f->GetU64("qwen2.embedding_length"), 256u);
  EXPECT_EQ(*f->GetU64("qwen2.block_count"), 2u);
  EXPECT_EQ(*f->GetU64("qwen2.feed_forward_length"), 384u);
  EXPECT_EQ(*f->GetU64("qwen2.attention.head_count"), 8u);
  EXPECT_EQ(*f->GetU64("qwen2.attention.head_count_kv"), 2u);
  EXPECT_EQ(*f->GetU64("qwen2.rope.dimension_count"), 32u);
  EXPECT_EQ(*f->GetU64("qwen2.context_length"), 65536u);
  EXPECT_FLOAT_EQ(static_cast<float>(*f->GetF64("qwen2.attention.layer_norm_rms_epsilon")), 1e-6f);
  EXPECT_EQ(*f->GetF64("qwen2.rope.freq_base"), 1e6);
  EXPECT_EQ(*f->GetString("tokenizer.ggml.model"), "gpt2");
  EXPECT_EQ(f->Find("tokenizer.ggml.pre"), nullptr);  // absent in the published file
  EXPECT_EQ(*f->GetU64("tokenizer.ggml.eos_token_id"), 151643u);

  const std::vector<std::string> tokens = *f->GetStringArray("tokenizer.ggml.tokens");
  const std::vector<int64_t> types = *f->GetIntArray("tokenizer.ggml.token_type");
  const std::vector<double> scores = *f->GetFloatArray("tokenizer.ggml.scores");
  ASSERT_EQ(tokens.size(), 151936u);
  ASSERT_EQ(types.size(), 151936u);
  ASSERT_EQ(scores.size(), 151936u);
  EXPECT_EQ(tokens[0], "!");
  EXPECT_EQ(tokens[198], "\xC4\x8A");  // "Ċ" = byte-level "\n"
  EXPECT_EQ(tokens[77091], "assistant");
  EXPECT_EQ(tokens[151643], "<|endoftext|>");
  EXPECT_EQ(tokens[151644], "<|im_start|>");
  EXPECT_EQ(tokens[151645], "<|im_end|>");
  EXPECT_EQ(tokens[151646], "<|object_ref_start|>");  // <|speech_start|>
  EXPECT_EQ(tokens[151647], "<|object_ref_end|>");    // <|speech_end|>
  EXPECT_EQ(tokens[151648], "<|box_start|>");         // <|speech_pad|>
  EXPECT_EQ(tokens[151664], "<|file_sep|>");
  EXPECT_EQ(tokens[151665], "<dummy00001>");
  EXPECT_EQ(tokens[151935], "<dummy00271>");
  EXPECT_EQ(types[0], 1);
  EXPECT_EQ(types[151642], 1);
  for (size_t i = 151643; i < tokens.size(); ++i) {
    ASSERT_EQ(types[i], 3) << i;
    ASSERT_EQ(scores[i], -1000.0) << i;
  }
  const std::vector<std::string> merges = *f->GetStringArray("tokenizer.ggml.merges");
  ASSERT_EQ(merges.size(), 151387u);
  EXPECT_EQ(merges[0], "\xC4\xA0 \xC4\xA0");  // "Ġ Ġ"
}

TEST_F(SynthTest, DecoderWeightsAreTernaryWithAThirdZerosAndVariedLogits) {
  if (!HaveVocab()) GTEST_SKIP() << "no Qwen2 tokenizer at " << VocabDir();
  auto f = Open(kSynthLmFileName);
  ASSERT_NE(f, nullptr);
  for (const gguf::TensorInfo& t : f->tensors()) {
    if (t.type != DType::kI2_S) continue;
    std::vector<uint8_t> codes(static_cast<size_t>(t.n_elements));
    UnpackI2SCodes(t.data, t.n_elements, codes.data());
    int64_t count[4] = {0, 0, 0, 0};
    for (uint8_t c : codes) ++count[c];
    EXPECT_EQ(count[3], 0) << t.name;
    const double zeros = static_cast<double>(count[1]) / t.n_elements;
    EXPECT_GT(zeros, 0.25) << t.name;
    EXPECT_LT(zeros, 0.37) << t.name;
  }
  // Logits of a few embedded tokens through the head alone: spread of a few units.
  const gguf::TensorInfo* emb = f->FindTensor("token_embd.weight");
  const gguf::TensorInfo* head = f->FindTensor("output.weight");
  ASSERT_TRUE(emb && head);
  std::vector<float> x(256), w(256 * 151936);
  DequantizeRef(DType::kF16, head->data, 256 * 151936, w.data());
  for (int64_t id : {198, 77091}) {
    DequantizeRef(DType::kQ6_K, emb->data + id * RowBytes(DType::kQ6_K, 256), 256, x.data());
    double ss = 0;
    for (float v : x) ss += v * v;
    const double rms = std::sqrt(ss / 256);
    EXPECT_GT(rms, 0.2);
    EXPECT_LT(rms, 0.4);
    double sum = 0, sum2 = 0;
    for (int64_t r = 0; r < 151936; ++r) {
      double dot = 0;
      for (int k = 0; k < 256; ++k) dot += w[r * 256 + k] * (x[k] / rms);
      sum += dot;
      sum2 += dot * dot;
    }
    const double sd = std::sqrt(sum2 / 151936 - (sum / 151936) * (sum / 151936));
    EXPECT_GT(sd, 1.5) << id;
    EXPECT_LT(sd, 3.0) << id;
  }
}

TEST_F(SynthTest, SameSeedSameBytesOtherSeedOtherBytes) {
  if (!HaveVocab()) GTEST_SKIP() << "no Qwen2 tokenizer at " << VocabDir();
  const std::string a = MakeDir("seed7"), again = MakeDir("seed7again"), other = MakeDir("seed8");
  ASSERT_TRUE(WriteSyntheticPackage(Options(7, a)).ok());
  ASSERT_TRUE(WriteSyntheticPackage(Options(7, again)).ok());
  ASSERT_TRUE(WriteSyntheticPackage(Options(8, other)).ok());
  for (const char* file : {kSynthVaeFileName, kSynthLmFileName}) {
    const std::string x = ReadFile(a + "/" + file);
    ASSERT_GT(x.size(), 1000000u);
    EXPECT_TRUE(x == ReadFile(again + "/" + file)) << file << " differs for the same seed";
    const std::string y = ReadFile(other + "/" + file);
    EXPECT_EQ(x.size(), y.size()) << file;
    EXPECT_FALSE(x == y) << file << " is the same for seeds 7 and 8";
  }
  for (const std::string& d : {a, again, other}) fs::remove_all(d);
}

TEST_F(SynthTest, RemappedTypeIds) {
  const std::string dir = MakeDir("remap");
  SynthOptions o = Options(7, dir);
  o.type_ids = gguf::TypeIds::kRemapped;
  ASSERT_TRUE(WriteSyntheticEncoder(o, dir + "/vae.gguf").ok());
  auto f = gguf::File::Open(dir + "/vae.gguf");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  CheckTensors(**f, ExpectedEncoder(), gguf::kRemappedI8S, gguf::kRemappedI2S);
  fs::remove_all(dir);
}

TEST(SynthOptionsTest, ErrorsNameTheProblem) {
  SynthOptions o;
  o.out_dir = "/nonexistent/tern_synth";
  Status st = o.Validate();
  EXPECT_EQ(st.code(), ErrorCode::kNotFound);
  EXPECT_NE(st.message().find("/nonexistent/tern_synth"), std::string::npos);

  auto v = LoadSynthVocab("/nonexistent/vocab_dir", 151936);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("/nonexistent/vocab_dir/vocab.json"), std::string::npos);

  EXPECT_FALSE(SynthGeometryFromName("huge").ok());
  EXPECT_EQ(*SynthGeometryFromName("full"), SynthGeometry::kFull);
}

TEST(SynthOptionsTest, VocabularyThatDoesNotFitIsRejected) {
  if (!fs::exists(VocabDir() + "/vocab.json")) GTEST_SKIP() << "no Qwen2 tokenizer";
  auto v = LoadSynthVocab(VocabDir(), 151000);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), ErrorCode::kInvalidArgument);
}

TEST(SynthShapeTest, KernelPaddingRuleAndFullGeometry) {
  const int raw[] = {1, 3, 4, 5, 7, 8, 9, 10, 15, 16, 17};
  const int want[] = {4, 4, 4, 8, 8, 8, 16, 16, 16, 16, 17};
  for (size_t i = 0; i < std::size(raw); ++i)
    EXPECT_EQ(PaddedKernelSize(raw[i]), want[i]) << raw[i];
  const SynthShape s = ShapeFor(SynthGeometry::kFull);
  EXPECT_EQ(s.channels, (std::vector<int64_t>{32, 64, 128, 256, 512, 1024, 2048}));
  EXPECT_EQ(s.depths, (std::vector<int>{3, 3, 3, 3, 3, 3, 8}));
  EXPECT_EQ(s.hidden, 1536);
  EXPECT_EQ(s.layers, 28);
  EXPECT_EQ(s.head_dim(), 128);
  EXPECT_EQ(s.ffn, 8960);
  EXPECT_EQ(s.vocab, 151936);
}

}  // namespace
}  // namespace tern::vibeasr
