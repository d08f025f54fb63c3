// Synthetic VibeASR packages: seeded random weights in the PUBLISHED file format, so every
// loader, op and end-to-end path can be tested without the real 1.7 GB checkpoint.
//
// Two files are written into `out_dir` (spec 1.3 / 1.4 in docs/spec.md):
//   vibeasr-vae-encoder-i8_s.gguf    arch "vibeasr-vae": both encoders + connectors, I8_S
//                                    weights (type id 37), F32 biases {N,1}, norms, gammas;
//                                    conv kernels zero-padded at the front to 4/8/16 taps.
//   vibeasr-lm-i2_s-embed-q6_k.gguf  arch "qwen2": I2_S projections (36), Q6_K token_embd,
//                                    F16 output.weight, F32 norms and q/k/v biases, and the
//                                    Qwen2 BPE vocabulary (tokenizer.ggml.*, model "gpt2",
//                                    no tokenizer.ggml.pre) padded with <dummyNNNNN>.
// GGUF alignment is 32; no general.alignment key (as published).
//
// Geometries:
//   full  the real one: encoder widths 32..2048, depths 3,3,3,3,3,3,8, D 64/128,
//         connector 1536; decoder 1536 x 28 layers, 12 heads / 2 KV, FFN 8960, vocab 151936.
//   tiny  same strides and kernels, widths 8..512, depths 1,1,1,1,1,1,2, D 64/128,
//         connector/decoder 256 x 2 layers, 8 heads of 32 / 2 KV, FFN 384, vocab 151936
//         (the real one, so prompt token ids are the same as with the real model).
//
// Weights: every tensor draws from its own generator seeded by (seed, tensor name), so a
// seed gives byte-identical files whatever the order or threading. Magnitudes keep
// activations healthy through int8 requantization: weights ~ N(0, 1/fan_in) (2/fan_in after
// a ReLU) before quantization, layer scales (gammas) U(0.1, 0.5), norm weights U(0.8, 1.2),
// biases N(0, 0.01^2) (encoder) / N(0, 0.05^2) (q/k/v), token embeddings N(0, 0.3^2),
// output head N(0, 4/hidden) so logits vary by a few units. Normal draws are Irwin-Hall
// sums of four 16-bit uniforms (bounded at +-3.5 sigma; fast, close enough to Gaussian).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"

namespace tern::vibeasr {

inline constexpr char kSynthVaeFileName[] = "vibeasr-vae-encoder-i8_s.gguf";
inline constexpr char kSynthLmFileName[] = "vibeasr-lm-i2_s-embed-q6_k.gguf";

enum class SynthGeometry { kTiny, kFull };

// The shapes a geometry expands to (everything the writer needs; readers must take their
// geometry from the files, never from here).
struct SynthShape {
  // Encoder, per stage s = 0..6 (stage 0 is the stem conv from 1 channel).
  std::vector<int64_t> channels;  // output width of stage s
  std::vector<int> depths;        // ConvNeXt blocks in stage s
  std::vector<int> strides;       // 1,2,2,4,5,5,8
  std::vector<int> kernels;       // raw kernel sizes 7,4,4,8,10,10,16
  int mixer_kernel = 7;           // depthwise and head raw kernel size
  int64_t acoustic_dim = 64;
  int64_t semantic_dim = 128;
  // Decoder (the connector output width is `hidden`).
  int64_t hidden = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t ffn = 0;
  int64_t vocab = 0;
  int64_t context_length = 65536;

  int64_t head_dim() const { return hidden / heads; }
};

SynthShape ShapeFor(SynthGeometry g);
Result<SynthGeometry> SynthGeometryFromName(const std::string& name);  // "tiny" | "full"

// The converter's kernel padding (spec 1.3): <4 -> 4, 5..7 -> 8, 9..15 -> 16, else unchanged.
int PaddedKernelSize(int k);

struct SynthOptions {
  SynthGeometry geometry = SynthGeometry::kTiny;
  uint64_t seed = 1;
  std::string vocab_dir;  // Qwen2 vocab.json + merges.txt (+ tokenizer_config.json); LM only
  std::string out_dir;    // must exist
  gguf::TypeIds type_ids = gguf::TypeIds::kPublished;  // 36/37, or audio.cpp's 43/42

  Status Validate() const;
};

// Writes both files into opts.out_dir.
Status WriteSyntheticPackage(const SynthOptions& opts);
// One file each, to an explicit path (encoder tests need no vocabulary).
Status WriteSyntheticEncoder(const SynthOptions& opts, const std::string& path);
Status WriteSyntheticDecoder(const SynthOptions& opts, const std::string& path);

// The vocabulary as it goes into tokenizer.ggml.* (exposed for tests and tools).
struct SynthVocab {
  std::vector<std::string> tokens;  // byte-level BPE strings, id order, padded to vocab size
  std::vector<float> scores;        // 0 for base tokens, -1000 for added and dummy tokens
  std::vector<int32_t> types;       // 1 NORMAL (base), 3 CONTROL (added and dummy)
  std::vector<std::string> merges;  // "a b" lines of merges.txt, in order
  std::string chat_template;        // from tokenizer_config.json, empty if absent
  int32_t eos_id = -1;              // eos_token / pad_token of tokenizer_config.json
  int32_t pad_id = -1;
};
// Loads vocab.json (ids 0..n-1, dense), merges.txt and tokenizer_config.json's added tokens
// (their ids must continue the base vocabulary), then pads to `vocab_size` with
// <dummy00001>... like the published converter (--pad-vocab).
Result<SynthVocab> LoadSynthVocab(const std::string& dir, int64_t vocab_size);

}  // namespace tern::vibeasr
