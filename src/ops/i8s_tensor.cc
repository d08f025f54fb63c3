#include "ops/i8s_tensor.h"

#include <algorithm>
#include <cmath>
#include <new>

#include "base/check.h"
#include "kernels/kernels.h"
#include "ops/i8s_internal.h"

namespace tern::ops {

using i8s_detail::AbsF;
using i8s_detail::AtomicAbsMax;

I8sMatrix PackI8sMatrix(const int8_t* rows, int64_t k, int64_t n, float scale, bool u8) {
  const kernels::KernelTable& kt = kernels::Kernels();
  I8sMatrix m;
  m.k = k;
  m.n = n;
  m.scale = scale;
  // Sums of k terms of 255 * 128 stay in int32 below k = 65536 (the encoder's widest: 16384,
  // the stage-6 conv).
  m.u8 = u8 && kt.gemm_u8_i8 != nullptr && k <= 65536;
  const size_t bytes = kt.i8_packed_bytes(k, n);
  m.packed = HugeBuffer::Allocate(bytes);
  if (m.packed.size() != bytes) throw std::bad_alloc();  // as the std::vector it replaced
  (m.u8 ? kt.pack_u8_i8 : kt.pack_i8)(rows, k, n, m.packed.data());
  if (m.u8) {
    // |128 * sum| <= 2^14 * k: int32 for k < 2^17. The sum is a local: accumulated in
    // m.corr[r] it was reloaded and stored every term, since the int8 rows may alias it.
    m.corr.resize(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) {
      const int8_t* row = rows + r * k;
      int32_t sum = 0;
      for (int64_t i = 0; i < k; ++i) sum += row[i];
      m.corr[r] = 128 * sum;
    }
  }
  return m;
}

void QuantizeSignal(ThreadPool& pool, const float* x, int64_t n, I8sTensor* out) {
  TERN_CHECK(n >= 0 && (n == 0 || out->q != nullptr));
  // Pass 1: amax. Pass 2: quantize. Both split the same way; max is order independent.
  AtomicAbsMax amax;
  pool.ParallelFor(n, 4096, [&](int64_t b, int64_t e) {
    float m = 0;
    for (int64_t i = b; i < e; ++i) m = std::max(m, AbsF(x[i]));
    amax.Update(m);
  });
  const float a = std::max(1e-5f, amax.Get());
  const float s = 127.0f / a;
  pool.ParallelFor(n, 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int v = static_cast<int>(std::roundf(x[i] * s));
      out->q[i] = static_cast<int8_t>(std::clamp(v, -128, 127));
    }
  });
  out->ne0 = n;
  out->ne1 = 1;
  out->scale = 1.0f / s;
}

void DequantizeI8s(const I8sTensor& x, float* out) {
  const int64_t n = x.size();
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(x.q[i]) * x.scale;
}

void TransposeI8s(ThreadPool& pool, const I8sTensor& x, I8sTensor* out) {
  TERN_CHECK(out->q != x.q || x.size() == 0);
  const int64_t n0 = x.ne0, n1 = x.ne1;
  constexpr int64_t kB = 32;  // cache blocking: a 32x32 byte tile per step
  // Split the output rows (input columns) across threads.
  pool.ParallelFor(n0, kB, [&](int64_t c0, int64_t c1) {
    for (int64_t r0 = 0; r0 < n1; r0 += kB) {
      const int64_t r1 = std::min(n1, r0 + kB);
      for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < r1; ++r) out->q[c * n1 + r] = x.q[r * n0 + c];
    }
  });
  out->ne0 = n1;
  out->ne1 = n0;
  out->scale = x.scale;
}

int64_t Conv1dOutLen(int64_t in_len, int64_t kernel, int64_t stride, int64_t lp, int64_t rp) {
  TERN_CHECK(stride >= 1 && kernel >= 1);
  const int64_t num = in_len + lp + rp - kernel;
  const int64_t ow = num / stride + 1;  // C truncation toward zero, as ggml
  return ow > 0 ? ow : 0;
}

void Im2colAsym(ThreadPool& pool, const I8sTensor& x, int64_t kernel, int64_t stride, int64_t lp,
                int64_t rp, I8sTensor* out) {
  const int64_t iw = x.ne0, ch = x.ne1;
  const int64_t ow = Conv1dOutLen(iw, kernel, stride, lp, rp);
  const int64_t col = ch * kernel;
  pool.ParallelFor(ow, 16, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int8_t* dst = out->q + t * col;
      for (int64_t c = 0; c < ch; ++c) {
        const int8_t* src = x.q + c * iw;
        for (int64_t k = 0; k < kernel; ++k) {
          const int64_t i = t * stride + k - lp;
          dst[c * kernel + k] = (i >= 0 && i < iw) ? src[i] : 0;
        }
      }
    }
  });
  out->ne0 = col;
  out->ne1 = ow;
  out->scale = x.scale;
}

}  // namespace tern::ops
