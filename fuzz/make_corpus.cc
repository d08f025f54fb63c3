// Writes the seed corpus for gguf_fuzz: small valid GGUF files made with the Writer, one
// per tensor type and id numbering, alignments 32 and 64, every KV type, nested arrays,
// a v2 header, a file without tensors and the tern.* declarations of a model. Usage: make_corpus OUTPUT_DIR
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "audio/voice_features.h"
#include "base/mapped_file.h"
#include "gguf/writer.h"

namespace {

using tern::DType;
using tern::gguf::TypeIds;
using tern::gguf::Value;
using tern::gguf::ValueType;
using tern::gguf::Writer;

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed * 31 + i);
  return v;
}

// Smallest legal shape of each type (2 rows where the block allows it).
std::vector<int64_t> SmallShape(DType t) {
  switch (t) {
    case DType::kQ8_0:
      return {32, 2};
    case DType::kQ6_K:
      return {256};
    case DType::kI2_S:
      return {128, 2};
    default:
      return {4, 2};
  }
}

void AddKvs(Writer* w) {
  w->SetString("general.architecture", "qwen2");
  w->SetU32("qwen2.block_count", 1);
  w->SetF32("qwen2.rope.freq_base", 1e6f);
  w->SetBool("tokenizer.ggml.add_bos_token", true);
  w->SetStringArray("tokenizer.ggml.tokens", {"a", "\xc4\xa0the", "<|endoftext|>"});
  w->SetI32Array("vae.acoustic.stage_depths", {3, 3, 8});
  w->SetF32Array("tokenizer.ggml.scores", {0.0f, -1.0f, -1000.0f});
  w->SetValue(
      "test.nested",
      Value::Array(ValueType::kArray, {Value::Array(ValueType::kU8, {Value::U8(1)}),
                                       Value::Array(ValueType::kString, {Value::String("x")})}));
  w->SetValue("test.i64", Value::I64(-5));
  w->SetValue("test.f64", Value::F64(0.5));
  w->SetValue("test.u16", Value::U16(7));
  w->SetValue("test.i8", Value::I8(-1));
}

bool Save(const std::string& dir, const std::string& name, const std::string& image) {
  tern::Status s = tern::WriteStringToFile(dir + "/" + name, image);
  if (!s.ok()) std::fprintf(stderr, "make_corpus: %s\n", s.ToString().c_str());
  return s.ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_corpus OUTPUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  int n_files = 0;
  bool ok = true;
  for (int t = 0; t < tern::kNumDTypes; ++t) {
    const DType type = static_cast<DType>(t);
    for (TypeIds ids : {TypeIds::kPublished, TypeIds::kRemapped}) {
      for (uint32_t align : {32u, 64u}) {
        Writer w(ids, align);
        if (align == 32) AddKvs(&w);
        const auto ne = SmallShape(type);
        int64_t elems = 1;
        for (int64_t d : ne) elems *= d;
        const size_t bytes = static_cast<size_t>(tern::StoredBytes(type, elems));
        ok &= w.AddTensor("t.weight", type, ne, Bytes(bytes, static_cast<uint8_t>(t))).ok();
        ok &= w.AddTensor("t.bias", DType::kF32, {ne[0] > 4 ? 4 : ne[0]},
                          Bytes(static_cast<size_t>(4 * (ne[0] > 4 ? 4 : ne[0])), 9))
                  .ok();
        const std::string name = std::string(tern::DTypeName(type)) +
                                 (ids == TypeIds::kPublished ? "-pub" : "-remap") + "-a" +
                                 std::to_string(align) + ".gguf";
        ok &= Save(dir, name, w.Serialize());
        ++n_files;
      }
    }
  }
  // No tensors, KVs only.
  {
    Writer w;
    AddKvs(&w);
    ok &= Save(dir, "kv-only.gguf", w.Serialize());
    ++n_files;
  }
  // A v2 header (same layout) with an I8_S and an I2_S tensor, like the VibeASR files.
  {
    Writer w;
    w.SetString("general.architecture", "vibeasr-vae");
    ok &= w.AddTensor("enc.conv.weight", DType::kI8_S, {8, 1, 2}, Bytes(16 + 32, 3)).ok();
    ok &= w.AddTensor("blk.0.attn_q.weight", DType::kI2_S, {128, 1}, Bytes(32 + 32, 4)).ok();
    std::string image = w.Serialize();
    const uint32_t v2 = 2;
    std::memcpy(image.data() + 4, &v2, 4);
    ok &= Save(dir, "v2-mixed.gguf", image);
    ++n_files;
  }
  // The tern.* declarations of a model (engine/trained.h, engine/speakers.h), as the bundled
  // model's LM file has them, and a projection of one direction.
  for (int dims : {8, 1}) {
    Writer w;
    w.SetString("general.architecture", "qwen2");
    w.SetBool("tern.trained.context", true);
    w.SetBool("tern.trained.json_format", true);
    w.SetF32("tern.trained.max_audio_seconds", 39.994f);
    w.SetF32("tern.trained.chunk_seconds", 6.0f);
    w.SetF32("tern.trained.snap_seconds", 2.5f);
    w.SetU32("tern.trained.beam", 4);
    w.SetBool("tern.trained.utterance_pieces", true);
    const int n = tern::audio::kVoiceFeatureCount;
    std::vector<float> mean(n), projection(static_cast<size_t>(n) * dims);
    for (size_t i = 0; i < mean.size(); ++i) mean[i] = 0.5f * static_cast<float>(i);
    for (size_t i = 0; i < projection.size(); ++i)
      projection[i] = 0.01f * static_cast<float>(i % 7);
    w.SetF32Array("tern.voices.mean", mean);
    w.SetF32Array("tern.voices.projection", projection);
    w.SetF32("tern.voices.link_distance", 0.25f);
    ok &= Save(dir, "declarations-d" + std::to_string(dims) + ".gguf", w.Serialize());
    ++n_files;
  }
  // Empty file header only.
  {
    Writer w;
    ok &= Save(dir, "empty.gguf", w.Serialize());
    ++n_files;
  }
  if (!ok) return 1;
  std::printf("make_corpus: wrote %d seed files to %s\n", n_files, dir.c_str());
  return 0;
}
