// Synthetic VibeASR packages; format and magnitudes are documented in synth.h.
#include "models/vibeasr/synth.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "base/mapped_file.h"
#include "gguf/writer.h"
#include "tensor/quant_ref.h"

namespace tern::vibeasr {
namespace {

// ---- Seeded generation ---------------------------------------------------------------------

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// One generator per tensor, keyed by (seed, name): files do not depend on write order.
class Rng {
 public:
  Rng(uint64_t seed, const std::string& name) {
    uint64_t s = seed;
    state_ = SplitMix64(&s) ^ Fnv1a(name);
  }
  uint64_t Next() { return SplitMix64(&state_); }
  // Irwin-Hall: the sum of four uniform 16-bit integers, standardized (mean 131070,
  // variance 4 * (2^32 - 1) / 12).
  float Normal() {
    const uint64_t r = Next();
    const int64_t sum = static_cast<int64_t>((r & 0xffff) + ((r >> 16) & 0xffff) +
                                             ((r >> 32) & 0xffff) + (r >> 48));
    return static_cast<float>(sum - 131070) * 2.64295e-5f;
  }
  float Uniform(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(Next() >> 40) * 0x1p-24f;
  }

 private:
  uint64_t state_;
};

int64_t Product(const std::vector<int64_t>& ne) {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

// Adds tensors to one writer, each from its own generator.
class TensorMaker {
 public:
  TensorMaker(gguf::Writer* w, uint64_t seed) : w_(w), seed_(seed) {}

  // Conv1d weight {Kp, IC, OC} from a raw kernel of K taps: taps k < Kp - K are zero (the
  // converter prepends zeros). N(0, sigma^2) elsewhere, then I8_S.
  Status Conv(const std::string& name, int k, int64_t ic, int64_t oc, float sigma) {
    const int kp = PaddedKernelSize(k);
    Rng rng(seed_, name);
    std::vector<float> w(static_cast<size_t>(kp * ic * oc));
    for (size_t i = 0; i < w.size(); ++i) {
      const int tap = static_cast<int>(i % static_cast<size_t>(kp));
      w[i] = tap < kp - k ? 0.0f : sigma * rng.Normal();
    }
    return AddI8S(name, {kp, ic, oc}, w);
  }

  // Linear weight {in, out} (ggml order: ne0 = in), I8_S.
  Status LinearI8S(const std::string& name, int64_t in, int64_t out, float sigma) {
    return AddI8S(name, {in, out}, Normals(name, in * out, sigma));
  }

  // Linear weight {in, out}, ternarized with the published converter's recipe.
  Status LinearI2S(const std::string& name, int64_t in, int64_t out, float sigma) {
    const std::vector<float> w = Normals(name, in * out, sigma);
    std::vector<uint8_t> bytes(static_cast<size_t>(StoredBytes(DType::kI2_S, in * out)));
    QuantizeI2S(w.data(), in * out, bytes.data());
    return w_->AddTensor(name, DType::kI2_S, {in, out}, std::move(bytes));
  }

  // {in, rows} in Q6_K or F16, generated and encoded row by row (the embedding table is
  // too big to hold as floats).
  Status Table(const std::string& name, DType type, int64_t in, int64_t rows, float sigma) {
    Rng rng(seed_, name);
    const int64_t row_bytes = RowBytes(type, in);
    std::vector<uint8_t> bytes(static_cast<size_t>(StoredBytes(type, in * rows)));
    std::vector<float> row(static_cast<size_t>(in));
    for (int64_t r = 0; r < rows; ++r) {
      for (float& x : row) x = sigma * rng.Normal();
      QuantizeRef(type, row.data(), in, bytes.data() + r * row_bytes);
    }
    return w_->AddTensor(name, type, {in, rows}, std::move(bytes));
  }

  // F32 bias, stored 2-D {n, 1} in the encoder (as published) or 1-D {n} in the decoder.
  Status Bias(const std::string& name, std::vector<int64_t> ne, float sigma) {
    return AddF32(name, ne, Normals(name, Product(ne), sigma));
  }

  // F32 vector {n} with values uniform in [lo, hi) (norm weights, layer scales).
  Status Uniform(const std::string& name, int64_t n, float lo, float hi) {
    Rng rng(seed_, name);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = rng.Uniform(lo, hi);
    return AddF32(name, {n}, v);
  }

 private:
  std::vector<float> Normals(const std::string& name, int64_t n, float sigma) {
    Rng rng(seed_, name);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = sigma * rng.Normal();
    return v;
  }

  Status AddI8S(const std::string& name, std::vector<int64_t> ne, const std::vector<float>& w) {
    const int64_t n = Product(ne);
    std::vector<uint8_t> bytes(static_cast<size_t>(StoredBytes(DType::kI8_S, n)));
    QuantizeI8S(w.data(), n, bytes.data());
    return w_->AddTensor(name, DType::kI8_S, ne, std::move(bytes));
  }

  Status AddF32(const std::string& name, std::vector<int64_t> ne, const std::vector<float>& v) {
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return w_->AddTensor(name, DType::kF32, ne, std::move(bytes));
  }

  gguf::Writer* w_;
  uint64_t seed_;
};

float InvSqrt(double fan_in) { return static_cast<float>(1.0 / std::sqrt(fan_in)); }

// One encoder branch (`p` = "acoustic" | "semantic") and its connector, spec 1.3.
Status AddEncoderBranch(TensorMaker& m, const SynthShape& sh, const std::string& p, int64_t dim) {
  int64_t in_ch = 1;
  for (int s = 0; s < static_cast<int>(sh.channels.size()); ++s) {
    const int64_t c = sh.channels[s];
    const int k = sh.kernels[s];
    const std::string ds = p + ".downsample_layers." + std::to_string(s) + ".0.conv.conv.";
    TERN_RETURN_IF_ERROR(m.Conv(ds + "weight", k, in_ch, c, InvSqrt(double(in_ch) * k)));
    TERN_RETURN_IF_ERROR(m.Bias(ds + "bias", {c, 1}, 0.01f));
    for (int b = 0; b < sh.depths[s]; ++b) {
      const std::string bp = p + ".stages." + std::to_string(s) + "." + std::to_string(b) + ".";
      const std::string mixer = bp + "mixer.conv.conv.conv.";
      TERN_RETURN_IF_ERROR(m.Uniform(bp + "norm.weight", c, 0.8f, 1.2f));
      TERN_RETURN_IF_ERROR(
          m.Conv(mixer + "weight", sh.mixer_kernel, 1, c, InvSqrt(sh.mixer_kernel)));
      TERN_RETURN_IF_ERROR(m.Bias(mixer + "bias", {c, 1}, 0.01f));
      TERN_RETURN_IF_ERROR(m.Uniform(bp + "gamma", c, 0.1f, 0.5f));
      TERN_RETURN_IF_ERROR(m.Uniform(bp + "ffn_norm.weight", c, 0.8f, 1.2f));
      TERN_RETURN_IF_ERROR(m.LinearI8S(bp + "ffn.linear1.weight", c, 4 * c, InvSqrt(c)));
      TERN_RETURN_IF_ERROR(m.Bias(bp + "ffn.linear1.bias", {4 * c, 1}, 0.01f));
      // After the ReLU half the inputs are zero: He init keeps the RMS.
      TERN_RETURN_IF_ERROR(m.LinearI8S(bp + "ffn.linear2.weight", 4 * c, c, InvSqrt(2.0 * c)));
      TERN_RETURN_IF_ERROR(m.Bias(bp + "ffn.linear2.bias", {c, 1}, 0.01f));
      TERN_RETURN_IF_ERROR(m.Uniform(bp + "ffn_gamma", c, 0.1f, 0.5f));
    }
    in_ch = c;
  }
  const std::string head = p + ".head.conv.conv.";
  TERN_RETURN_IF_ERROR(m.Conv(head + "weight", sh.mixer_kernel, in_ch, dim,
                              InvSqrt(double(in_ch) * sh.mixer_kernel)));
  TERN_RETURN_IF_ERROR(m.Bias(head + "bias", {dim, 1}, 0.01f));
  const std::string conn = p + "_connector.";
  TERN_RETURN_IF_ERROR(m.LinearI8S(conn + "fc1.weight", dim, sh.hidden, InvSqrt(dim)));
  TERN_RETURN_IF_ERROR(m.Bias(conn + "fc1.bias", {sh.hidden, 1}, 0.01f));
  TERN_RETURN_IF_ERROR(m.Uniform(conn + "norm.weight", sh.hidden, 0.8f, 1.2f));
  TERN_RETURN_IF_ERROR(m.LinearI8S(conn + "fc2.weight", sh.hidden, sh.hidden, InvSqrt(sh.hidden)));
  return m.Bias(conn + "fc2.bias", {sh.hidden, 1}, 0.01f);
}

std::vector<int32_t> ToI32(const std::vector<int>& v) { return {v.begin(), v.end()}; }

std::string GeometryName(SynthGeometry g) { return g == SynthGeometry::kFull ? "full" : "tiny"; }

// ---- Vocabulary files ----------------------------------------------------------------------

using Json = nlohmann::json;

Result<Json> ParseJsonFile(const std::string& path) {
  TERN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return FormatError("%s: not valid JSON", path.c_str());
  return j;
}

// "content" of a tokenizer_config token entry, which is a string or {"content": ...}.
std::string TokenText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) {
    return v["content"].get<std::string>();
  }
  return "";
}

}  // namespace

// ---- Public --------------------------------------------------------------------------------

int PaddedKernelSize(int k) {
  if (k < 4) return 4;
  if (k > 4 && k < 8) return 8;
  if (k > 8 && k < 16) return 16;
  return k;
}

SynthShape ShapeFor(SynthGeometry g) {
  SynthShape s;
  s.strides = {1, 2, 2, 4, 5, 5, 8};
  s.kernels = {7, 4, 4, 8, 10, 10, 16};
  s.vocab = 151936;
  if (g == SynthGeometry::kFull) {
    s.channels = {32, 64, 128, 256, 512, 1024, 2048};
    s.depths = {3, 3, 3, 3, 3, 3, 8};
    s.hidden = 1536;
    s.layers = 28;
    s.heads = 12;
    s.kv_heads = 2;
    s.ffn = 8960;
  } else {
    s.channels = {8, 16, 32, 64, 128, 256, 512};
    s.depths = {1, 1, 1, 1, 1, 1, 2};
    s.hidden = 256;
    s.layers = 2;
    s.heads = 8;
    s.kv_heads = 2;
    s.ffn = 384;
  }
  return s;
}

Result<SynthGeometry> SynthGeometryFromName(const std::string& name) {
  if (name == "tiny") return SynthGeometry::kTiny;
  if (name == "full") return SynthGeometry::kFull;
  return InvalidArgumentError("geometry '%s': expected 'tiny' or 'full'", name.c_str());
}

Status SynthOptions::Validate() const {
  if (out_dir.empty()) return InvalidArgumentError("synth: no output directory given");
  std::error_code ec;
  if (!std::filesystem::is_directory(out_dir, ec)) {
    return NotFoundError("synth: output directory '%s' does not exist", out_dir.c_str());
  }
  return Status::Ok();
}

Result<SynthVocab> LoadSynthVocab(const std::string& dir, int64_t vocab_size) {
  SynthVocab v;
  const std::string vocab_path = dir + "/vocab.json";
  TERN_ASSIGN_OR_RETURN(Json vocab, ParseJsonFile(vocab_path));
  if (!vocab.is_object() || vocab.empty()) {
    return FormatError("%s: expected a non-empty object of token -> id", vocab_path.c_str());
  }
  const int64_t n_base = static_cast<int64_t>(vocab.size());
  v.tokens.resize(static_cast<size_t>(n_base));
  std::vector<bool> seen(static_cast<size_t>(n_base), false);
  for (const auto& [text, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= n_base) {
      return FormatError("%s: token '%s': id is not an integer in [0, %lld)", vocab_path.c_str(),
                         text.c_str(), static_cast<long long>(n_base));
    }
    const size_t i = static_cast<size_t>(id.get<int64_t>());
    if (seen[i]) return FormatError("%s: id %zu used twice", vocab_path.c_str(), i);
    seen[i] = true;
    v.tokens[i] = text;
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  v.types.assign(v.tokens.size(), 1);  // NORMAL

  const std::string merges_path = dir + "/merges.txt";
  TERN_ASSIGN_OR_RETURN(std::string merges, ReadFileToString(merges_path));
  size_t pos = 0;
  while (pos < merges.size()) {
    size_t end = merges.find('\n', pos);
    if (end == std::string::npos) end = merges.size();
    std::string line = merges.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (v.merges.empty() && line.rfind("#version", 0) == 0)) continue;
    if (line.find(' ') == std::string::npos) {
      return FormatError("%s: merge %zu ('%s') has no space", merges_path.c_str(),
                         v.merges.size() + 1, line.c_str());
    }
    v.merges.push_back(std::move(line));
  }

  // Added tokens (specials) continue the base ids; the converter marks them CONTROL.
  const std::string config_path = dir + "/tokenizer_config.json";
  std::error_code ec;
  if (std::filesystem::exists(config_path, ec)) {
    TERN_ASSIGN_OR_RETURN(Json config, ParseJsonFile(config_path));
    std::map<int64_t, std::string> added;
    if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object()) {
      for (const auto& [key, entry] : config["added_tokens_decoder"].items()) {
        char* end = nullptr;
        const long long id = std::strtoll(key.c_str(), &end, 10);
        const std::string text = TokenText(entry);
        if (end == key.c_str() || *end != '\0' || id < 0 || text.empty()) {
          return FormatError("%s: added_tokens_decoder entry '%s' is not id -> {content}",
                             config_path.c_str(), key.c_str());
        }
        added[id] = text;
      }
    }
    for (const auto& [id, text] : added) {
      if (id < n_base) {
        if (v.tokens[static_cast<size_t>(id)] != text) {
          return FormatError("%s: added token %lld '%s' clashes with vocab.json's '%s'",
                             config_path.c_str(), static_cast<long long>(id), text.c_str(),
                             v.tokens[static_cast<size_t>(id)].c_str());
        }
        continue;
      }
      if (id != static_cast<int64_t>(v.tokens.size())) {
        return FormatError("%s: added token id %lld leaves a gap after id %zu", config_path.c_str(),
                           static_cast<long long>(id), v.tokens.size() - 1);
      }
      v.tokens.push_back(text);
      v.scores.push_back(-1000.0f);
      v.types.push_back(3);  // CONTROL
    }
    if (config.contains("chat_template") && config["chat_template"].is_string()) {
      v.chat_template = config["chat_template"].get<std::string>();
    }
    auto find_id = [&](const char* key) -> int32_t {
      if (!config.contains(key)) return -1;
      const std::string text = TokenText(config[key]);
      for (size_t i = v.tokens.size(); i-- > 0;) {
        if (v.tokens[i] == text) return static_cast<int32_t>(i);
      }
      return -1;
    };
    v.eos_id = find_id("eos_token");
    v.pad_id = find_id("pad_token");
  }

  if (static_cast<int64_t>(v.tokens.size()) > vocab_size) {
    return InvalidArgumentError("%s: %zu tokens do not fit a vocabulary of %lld", dir.c_str(),
                                v.tokens.size(), static_cast<long long>(vocab_size));
  }
  // --pad-vocab: <dummy00001>, <dummy00002>, ... (CONTROL, score -1000).
  for (int i = 1; static_cast<int64_t>(v.tokens.size()) < vocab_size; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "<dummy%05d>", i);
    v.tokens.push_back(name);
    v.scores.push_back(-1000.0f);
    v.types.push_back(3);
  }
  return v;
}

Status WriteSyntheticEncoder(const SynthOptions& opts, const std::string& path) {
  const SynthShape sh = ShapeFor(opts.geometry);
  gguf::Writer w(opts.type_ids);
  // KV as written by convert_vae_to_gguf.py, with general.file_type as llama-quantize
  // leaves it (u32) and the strides in the converter's order (stem excluded, reversed).
  w.SetString("general.architecture", "vibeasr-vae");
  w.SetString("general.name", "VibeASR VAE Encoder");
  w.SetU32("general.file_type", 41);
  w.SetU32("general.quantization_version", 2);
  w.SetU32("general.version", 1);
  std::vector<int> strides(sh.strides.rbegin(), sh.strides.rend() - 1);  // 8,5,5,4,2,2
  for (const char* p : {"acoustic", "semantic"}) {
    const std::string pre = std::string("vae.") + p + ".";
    w.SetU32(
        pre + "output_dim",
        static_cast<uint32_t>(std::string(p) == "acoustic" ? sh.acoustic_dim : sh.semantic_dim));
    w.SetI32Array(pre + "stage_depths", ToI32(sh.depths));
    w.SetI32Array(pre + "downsample_strides", ToI32(strides));
  }
  w.SetF32("vae.rms_norm_eps", 1e-6f);
  w.SetU32("vae.kernel_size", static_cast<uint32_t>(sh.mixer_kernel));
  w.SetF32("vae.layer_scale_init_value", 1e-6f);

  TensorMaker m(&w, opts.seed);
  TERN_RETURN_IF_ERROR(AddEncoderBranch(m, sh, "acoustic", sh.acoustic_dim));
  TERN_RETURN_IF_ERROR(AddEncoderBranch(m, sh, "semantic", sh.semantic_dim));
  return w.WriteTo(path);
}

Status WriteSyntheticDecoder(const SynthOptions& opts, const std::string& path) {
  const SynthShape sh = ShapeFor(opts.geometry);
  TERN_ASSIGN_OR_RETURN(SynthVocab vocab, LoadSynthVocab(opts.vocab_dir, sh.vocab));
  gguf::Writer w(opts.type_ids);
  const auto u32 = [](int64_t x) { return static_cast<uint32_t>(x); };
  w.SetString("general.architecture", "qwen2");
  w.SetString("general.name", "VibeASR synthetic " + GeometryName(opts.geometry) + " seed " +
                                  std::to_string(opts.seed));
  w.SetU32("general.file_type", 40);  // LLAMA_FTYPE_MOSTLY_I2_S
  w.SetU32("general.quantization_version", 2);
  w.SetU32("qwen2.vocab_size", u32(sh.vocab));
  w.SetU32("qwen2.context_length", u32(sh.context_length));
  w.SetU32("qwen2.embedding_length", u32(sh.hidden));
  w.SetU32("qwen2.block_count", u32(sh.layers));
  w.SetU32("qwen2.feed_forward_length", u32(sh.ffn));
  w.SetU32("qwen2.rope.dimension_count", u32(sh.head_dim()));
  w.SetU32("qwen2.attention.head_count", u32(sh.heads));
  w.SetU32("qwen2.attention.head_count_kv", u32(sh.kv_heads));
  w.SetF32("qwen2.attention.layer_norm_rms_epsilon", 1e-6f);
  w.SetF32("qwen2.rope.freq_base", 1e6f);
  w.SetBool("tokenizer.ggml.add_bos_token", true);
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetStringArray("tokenizer.ggml.tokens", vocab.tokens);
  w.SetF32Array("tokenizer.ggml.scores", vocab.scores);
  w.SetI32Array("tokenizer.ggml.token_type", vocab.types);
  w.SetStringArray("tokenizer.ggml.merges", vocab.merges);
  // SpecialVocab: Qwen2's config.json has bos = eos = <|endoftext|>.
  if (vocab.eos_id >= 0) {
    w.SetU32("tokenizer.ggml.bos_token_id", u32(vocab.eos_id));
    w.SetU32("tokenizer.ggml.eos_token_id", u32(vocab.eos_id));
  }
  if (vocab.pad_id >= 0) w.SetU32("tokenizer.ggml.padding_token_id", u32(vocab.pad_id));
  if (!vocab.chat_template.empty()) w.SetString("tokenizer.chat_template", vocab.chat_template);

  TensorMaker m(&w, opts.seed);
  const int64_t h = sh.hidden, kv = sh.kv_heads * sh.head_dim(), f = sh.ffn;
  TERN_RETURN_IF_ERROR(m.Table("token_embd.weight", DType::kQ6_K, h, sh.vocab, 0.3f));
  for (int64_t l = 0; l < sh.layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    TERN_RETURN_IF_ERROR(m.Uniform(b + "attn_norm.weight", h, 0.8f, 1.2f));
    TERN_RETURN_IF_ERROR(m.LinearI2S(b + "attn_q.weight", h, h, InvSqrt(h)));
    TERN_RETURN_IF_ERROR(m.Bias(b + "attn_q.bias", {h}, 0.05f));
    TERN_RETURN_IF_ERROR(m.LinearI2S(b + "attn_k.weight", h, kv, InvSqrt(h)));
    TERN_RETURN_IF_ERROR(m.Bias(b + "attn_k.bias", {kv}, 0.05f));
    TERN_RETURN_IF_ERROR(m.LinearI2S(b + "attn_v.weight", h, kv, InvSqrt(h)));
    TERN_RETURN_IF_ERROR(m.Bias(b + "attn_v.bias", {kv}, 0.05f));
    TERN_RETURN_IF_ERROR(m.LinearI2S(b + "attn_output.weight", h, h, InvSqrt(h)));
    TERN_RETURN_IF_ERROR(m.Uniform(b + "ffn_norm.weight", h, 0.8f, 1.2f));
    TERN_RETURN_IF_ERROR(m.LinearI2S(b + "ffn_gate.weight", h, f, InvSqrt(h)));
    TERN_RETURN_IF_ERROR(m.LinearI2S(b + "ffn_up.weight", h, f, InvSqrt(h)));
    TERN_RETURN_IF_ERROR(m.LinearI2S(b + "ffn_down.weight", f, h, InvSqrt(f)));
  }
  TERN_RETURN_IF_ERROR(m.Uniform("output_norm.weight", h, 0.8f, 1.2f));
  TERN_RETURN_IF_ERROR(m.Table("output.weight", DType::kF16, h, sh.vocab, 2.0f * InvSqrt(h)));
  return w.WriteTo(path);
}

Status WriteSyntheticPackage(const SynthOptions& opts) {
  TERN_RETURN_IF_ERROR(opts.Validate());
  if (opts.vocab_dir.empty()) {
    return InvalidArgumentError("synth: the decoder needs a vocabulary directory (--vocab)");
  }
  // Decoder first: a bad vocabulary directory fails before minutes of encoder work.
  TERN_RETURN_IF_ERROR(WriteSyntheticDecoder(opts, opts.out_dir + "/" + kSynthLmFileName));
  return WriteSyntheticEncoder(opts, opts.out_dir + "/" + kSynthVaeFileName);
}

}  // namespace tern::vibeasr
