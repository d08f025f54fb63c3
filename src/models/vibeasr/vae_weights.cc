#include "models/vibeasr/vae_weights.h"

#include <cmath>
#include <cstring>

#include "ops/i8s_elementwise.h"
#include "tensor/quant_ref.h"

namespace tern::vibeasr {

namespace {

std::string ShapeText(const int64_t* ne, int n) {
  std::string s = "{";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "}";
}

const gguf::TensorInfo* Find(const gguf::File& f, const std::string& name) {
  return f.FindTensor(name);
}

// An integer-array KV, or an empty vector when absent.
Result<std::vector<int64_t>> OptionalIntArray(const gguf::File& f, const std::string& key) {
  if (f.Find(key) == nullptr) return std::vector<int64_t>{};
  auto r = f.GetIntArray(key);
  if (!r.ok()) return r.status().WithPrefix(f.path());
  return std::move(r).value();
}

}  // namespace

Result<VaeGeometry> ReadVaeGeometry(const gguf::File& f, const std::string& P) {
  VaeGeometry g;
  g.prefix = P;
  const char* path = f.path().c_str();
  // Stages: the downsample convs present, 0, 1, 2, ...
  for (int s = 0;; ++s) {
    const std::string name = P + ".downsample_layers." + std::to_string(s) + ".0.conv.conv.weight";
    const gguf::TensorInfo* t = Find(f, name);
    if (t == nullptr) {
      if (s == 0) return NotFoundError("%s: missing tensor '%s'", path, name.c_str());
      break;
    }
    if (t->n_dims != 3)
      return FormatError("%s: tensor '%s': expected 3 dims {K, IC, OC}, got %s", path, name.c_str(),
                         ShapeText(t->ne, t->n_dims).c_str());
    g.kernels.push_back(t->ne[0]);
    g.channels.push_back(t->ne[2]);
  }
  const int n = g.stages();
  // Depths: vae.<P>.stage_depths, else count the blocks present.
  TERN_ASSIGN_OR_RETURN(std::vector<int64_t> depths,
                        OptionalIntArray(f, "vae." + P + ".stage_depths"));
  if (!depths.empty() && static_cast<int>(depths.size()) != n)
    return FormatError("%s: vae.%s.stage_depths has %zu entries, the file has %d stages", path,
                       P.c_str(), depths.size(), n);
  for (int s = 0; s < n; ++s) {
    auto block_norm = [&](int64_t b) {
      return P + ".stages." + std::to_string(s) + "." + std::to_string(b) + ".norm.weight";
    };
    int64_t d = 0;
    if (depths.empty()) {
      while (Find(f, block_norm(d))) ++d;
    } else {  // the table reports missing blocks by name; extra blocks would be ignored
      d = depths[s];
      if (d < 0 || Find(f, block_norm(d)))
        return FormatError("%s: vae.%s.stage_depths[%d] = %lld disagrees with tensor '%s'", path,
                           P.c_str(), s, static_cast<long long>(d), block_norm(d).c_str());
    }
    g.depths.push_back(d);
  }
  // Strides: the converter stores the encoder ratios without the stem, reversed.
  TERN_ASSIGN_OR_RETURN(std::vector<int64_t> ratios,
                        OptionalIntArray(f, "vae." + P + ".downsample_strides"));
  if (ratios.empty()) {
    if (n != 7)
      return NotFoundError(
          "%s: vae.%s.downsample_strides is absent and the file has %d stages "
          "(the published default needs 7)",
          path, P.c_str(), n);
    g.strides = {1, 2, 2, 4, 5, 5, 8};
  } else {
    if (static_cast<int>(ratios.size()) != n - 1)
      return FormatError("%s: vae.%s.downsample_strides has %zu entries, expected %d", path,
                         P.c_str(), ratios.size(), n - 1);
    g.strides.push_back(1);
    for (auto it = ratios.rbegin(); it != ratios.rend(); ++it) g.strides.push_back(*it);
  }
  for (int s = 0; s < n; ++s) {
    if (g.strides[s] < 1 || g.strides[s] > g.kernels[s])
      return FormatError("%s: stage %d: stride %lld must be in [1, kernel %lld]", path, s,
                         static_cast<long long>(g.strides[s]),
                         static_cast<long long>(g.kernels[s]));
  }
  // Mixer kernel and FFN widths from the first block's tensors (the table checks the rest).
  for (int s = 0; s < n; ++s) {
    int64_t h = 4 * g.channels[s];
    if (g.depths[s] > 0) {
      const std::string bp = P + ".stages." + std::to_string(s) + ".0.";
      if (const gguf::TensorInfo* t = Find(f, bp + "ffn.linear1.weight")) h = t->ne[1];
      if (g.mixer_kernel == 0)
        if (const gguf::TensorInfo* t = Find(f, bp + "mixer.conv.conv.conv.weight"))
          g.mixer_kernel = t->ne[0];
    }
    g.ffn.push_back(h);
  }
  if (g.mixer_kernel == 0) g.mixer_kernel = 8;
  if (g.mixer_kernel > ops::kMaxDepthwiseKernel)
    return UnsupportedError("%s: %s depthwise kernel %lld is longer than %lld taps", path,
                            P.c_str(), static_cast<long long>(g.mixer_kernel),
                            static_cast<long long>(ops::kMaxDepthwiseKernel));
  const std::string head = P + ".head.conv.conv.weight";
  const gguf::TensorInfo* ht = Find(f, head);
  if (ht == nullptr) return NotFoundError("%s: missing tensor '%s'", path, head.c_str());
  g.head_kernel = ht->ne[0];
  g.latent = ht->ne[2];
  const std::string fc1 = P + "_connector.fc1.weight";
  const gguf::TensorInfo* ct = Find(f, fc1);
  if (ct == nullptr) return NotFoundError("%s: missing tensor '%s'", path, fc1.c_str());
  g.hidden = ct->ne[1];
  return g;
}

void SizeVaeBranch(const VaeGeometry& g, VaeBranchTensors* t) {
  t->stages.assign(static_cast<size_t>(g.stages()), VaeStageTensors{});
  for (int s = 0; s < g.stages(); ++s)
    t->stages[s].blocks.assign(static_cast<size_t>(g.depths[s]), VaeBlockTensors{});
}

float I8sWeightScale(const gguf::TensorInfo& t) { return ReadI8SScale(t.data, t.n_elements); }

Status CheckI8sWeightValues(const gguf::File& f, const gguf::TensorInfo& t) {
  const int8_t* q = I8sWeightData(t);
  uint8_t bad = 0;  // OR-reduced without an early exit so the scan vectorizes
  for (int64_t i = 0; i < t.n_elements; ++i) bad |= static_cast<uint8_t>(q[i] == -128);
  for (int64_t i = 0; bad != 0 && i < t.n_elements; ++i)
    if (q[i] == -128)
      return FormatError(
          "%s: tensor '%s': element %lld is -128 (I8_S weights are in "
          "[-127, 127])",
          f.path().c_str(), t.name.c_str(), static_cast<long long>(i));
  return Status::Ok();
}

Result<VaeBranchTensors> BindVaeBranch(const gguf::File& f, const VaeGeometry& g) {
  VaeBranchTensors t;
  SizeVaeBranch(g, &t);
  Status status;
  const char* path = f.path().c_str();
  ForEachVaeTensor(
      g, &t,
      [&](const std::string& name, DType type, const std::vector<int64_t>& ne, TensorSlot* slot) {
        if (!status.ok()) return;
        const gguf::TensorInfo* info = Find(f, name);
        if (info == nullptr) {
          status = NotFoundError("%s: missing tensor '%s'", path, name.c_str());
          return;
        }
        if (info->type != type) {
          status = FormatError("%s: tensor '%s': expected %s, got %s", path, name.c_str(),
                               DTypeName(type), DTypeName(info->type));
          return;
        }
        int64_t want[4] = {1, 1, 1, 1};
        for (size_t i = 0; i < ne.size(); ++i) want[i] = ne[i];
        if (std::memcmp(want, info->ne, sizeof want) != 0) {
          status = FormatError("%s: tensor '%s': expected shape %s, got %s", path, name.c_str(),
                               ShapeText(want, static_cast<int>(ne.size())).c_str(),
                               ShapeText(info->ne, info->n_dims).c_str());
          return;
        }
        if (type == DType::kF32) {
          const float* v = F32Data(*info);
          for (int64_t i = 0; i < info->n_elements; ++i)
            if (!std::isfinite(v[i])) {
              status = FormatError("%s: tensor '%s': element %lld is not finite", path,
                                   name.c_str(), static_cast<long long>(i));
              return;
            }
        } else {
          const float sc = I8sWeightScale(*info);
          if (!std::isfinite(sc) || sc < 0) {
            status = FormatError("%s: tensor '%s': in-band scale %g is not a finite value >= 0",
                                 path, name.c_str(), static_cast<double>(sc));
            return;
          }
        }
        *slot = info;
      });
  if (!status.ok()) return status;
  return t;
}

}  // namespace tern::vibeasr
