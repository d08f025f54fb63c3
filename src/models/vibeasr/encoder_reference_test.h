// TEST-ONLY plain scalar reference of one encoder branch: straight loops over the spec
// equations (spec 3.3, 3.4) in ggml's own layouts -- im2col on time-contiguous {T, C}
// inputs with the stored {K, IC, OC} weights as they are, cont(permute) around the
// depthwise conv and between stages -- sharing no code with src/ops or encoder.cc. It reads
// the weights straight from the GGUF by name. Scales are tern's multipliers.
//
// RefBranch calls `emit(step, values {C, T} channel-major, ne0, ne1, scale)` with the same
// step names as Encoder::RunBranch's hook.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf.h"

namespace tern::vibeasr::ref {

struct T8 {  // an I8_S activation in ggml order: ne0 contiguous
  std::vector<int8_t> q;
  int64_t ne0 = 0, ne1 = 0;
  float scale = 0;
};

using Emit = std::function<void(const std::string&, const T8&)>;

struct W8 {  // a weight: values as stored + multiplier
  const int8_t* q;
  int64_t ne[3];
  float scale;
};

inline const gguf::TensorInfo& Get(const gguf::File& f, const std::string& name) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  if (!t) std::abort();
  return *t;
}
inline W8 Weight(const gguf::File& f, const std::string& name) {
  const gguf::TensorInfo& t = Get(f, name);
  W8 w{reinterpret_cast<const int8_t*>(t.data), {t.ne[0], t.ne[1], t.ne[2]}, 0};
  std::memcpy(&w.scale, t.data + t.n_elements, 4);  // the in-band scale after the values
  return w;
}
inline const float* F32(const gguf::File& f, const std::string& name) {
  return reinterpret_cast<const float*>(Get(f, name).data);
}

// Requantize y (layout of `like`) with G = max|y|; half_away: roundf, else nearbyint.
inline T8 Requant(const std::vector<float>& y, int64_t ne0, int64_t ne1, bool half_away,
                  bool relu = false) {
  float g = 0;
  for (float v : y) g = std::max(g, std::fabs(v));
  const float inv = g != 0 ? 127.0f / g : 0.0f;
  T8 r;
  r.ne0 = ne0;
  r.ne1 = ne1;
  r.q.resize(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    const float v = std::min(127.0f, std::max(-127.0f, y[i] * inv));
    int q = static_cast<int>(half_away ? std::roundf(v) : std::nearbyint(v));
    if (relu && q < 0) q = 0;
    r.q[i] = static_cast<int8_t>(q);
  }
  r.scale = g / 127.0f;
  return r;
}

inline T8 Permute(const T8& x) {  // cont(permute(1, 0)): {ne0, ne1} -> {ne1, ne0}
  T8 r{std::vector<int8_t>(x.q.size()), x.ne1, x.ne0, x.scale};
  for (int64_t i1 = 0; i1 < x.ne1; ++i1)
    for (int64_t i0 = 0; i0 < x.ne0; ++i0) r.q[i0 * x.ne1 + i1] = x.q[i1 * x.ne0 + i0];
  return r;
}

// im2col_asym on x{IW, IC}: {IC*K, OW}, column element ic*K + k.
inline T8 Im2col(const T8& x, int64_t K, int64_t s, int64_t lp) {
  const int64_t iw = x.ne0, ic = x.ne1;
  const int64_t num = iw + lp - K;
  const int64_t ow = num / s + 1;  // C truncation
  T8 r{std::vector<int8_t>(static_cast<size_t>(ow * ic * K), 0), ic * K, ow, x.scale};
  for (int64_t t = 0; t < ow; ++t)
    for (int64_t c = 0; c < ic; ++c)
      for (int64_t k = 0; k < K; ++k) {
        const int64_t i = t * s + k - lp;
        if (i >= 0 && i < iw) r.q[t * ic * K + c * K + k] = x.q[c * iw + i];
      }
  return r;
}

// mul_mat_add(W{K, N} rows, x{K, T}) + bias -> {N, T}.
inline T8 MulMatAdd(const int8_t* w, float ws, int64_t K, int64_t N, const T8& x, const float* bias,
                    bool relu) {
  std::vector<float> y(static_cast<size_t>(N * x.ne1));
  const float c = ws * x.scale;
  for (int64_t t = 0; t < x.ne1; ++t)
    for (int64_t n = 0; n < N; ++n) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += int32_t{w[n * K + k]} * int32_t{x.q[t * K + k]};
      y[t * N + n] = static_cast<float>(acc) * c + bias[n];
    }
  return Requant(y, N, x.ne1, true, relu);
}

// Causal conv: x{T, IC} time-contiguous; W stored {K, IC, OC}; -> {OC, T'}.
inline T8 Conv(const T8& x_t, const W8& w, const float* bias, int64_t stride) {
  const T8 col = Im2col(x_t, w.ne[0], stride, w.ne[0] - stride);
  return MulMatAdd(w.q, w.scale, w.ne[0] * w.ne[1], w.ne[2], col, bias, false);
}

inline T8 RmsNorm(const T8& x, const float* gamma) {  // rows over ne0, eps 1e-5
  const float eps = (float)(1e-5f / ((double)x.scale * (double)x.scale));
  std::vector<float> y(x.q.size());
  for (int64_t t = 0; t < x.ne1; ++t) {
    int64_t ss = 0;
    for (int64_t i = 0; i < x.ne0; ++i) ss += x.q[t * x.ne0 + i] * x.q[t * x.ne0 + i];
    const float r = 1.0f / sqrtf((float)ss / (float)x.ne0 + eps);
    for (int64_t i = 0; i < x.ne0; ++i)
      y[t * x.ne0 + i] = ((float)x.q[t * x.ne0 + i] * r) * gamma[i];
  }
  return Requant(y, x.ne0, x.ne1, false);
}

inline T8 AddScaled(const T8& a, const T8& b, const float* gamma) {
  std::vector<float> y(a.q.size());
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = ((float)a.q[i] * a.scale) * gamma[i % a.ne0] + (float)b.q[i] * b.scale;
  return Requant(y, a.ne0, a.ne1, false);
}

// Depthwise on x{C, T}: permute to {T, C}, per channel im2col (lp K-1) and dot, back to {C, T}.
inline T8 Depthwise(const T8& x, const W8& w, const float* bias) {
  const T8 xt = Permute(x);  // {T, C}
  const int64_t T = xt.ne0, C = xt.ne1, K = w.ne[0];
  std::vector<float> y(static_cast<size_t>(T * C));  // {T, C}
  for (int64_t c = 0; c < C; ++c)
    for (int64_t t = 0; t < T; ++t) {
      int32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        const int64_t i = t + k - (K - 1);
        if (i >= 0) acc += int32_t{w.q[c * K + k]} * int32_t{xt.q[c * T + i]};
      }
      y[c * T + t] = (float)acc * (w.scale * x.scale) + bias[c];
    }
  return Permute(Requant(y, T, C, true));
}

// One branch of `f` ("acoustic" | "semantic"); strides and depths as given.
inline T8 RefBranch(const gguf::File& f, const std::string& P, const std::vector<int64_t>& strides,
                    const std::vector<int64_t>& depths, const float* a, int64_t n,
                    const Emit& emit) {
  float amax = 0.00001f;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(a[i]));
  const float s = 127.0f / amax;
  T8 x{std::vector<int8_t>(static_cast<size_t>(n)), n, 1, 1.0f / s};  // {T, 1}
  for (int64_t i = 0; i < n; ++i)
    x.q[i] = static_cast<int8_t>(std::clamp((int)std::roundf(a[i] * s), -128, 127));
  emit("input", x);
  T8 xt = x;  // time-contiguous input of the next conv
  for (size_t st = 0; st < strides.size(); ++st) {
    const std::string sp = "s" + std::to_string(st);
    const std::string ds = P + ".downsample_layers." + std::to_string(st) + ".0.conv.conv.";
    x = Conv(xt, Weight(f, ds + "weight"), F32(f, ds + "bias"), strides[st]);  // {C, T}
    emit(sp + ".conv", x);
    for (int64_t b = 0; b < depths[st]; ++b) {
      const std::string bp = P + ".stages." + std::to_string(st) + "." + std::to_string(b) + ".";
      const std::string tag = sp + ".b" + std::to_string(b);
      T8 h = RmsNorm(x, F32(f, bp + "norm.weight"));
      emit(tag + ".norm", h);
      h = Depthwise(h, Weight(f, bp + "mixer.conv.conv.conv.weight"),
                    F32(f, bp + "mixer.conv.conv.conv.bias"));
      emit(tag + ".mixer", h);
      x = AddScaled(h, x, F32(f, bp + "gamma"));
      emit(tag + ".mixer_res", x);
      h = RmsNorm(x, F32(f, bp + "ffn_norm.weight"));
      emit(tag + ".ffn_norm", h);
      const W8 w1 = Weight(f, bp + "ffn.linear1.weight"), w2 = Weight(f, bp + "ffn.linear2.weight");
      h = MulMatAdd(w1.q, w1.scale, w1.ne[0], w1.ne[1], h, F32(f, bp + "ffn.linear1.bias"), true);
      h = MulMatAdd(w2.q, w2.scale, w2.ne[0], w2.ne[1], h, F32(f, bp + "ffn.linear2.bias"), false);
      emit(tag + ".ffn", h);
      x = AddScaled(h, x, F32(f, bp + "ffn_gamma"));
      emit(tag + ".ffn_res", x);
    }
    xt = Permute(x);
  }
  x = Conv(xt, Weight(f, P + ".head.conv.conv.weight"), F32(f, P + ".head.conv.conv.bias"), 1);
  emit("head", x);
  const std::string cp = P + "_connector.";
  const W8 c1 = Weight(f, cp + "fc1.weight"), c2 = Weight(f, cp + "fc2.weight");
  x = MulMatAdd(c1.q, c1.scale, c1.ne[0], c1.ne[1], x, F32(f, cp + "fc1.bias"), false);
  emit("conn.fc1", x);
  x = RmsNorm(x, F32(f, cp + "norm.weight"));
  emit("conn.norm", x);
  x = MulMatAdd(c2.q, c2.scale, c2.ne[0], c2.ne[1], x, F32(f, cp + "fc2.bias"), false);
  emit("conn.fc2", x);
  return x;
}

}  // namespace tern::vibeasr::ref
