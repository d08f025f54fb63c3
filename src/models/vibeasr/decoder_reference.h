// Test-only: a straightforward single-token-at-a-time Qwen2 forward written from the spec
// (4.2) with plain loops, reading the checkpoint through the reference dequantizers. Used as
// the oracle for the Decoder. Same arithmetic contract where the spec fixes it (per-row int8
// activations with RNE, the I2_S epilogue ((float)D / s) * scale, ggml's RMSNorm and iterated
// RoPE angles, F16 KV rows); attention and the head are evaluated in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "models/vibeasr/decoder_config.h"
#include "tensor/quant_ref.h"

namespace tern::vibeasr::testing {

class ReferenceDecoder {
 public:
  ReferenceDecoder(const gguf::File& f, const DecoderConfig& c) : c_(c) {
    embd_ = Dequant(f, "token_embd.weight");
    const gguf::TensorInfo* head = f.FindTensor("output.weight");
    head_ = head ? Dequant(f, "output.weight") : embd_;
    out_norm_ = Dequant(f, "output_norm.weight");
    for (int64_t l = 0; l < c.layers; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      Layer L;
      L.attn_norm = Dequant(f, p + "attn_norm.weight");
      L.ffn_norm = Dequant(f, p + "ffn_norm.weight");
      L.q = Ternary(f, p + "attn_q.weight");
      L.k = Ternary(f, p + "attn_k.weight");
      L.v = Ternary(f, p + "attn_v.weight");
      L.o = Ternary(f, p + "attn_output.weight");
      L.gate = Ternary(f, p + "ffn_gate.weight");
      L.up = Ternary(f, p + "ffn_up.weight");
      L.down = Ternary(f, p + "ffn_down.weight");
      if (f.FindTensor(p + "attn_q.bias")) {
        L.bq = Dequant(f, p + "attn_q.bias");
        L.bk = Dequant(f, p + "attn_k.bias");
        L.bv = Dequant(f, p + "attn_v.bias");
      }
      layers_.push_back(std::move(L));
    }
    kcache_.resize(c.layers);
    vcache_.resize(c.layers);
  }

  // One row (token >= 0 or an embedding) at RoPE position `pos`, appended to the cache.
  // Returns the logits; *normed receives the final normed hidden row when non-null.
  std::vector<float> Forward(int32_t token, const float* embedding, int32_t pos,
                             std::vector<float>* normed = nullptr) {
    const int64_t h = c_.hidden, hd = c_.head_dim, kvd = c_.kv_heads * hd;
    std::vector<float> x(h);
    for (int64_t i = 0; i < h; ++i) x[i] = token >= 0 ? embd_[token * h + i] : embedding[i];
    for (int64_t l = 0; l < c_.layers; ++l) {
      const Layer& L = layers_[l];
      std::vector<float> xn = Norm(x, L.attn_norm);
      std::vector<float> q = Proj(L.q, xn, L.bq), k = Proj(L.k, xn, L.bk), v = Proj(L.v, xn, L.bv);
      Rope(&q, c_.heads, pos);
      Rope(&k, c_.kv_heads, pos);
      for (int64_t i = 0; i < kvd; ++i) {
        kcache_[l].push_back(F16ToF32(F32ToF16(k[i])));
        vcache_[l].push_back(F16ToF32(F32ToF16(v[i])));
      }
      const int64_t n_kv = static_cast<int64_t>(kcache_[l].size()) / kvd;
      std::vector<float> att(c_.heads * hd);
      const int64_t group = c_.heads / c_.kv_heads;
      for (int64_t hh = 0; hh < c_.heads; ++hh) {
        const int64_t g = hh / group;
        std::vector<double> s(n_kv);
        double mx = -INFINITY;
        for (int64_t j = 0; j < n_kv; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < hd; ++d)
            dot += double(q[hh * hd + d]) * kcache_[l][j * kvd + g * hd + d];
          s[j] = dot / std::sqrt(double(hd));
          mx = std::max(mx, s[j]);
        }
        double sum = 0;
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (int64_t d = 0; d < hd; ++d) {
          double o = 0;
          for (int64_t j = 0; j < n_kv; ++j) o += s[j] / sum * vcache_[l][j * kvd + g * hd + d];
          att[hh * hd + d] = static_cast<float>(o);
        }
      }
      std::vector<float> o = Proj(L.o, att, {});
      for (int64_t i = 0; i < h; ++i) x[i] += o[i];
      xn = Norm(x, L.ffn_norm);
      std::vector<float> g = Proj(L.gate, xn, {}), u = Proj(L.up, xn, {});
      for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
      std::vector<float> dn = Proj(L.down, g, {});
      for (int64_t i = 0; i < h; ++i) x[i] += dn[i];
    }
    std::vector<float> xn = Norm(x, out_norm_);
    if (normed) *normed = xn;
    std::vector<float> logits(c_.vocab);
    for (int64_t r = 0; r < c_.vocab; ++r) {
      double acc = 0;
      for (int64_t i = 0; i < h; ++i) acc += double(head_[r * h + i]) * xn[i];
      logits[r] = static_cast<float>(acc);
    }
    return logits;
  }

  const std::vector<float>& head() const { return head_; }

 private:
  struct TernaryW {
    std::vector<int8_t> t;  // -1, 0, +1
    int64_t k = 0, n = 0;
    float scale = 0;
  };
  struct Layer {
    std::vector<float> attn_norm, ffn_norm, bq, bk, bv;
    TernaryW q, k, v, o, gate, up, down;
  };

  static std::vector<float> Dequant(const gguf::File& f, const std::string& name) {
    const gguf::TensorInfo* t = f.FindTensor(name);
    std::vector<float> out(static_cast<size_t>(t->n_elements));
    DequantizeRef(t->type, t->data, t->n_elements, out.data());
    return out;
  }
  static TernaryW Ternary(const gguf::File& f, const std::string& name) {
    const gguf::TensorInfo* t = f.FindTensor(name);
    TernaryW w;
    w.k = t->ne[0];
    w.n = t->ne[1];
    std::vector<uint8_t> codes(static_cast<size_t>(t->n_elements));
    UnpackI2SCodes(t->data, t->n_elements, codes.data());
    w.t.resize(codes.size());
    for (size_t i = 0; i < codes.size(); ++i) w.t[i] = codes[i] == 3 ? 0 : codes[i] - 1;
    w.scale = ReadI2SScale(t->data, t->n_elements);
    return w;
  }
  // ggml RMSNorm: squares in float summed in double, then (x * r) * w.
  std::vector<float> Norm(const std::vector<float>& x, const std::vector<float>& w) const {
    double ss = 0;
    for (float v : x) ss += double(v * v);
    const float r = 1.0f / std::sqrt(float(ss / double(x.size())) + c_.rms_eps);
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] * r) * w[i];
    return y;
  }
  // Spec 2.3: per-row int8 (amax in double, floor 1e-5, RNE), exact integer dot, epilogue.
  static std::vector<float> Proj(const TernaryW& w, const std::vector<float>& x,
                                 const std::vector<float>& bias) {
    double amax = 1e-5;
    for (float v : x) amax = std::max(amax, double(std::fabs(v)));
    const float s = static_cast<float>(127.0 / amax);
    std::vector<int32_t> q(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      q[i] = static_cast<int32_t>(std::clamp(std::nearbyint(x[i] * s), -128.0f, 127.0f));
    }
    std::vector<float> y(w.n);
    for (int64_t r = 0; r < w.n; ++r) {
      int32_t d = 0;
      for (int64_t i = 0; i < w.k; ++i) d += w.t[r * w.k + i] * q[i];
      y[r] = (static_cast<float>(d) / s) * w.scale + (bias.empty() ? 0.0f : bias[r]);
    }
    return y;
  }
  // NEOX with ggml's iterated float angles.
  void Rope(std::vector<float>* v, int64_t heads, int32_t pos) const {
    const int64_t hd = c_.head_dim, half = hd / 2;
    const float step = std::pow(c_.rope_theta, -2.0f / float(hd));
    for (int64_t h = 0; h < heads; ++h) {
      float theta = float(pos);
      for (int64_t i = 0; i < half; ++i) {
        float* a = v->data() + h * hd;
        const float c = std::cos(theta), s = std::sin(theta);
        const float x0 = a[i], x1 = a[i + half];
        a[i] = x0 * c - x1 * s;
        a[i + half] = x0 * s + x1 * c;
        theta *= step;
      }
    }
  }

  DecoderConfig c_;
  std::vector<float> embd_, head_, out_norm_;
  std::vector<Layer> layers_;
  std::vector<std::vector<float>> kcache_, vcache_;
};

// Per-logit bound of W8A8 against the F16 head on the same input x (seed 003 quantizers):
// |w - qw*ws| <= ws/2 and |x - q/s| <= 1/(2s), so
//   |y8 - y16| <= ws/2 * sum|x| + 1/(2s) * sum|w| + k * ws/2 * 1/(2s)   (+ float rounding).
inline std::vector<double> Int8HeadBound(const std::vector<float>& head, int64_t k,
                                         const std::vector<float>& x) {
  double amax_x = 1e-5, sum_x = 0;
  for (float v : x) {
    amax_x = std::max(amax_x, double(std::fabs(v)));
    sum_x += std::fabs(v);
  }
  const double dx = amax_x / 127.0 / 2.0;
  const int64_t n = static_cast<int64_t>(head.size()) / k;
  std::vector<double> b(n);
  for (int64_t r = 0; r < n; ++r) {
    double amax_w = 0, sum_w = 0, mag = 0;
    for (int64_t i = 0; i < k; ++i) {
      amax_w = std::max(amax_w, double(std::fabs(head[r * k + i])));
      sum_w += std::fabs(head[r * k + i]);
      mag += std::fabs(head[r * k + i] * x[i]);
    }
    const double dw = amax_w / 127.0 / 2.0;
    b[r] = dw * sum_x + dx * sum_w + k * dw * dx + 1e-5 * mag;
  }
  return b;
}

}  // namespace tern::vibeasr::testing
