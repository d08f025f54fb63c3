#include "models/vibeasr/lm_weights.h"

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>

#include "kernels/kernels.h"
#include "tensor/quant_ref.h"

namespace tern::vibeasr {
namespace {

std::string ShapeString(const int64_t* ne, int n_dims) {
  std::string s = "{";
  for (int i = 0; i < n_dims; ++i) {
    if (i) s += ", ";
    s += std::to_string(ne[i]);
  }
  return s + "}";
}

std::string TypeList(std::initializer_list<DType> types) {
  std::string s;
  for (DType t : types) {
    if (!s.empty()) s += " or ";
    s += DTypeName(t);
  }
  return s;
}

struct PackJob {
  const gguf::TensorInfo* t;
  ops::I2SMatrix* m;  // k and n set; packed filled in by PackAll
};

// Packs every queued matrix for the active kernel table into one buffer, in the order the
// forward pass reads them (so a decode step streams the projections as one run of huge
// pages), one matrix per task (threaded when a pool is given; the packing of a matrix does
// not depend on which thread runs it), and drops each mapped original once its packed copy
// exists, so the projections are resident once, not twice (~330 MB for the published file),
// also during Load.
Status PackAll(const gguf::File& f, const std::vector<PackJob>& jobs, ThreadPool* pool,
               HugeBuffer* arena) {
  std::vector<size_t> offset(jobs.size() + 1, 0);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const size_t bytes = ops::I2SPackedBytes(jobs[i].m->k, jobs[i].m->n);
    offset[i + 1] = offset[i] + (bytes + 63) / 64 * 64;  // each matrix on a cache line
  }
  *arena = HugeBuffer::Allocate(offset.back());
  if (arena->size() != offset.back()) {
    return ResourceExhaustedError("%s: cannot allocate %zu MB for the packed I2_S projections",
                                  f.path().c_str(), offset.back() >> 20);
  }
  auto run = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const PackJob& j = jobs[i];
      uint8_t* packed = arena->data() + offset[i];
      ops::PackI2S(j.t->data, j.m->k, j.m->n, packed);
      j.m->packed = packed;
      f.ReleasePages(*j.t);
    }
  };
  if (pool) {
    pool->ParallelFor(static_cast<int64_t>(jobs.size()), 1, run);
  } else {
    run(0, static_cast<int64_t>(jobs.size()));
  }
  return Status::Ok();
}

// Looks tensors up and checks them against what the table expects.
class Binder {
 public:
  explicit Binder(const gguf::File& f) : f_(f) {}

  // The tensor `name` with one of `types` and logical shape {ne0, ne1} (ne1 = 0: a vector
  // of ne0, also accepted as {ne0, 1}). Null with OK status when optional and absent.
  Result<const gguf::TensorInfo*> Get(const std::string& name, std::initializer_list<DType> types,
                                      int64_t ne0, int64_t ne1, bool optional = false) const {
    const gguf::TensorInfo* t = f_.FindTensor(name);
    if (!t) {
      if (optional) return static_cast<const gguf::TensorInfo*>(nullptr);
      return NotFoundError("%s: missing tensor '%s'", f_.path().c_str(), name.c_str());
    }
    bool type_ok = false;
    for (DType d : types) type_ok |= (t->type == d);
    if (!type_ok) {
      return FormatError("%s: tensor '%s': expected %s, got %s", f_.path().c_str(), name.c_str(),
                         TypeList(types).c_str(), DTypeName(t->type));
    }
    const int64_t want[2] = {ne0, ne1 == 0 ? 1 : ne1};
    bool shape_ok = t->ne[0] == want[0] && t->ne[1] == want[1];
    for (int i = 2; i < 4; ++i) shape_ok &= (t->ne[i] == 1);
    if (!shape_ok) {
      return FormatError("%s: tensor '%s': expected shape %s, got %s", f_.path().c_str(),
                         name.c_str(), ShapeString(want, ne1 == 0 ? 1 : 2).c_str(),
                         ShapeString(t->ne, t->n_dims).c_str());
    }
    return t;
  }

  Result<const float*> F32(const std::string& name, int64_t n, bool optional = false) const {
    TERN_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, Get(name, {DType::kF32}, n, 0, optional));
    return t ? reinterpret_cast<const float*>(t->data) : nullptr;
  }

  // An I2_S matrix of n rows of k values; its packing is queued in `jobs` (PackAll runs them).
  Status I2S(const std::string& name, int64_t k, int64_t n, ops::I2SMatrix* m,
             std::vector<PackJob>* jobs) const {
    TERN_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, Get(name, {DType::kI2_S}, k, n));
    const float scale = ReadI2SScale(t->data, k * n);
    if (!std::isfinite(scale)) {
      return FormatError("%s: tensor '%s': in-band I2_S scale is not finite", f_.path().c_str(),
                         name.c_str());
    }
    jobs->push_back({t, m});
    m->packed = nullptr;
    m->k = k;
    m->n = n;
    m->scale = scale;
    return Status::Ok();
  }

 private:
  const gguf::File& f_;
};

std::string Blk(int64_t l, const char* suffix) { return "blk." + std::to_string(l) + "." + suffix; }

Status BindLayer(const Binder& b, const DecoderConfig& c, int64_t l, LayerWeights* w,
                 std::vector<PackJob>* jobs) {
  const int64_t h = c.hidden, kv = c.kv_heads * c.head_dim, q = c.heads * c.head_dim;
  TERN_ASSIGN_OR_RETURN(w->attn_norm, b.F32(Blk(l, "attn_norm.weight"), h));
  TERN_RETURN_IF_ERROR(b.I2S(Blk(l, "attn_q.weight"), h, q, &w->wq, jobs));
  TERN_RETURN_IF_ERROR(b.I2S(Blk(l, "attn_k.weight"), h, kv, &w->wk, jobs));
  TERN_RETURN_IF_ERROR(b.I2S(Blk(l, "attn_v.weight"), h, kv, &w->wv, jobs));
  TERN_ASSIGN_OR_RETURN(w->bq, b.F32(Blk(l, "attn_q.bias"), q, /*optional=*/true));
  TERN_ASSIGN_OR_RETURN(w->bk, b.F32(Blk(l, "attn_k.bias"), kv, true));
  TERN_ASSIGN_OR_RETURN(w->bv, b.F32(Blk(l, "attn_v.bias"), kv, true));
  TERN_RETURN_IF_ERROR(b.I2S(Blk(l, "attn_output.weight"), q, h, &w->wo, jobs));
  TERN_ASSIGN_OR_RETURN(w->ffn_norm, b.F32(Blk(l, "ffn_norm.weight"), h));
  TERN_RETURN_IF_ERROR(b.I2S(Blk(l, "ffn_gate.weight"), h, c.ffn, &w->gate, jobs));
  TERN_RETURN_IF_ERROR(b.I2S(Blk(l, "ffn_up.weight"), h, c.ffn, &w->up, jobs));
  TERN_RETURN_IF_ERROR(b.I2S(Blk(l, "ffn_down.weight"), c.ffn, h, &w->down, jobs));
  return Status::Ok();
}

constexpr std::initializer_list<DType> kRowTypes = {DType::kF32, DType::kF16, DType::kQ8_0,
                                                    DType::kQ6_K};

Status BindHead(const gguf::File& f, const Binder& b, const DecoderConfig& c, HeadPrecision mode,
                ThreadPool* pool, LmWeights* w) {
  TERN_ASSIGN_OR_RETURN(const gguf::TensorInfo* out,
                        b.Get("output.weight", kRowTypes, c.hidden, c.vocab, true));
  w->head_tied = (out == nullptr);
  const gguf::TensorInfo* src = out ? out : f.FindTensor("token_embd.weight");
  const std::string name = src->name;
  w->head_mode = mode;
  if (mode == HeadPrecision::kInt8) {
    // A separate head leaves the process block by block as it is quantized (~470 MB of F16
    // for the published file would otherwise stay resident next to its int8 copy); a tied
    // head is the embedding table, which decoding still reads.
    const int64_t row_bytes = RowBytes(src->type, c.hidden);
    ops::RowsConsumed release;
    if (!w->head_tied) {
      release = [&](int64_t r0, int64_t r1) {
        f.ReleasePages(src->data + r0 * row_bytes, static_cast<size_t>((r1 - r0) * row_bytes));
      };
    }
    Result<ops::I8Matrix> m =
        ops::QuantizeWeightsI8(src->type, src->data, c.hidden, c.vocab, pool, release);
    if (!m.ok()) return m.status().WithPrefix(f.path() + ": tensor '" + name + "'");
    w->head_i8 = std::move(m).value();
    return Status::Ok();
  }
  if (src->type == DType::kF16) {
    w->head_f16 = reinterpret_cast<const uint16_t*>(src->data);
    return Status::Ok();
  }
  // kF16 over a non-F16 table (a tied Q6_K embedding): convert the rows once.
  const size_t conv_bytes = static_cast<size_t>(c.vocab * c.hidden) * sizeof(uint16_t);
  w->head_f16_owned = HugeBuffer::Allocate(conv_bytes);
  if (w->head_f16_owned.size() != conv_bytes) {
    return ResourceExhaustedError("%s: cannot allocate %zu MB for the F16 head", f.path().c_str(),
                                  conv_bytes >> 20);
  }
  auto* dst = reinterpret_cast<uint16_t*>(w->head_f16_owned.data());
  const int64_t row_bytes = RowBytes(src->type, c.hidden);
  auto convert = [&](int64_t r0, int64_t r1) {
    std::vector<float> row(static_cast<size_t>(c.hidden));
    for (int64_t r = r0; r < r1; ++r) {
      ops::DequantizeRow(src->type, src->data + r * row_bytes, c.hidden, row.data());
      kernels::Kernels().f32_to_f16(row.data(), c.hidden, dst + r * c.hidden);
    }
  };
  if (pool) {
    pool->ParallelFor(c.vocab, 1, convert);
  } else {
    convert(0, c.vocab);
  }
  w->head_f16 = dst;
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<LmWeights>> LoadLmWeights(const gguf::File& f, const DecoderConfig& c,
                                                 HeadPrecision head, ThreadPool* pool) {
  auto w = std::make_unique<LmWeights>();
  Binder b(f);
  TERN_ASSIGN_OR_RETURN(const gguf::TensorInfo* emb,
                        b.Get("token_embd.weight", kRowTypes, c.hidden, c.vocab));
  w->token_embd = {emb->type, emb->data, c.hidden, c.vocab, RowBytes(emb->type, c.hidden)};
  TERN_ASSIGN_OR_RETURN(w->output_norm, b.F32("output_norm.weight", c.hidden));
  w->layers.resize(static_cast<size_t>(c.layers));
  std::vector<PackJob> jobs;
  for (int64_t l = 0; l < c.layers; ++l) {
    TERN_RETURN_IF_ERROR(BindLayer(b, c, l, &w->layers[l], &jobs));
  }
  // Everything is validated before the expensive part (packing, head conversion) starts.
  TERN_RETURN_IF_ERROR(b.Get("output.weight", kRowTypes, c.hidden, c.vocab, true).status());
  TERN_RETURN_IF_ERROR(PackAll(f, jobs, pool, &w->i2s_packed));
  TERN_RETURN_IF_ERROR(BindHead(f, b, c, head, pool, w.get()));
  return w;
}

}  // namespace tern::vibeasr
