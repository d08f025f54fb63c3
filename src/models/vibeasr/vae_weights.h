// The VAE encoder checkpoint (`vibeasr-vae-encoder-i8_s.gguf`, spec 1.3): geometry and the
// one table that binds GGUF tensor names to fields.
//
// Geometry comes from the file, never from constants: the number of stages, their widths and
// stored kernel sizes from the downsample weights {Kp, IC, OC}; block counts from
// `vae.<P>.stage_depths` (else by counting `<P>.stages.<s>.<b>.norm.weight`); strides from
// `vae.<P>.downsample_strides` (the converter's order: stem excluded, reversed; else the
// published 1,2,2,4,5,5,8 when there are 7 stages); mixer/head kernels, latent width D and the
// connector width from their weight shapes. A checkpoint with other widths or depths runs
// through the same code.
//
// ForEachVaeTensor lists every tensor of a branch with its expected type and shape (ggml ne,
// trailing 1s implied); BindVaeBranch checks each against the file and fails with the tensor
// name and "expected vs got".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"
#include "tensor/dtype.h"

namespace tern::vibeasr {

struct VaeGeometry {
  std::string prefix;             // "acoustic" | "semantic"
  std::vector<int64_t> channels;  // output width of stage s (stage 0 reads 1 channel)
  std::vector<int64_t> kernels;   // stored (front-padded) kernel of the stage-s conv
  std::vector<int64_t> strides;   // stride of the stage-s conv (stage 0: 1)
  std::vector<int64_t> depths;    // ConvNeXt blocks in stage s
  std::vector<int64_t> ffn;       // FFN hidden width of stage s (4C when published)
  int64_t mixer_kernel = 0;       // stored depthwise kernel (8)
  int64_t head_kernel = 0;        // stored head kernel (8), stride 1
  int64_t latent = 0;             // D: 64 acoustic, 128 semantic
  int64_t hidden = 0;             // connector width (1536)

  int stages() const { return static_cast<int>(channels.size()); }
  int64_t in_channels(int s) const { return s == 0 ? 1 : channels[s - 1]; }
};

// Derives the geometry of branch `prefix` from `f`'s tensor shapes and vae.* keys.
Result<VaeGeometry> ReadVaeGeometry(const gguf::File& f, const std::string& prefix);

using TensorSlot = const gguf::TensorInfo*;

struct VaeBlockTensors {
  TensorSlot norm, mixer_w, mixer_b, gamma, ffn_norm, fc1_w, fc1_b, fc2_w, fc2_b, ffn_gamma;
};
struct VaeStageTensors {
  TensorSlot down_w, down_b;
  std::vector<VaeBlockTensors> blocks;
};
struct VaeBranchTensors {
  std::vector<VaeStageTensors> stages;
  TensorSlot head_w, head_b, conn_fc1_w, conn_fc1_b, conn_norm, conn_fc2_w, conn_fc2_b;
};

// The weight table: fn(name, dtype, ne (up to 4, trailing 1s implied), slot) for every
// tensor of the branch, in file order. `t` must have been sized by SizeVaeBranch.
void SizeVaeBranch(const VaeGeometry& g, VaeBranchTensors* t);
template <typename Fn>
void ForEachVaeTensor(const VaeGeometry& g, VaeBranchTensors* t, Fn&& fn) {
  const std::string& P = g.prefix;
  for (int s = 0; s < g.stages(); ++s) {
    const int64_t C = g.channels[s];
    const std::string ds = P + ".downsample_layers." + std::to_string(s) + ".0.conv.conv.";
    VaeStageTensors& st = t->stages[s];
    fn(ds + "weight", DType::kI8_S, std::vector<int64_t>{g.kernels[s], g.in_channels(s), C},
       &st.down_w);
    fn(ds + "bias", DType::kF32, std::vector<int64_t>{C, 1}, &st.down_b);
    for (int64_t b = 0; b < g.depths[s]; ++b) {
      const std::string bp = P + ".stages." + std::to_string(s) + "." + std::to_string(b) + ".";
      VaeBlockTensors& bt = st.blocks[b];
      const int64_t H = g.ffn[s];
      fn(bp + "norm.weight", DType::kF32, std::vector<int64_t>{C}, &bt.norm);
      fn(bp + "mixer.conv.conv.conv.weight", DType::kI8_S,
         std::vector<int64_t>{g.mixer_kernel, 1, C}, &bt.mixer_w);
      fn(bp + "mixer.conv.conv.conv.bias", DType::kF32, std::vector<int64_t>{C, 1}, &bt.mixer_b);
      fn(bp + "gamma", DType::kF32, std::vector<int64_t>{C}, &bt.gamma);
      fn(bp + "ffn_norm.weight", DType::kF32, std::vector<int64_t>{C}, &bt.ffn_norm);
      fn(bp + "ffn.linear1.weight", DType::kI8_S, std::vector<int64_t>{C, H}, &bt.fc1_w);
      fn(bp + "ffn.linear1.bias", DType::kF32, std::vector<int64_t>{H, 1}, &bt.fc1_b);
      fn(bp + "ffn.linear2.weight", DType::kI8_S, std::vector<int64_t>{H, C}, &bt.fc2_w);
      fn(bp + "ffn.linear2.bias", DType::kF32, std::vector<int64_t>{C, 1}, &bt.fc2_b);
      fn(bp + "ffn_gamma", DType::kF32, std::vector<int64_t>{C}, &bt.ffn_gamma);
    }
  }
  const int64_t last = g.channels.back();
  fn(P + ".head.conv.conv.weight", DType::kI8_S,
     std::vector<int64_t>{g.head_kernel, last, g.latent}, &t->head_w);
  fn(P + ".head.conv.conv.bias", DType::kF32, std::vector<int64_t>{g.latent, 1}, &t->head_b);
  const std::string cp = P + "_connector.";
  fn(cp + "fc1.weight", DType::kI8_S, std::vector<int64_t>{g.latent, g.hidden}, &t->conn_fc1_w);
  fn(cp + "fc1.bias", DType::kF32, std::vector<int64_t>{g.hidden, 1}, &t->conn_fc1_b);
  fn(cp + "norm.weight", DType::kF32, std::vector<int64_t>{g.hidden}, &t->conn_norm);
  fn(cp + "fc2.weight", DType::kI8_S, std::vector<int64_t>{g.hidden, g.hidden}, &t->conn_fc2_w);
  fn(cp + "fc2.bias", DType::kF32, std::vector<int64_t>{g.hidden, 1}, &t->conn_fc2_b);
}

// Runs the table against `f`: every tensor must exist with the listed type and shape; F32
// tensors must be finite; I8_S scales finite and >= 0.
Result<VaeBranchTensors> BindVaeBranch(const gguf::File& f, const VaeGeometry& g);

// I8_S weight values must lie in [-127, 127] (what the int8 kernels assume). Separate from
// BindVaeBranch so a loader can check, pack and release one tensor at a time.
Status CheckI8sWeightValues(const gguf::File& f, const gguf::TensorInfo& t);

// The in-band multiplier of an I8_S tensor and its values.
float I8sWeightScale(const gguf::TensorInfo& t);
inline const int8_t* I8sWeightData(const gguf::TensorInfo& t) {
  return reinterpret_cast<const int8_t*>(t.data);
}
inline const float* F32Data(const gguf::TensorInfo& t) {
  return reinterpret_cast<const float*>(t.data);
}

}  // namespace tern::vibeasr
