#include "models/vibeasr/encoder.h"

#include <algorithm>
#include <future>
#include <optional>
#include <thread>

#include "base/check.h"
#include "base/huge_buffer.h"
#include "base/timer.h"

namespace tern::vibeasr {

namespace {

constexpr float kNormEps = 1e-5f;  // every encoder RMSNorm, connector included (spec 3.6)
constexpr const char* kPrefixes[2] = {"acoustic", "semantic"};

size_t Align64(size_t n) { return (n + 63) & ~size_t{63}; }

struct BlockModel {
  const float *norm, *mixer_b, *gamma, *ffn_norm, *fc1_b, *fc2_b, *ffn_gamma;
  ops::I8sDepthwise mixer;
  ops::I8sMatrix fc1, fc2;
};

struct StageModel {
  ops::I8sConv1d down;
  const float* down_b;
  std::vector<BlockModel> blocks;
};

// Linear layers and convs take unsigned activations where the ISA can (ops::PackI8sMatrix):
// FC2 reads the ReLU hidden as it is, the others their input flipped in the kernel, with no
// activation row sums (at the narrow early stages those cost a large share of each product).
ops::I8sMatrix PackLinear(const gguf::TensorInfo& t) {
  return ops::PackI8sMatrix(I8sWeightData(t), t.ne[0], t.ne[1], I8sWeightScale(t),
                            /*u8=*/true);
}

// A causal conv from a stored {K, IC, OC} weight: left pad K - stride, right pad 0.
ops::I8sConv1d PackCausalConv(const gguf::TensorInfo& t, int64_t stride) {
  return ops::PackConv1d(I8sWeightData(t), t.ne[0], t.ne[1], t.ne[2], I8sWeightScale(t), stride,
                         t.ne[0] - stride, 0, /*u8=*/true);
}

}  // namespace

struct Encoder::BranchModel {
  VaeGeometry geo;
  std::vector<StageModel> stages;
  ops::I8sConv1d head;
  const float* head_b = nullptr;
  ops::I8sMatrix fc1, fc2;
  const float *fc1_b = nullptr, *norm = nullptr, *fc2_b = nullptr;
};

Encoder::~Encoder() = default;

namespace {

// One branch's weights: read its geometry, bind and check its tensors, pack them.
Result<std::unique_ptr<Encoder::BranchModel>> LoadBranch(const gguf::File& file,
                                                         const char* prefix) {
  TERN_ASSIGN_OR_RETURN(VaeGeometry geo, ReadVaeGeometry(file, prefix));
  TERN_ASSIGN_OR_RETURN(VaeBranchTensors t, BindVaeBranch(file, geo));
  auto m = std::make_unique<Encoder::BranchModel>();
  // Check, pack and release one I8_S tensor at a time: the mapped original leaves the
  // process once its packed copy exists, so the weights are resident once, not twice
  // (~700 MB for the published file), also during Load.
  auto linear = [&](const gguf::TensorInfo& w, ops::I8sMatrix* out) {
    TERN_RETURN_IF_ERROR(CheckI8sWeightValues(file, w));
    *out = PackLinear(w);
    file.ReleasePages(w);
    return Status::Ok();
  };
  auto conv = [&](const gguf::TensorInfo& w, int64_t stride, ops::I8sConv1d* out) {
    TERN_RETURN_IF_ERROR(CheckI8sWeightValues(file, w));
    *out = PackCausalConv(w, stride);
    file.ReleasePages(w);
    return Status::Ok();
  };
  for (int s = 0; s < geo.stages(); ++s) {
    const VaeStageTensors& st = t.stages[s];
    StageModel sm;
    TERN_RETURN_IF_ERROR(conv(*st.down_w, geo.strides[s], &sm.down));
    sm.down_b = F32Data(*st.down_b);
    for (const VaeBlockTensors& bt : st.blocks) {
      BlockModel bm;
      bm.norm = F32Data(*bt.norm);
      TERN_RETURN_IF_ERROR(CheckI8sWeightValues(file, *bt.mixer_w));
      bm.mixer = ops::PackDepthwise(I8sWeightData(*bt.mixer_w), bt.mixer_w->ne[0],
                                    bt.mixer_w->ne[2], I8sWeightScale(*bt.mixer_w));
      file.ReleasePages(*bt.mixer_w);
      bm.mixer_b = F32Data(*bt.mixer_b);
      bm.gamma = F32Data(*bt.gamma);
      bm.ffn_norm = F32Data(*bt.ffn_norm);
      TERN_RETURN_IF_ERROR(linear(*bt.fc1_w, &bm.fc1));
      bm.fc1_b = F32Data(*bt.fc1_b);
      TERN_RETURN_IF_ERROR(linear(*bt.fc2_w, &bm.fc2));
      bm.fc2_b = F32Data(*bt.fc2_b);
      bm.ffn_gamma = F32Data(*bt.ffn_gamma);
      sm.blocks.push_back(std::move(bm));
    }
    m->stages.push_back(std::move(sm));
  }
  TERN_RETURN_IF_ERROR(conv(*t.head_w, 1, &m->head));
  m->head_b = F32Data(*t.head_b);
  TERN_RETURN_IF_ERROR(linear(*t.conn_fc1_w, &m->fc1));
  m->fc1_b = F32Data(*t.conn_fc1_b);
  m->norm = F32Data(*t.conn_norm);
  TERN_RETURN_IF_ERROR(linear(*t.conn_fc2_w, &m->fc2));
  m->fc2_b = F32Data(*t.conn_fc2_b);
  m->geo = std::move(geo);
  return m;
}

}  // namespace

Result<std::unique_ptr<Encoder>> Encoder::Load(const std::string& path) {
  TERN_ASSIGN_OR_RETURN(std::unique_ptr<gguf::File> file, gguf::File::Open(path));
  if (file->Find("general.architecture") != nullptr) {
    TERN_ASSIGN_OR_RETURN(std::string arch, file->GetString("general.architecture"));
    if (arch != "vibeasr-vae")
      return FormatError("%s: general.architecture is '%s', expected 'vibeasr-vae'", path.c_str(),
                         arch.c_str());
  }
  std::unique_ptr<Encoder> enc(new Encoder());
  // The semantic branch loads on a second thread where there is a second CPU: loading is
  // packing and first-touching ~700 MB, and the branches share nothing (the file is only
  // read; each releases the pages of its own tensors).
  const bool side_by_side = std::thread::hardware_concurrency() > 1;
  std::future<Result<std::unique_ptr<BranchModel>>> semantic;
  if (side_by_side)
    semantic = std::async(std::launch::async, [&] { return LoadBranch(*file, kPrefixes[1]); });
  Result<std::unique_ptr<BranchModel>> acoustic = LoadBranch(*file, kPrefixes[0]);
  Result<std::unique_ptr<BranchModel>> second =
      side_by_side ? semantic.get() : LoadBranch(*file, kPrefixes[1]);
  if (!acoustic.ok()) return acoustic.status();
  if (!second.ok()) return second.status();
  enc->branches_[0] = std::move(*acoustic);
  enc->branches_[1] = std::move(*second);
  if (enc->branches_[0]->geo.hidden != enc->branches_[1]->geo.hidden)
    return FormatError("%s: acoustic connector width %lld differs from semantic %lld", path.c_str(),
                       static_cast<long long>(enc->branches_[0]->geo.hidden),
                       static_cast<long long>(enc->branches_[1]->geo.hidden));
  enc->file_ = std::move(file);
  return enc;
}

int64_t Encoder::hidden() const { return branches_[0]->geo.hidden; }

const VaeGeometry& Encoder::geometry(Branch b) const { return branches_[static_cast<int>(b)]->geo; }

int64_t Encoder::FramesFor(size_t n_samples) {
  int64_t t = static_cast<int64_t>(n_samples);
  for (int64_t s : {1, 2, 2, 4, 5, 5, 8}) t = ops::Conv1dOutLen(t, s, s, 0, 0);
  return t;  // the head conv has stride 1 and left pad K-1: the length is unchanged
}

namespace {

// Buffer sizes for one branch and n samples, walking the geometry exactly as the run does.
struct Plan {
  int64_t i8 = 0;      // each of the three int8 ping-pong buffers
  size_t scratch = 0;  // floats / MLP scratch / conv edge columns
  int64_t rows = 0;    // RMSNorm per-row factors
};

void PlanConv(const ops::I8sConv1d& c, int64_t* t, Plan* p) {
  const ops::Conv1dScratch cs = ops::Conv1dScratchBytes(c, *t);
  *t = ops::Conv1dOutLen(*t, c.kernel, c.stride, c.lp, c.rp);
  p->scratch = std::max(p->scratch, Align64(cs.y_bytes) + cs.col_bytes);
  p->i8 = std::max(p->i8, *t * c.out_ch);
}

// FFN hidden sums: recompute or store (ops::MlpReluI8s)? Recomputing costs C more
// multiply-adds per hidden value; storing costs 4 bytes written and read back, from DRAM
// once the tensor leaves the caches. Narrow FFNs (few multiply-adds per value) recompute
// faster than they store, and storing stops paying at any width once the sums outgrow the
// caches (memory bandwidth is shared with the other branch); encoder_ops_microbench BmFfn
// compares the two. So FFNs up to C = 128 always recompute, and wider ones store up to the
// budget.
size_t MlpBudget(int64_t c) { return c <= 128 ? 0 : Encoder::kMlpStoreBudget; }

Plan MakePlan(const Encoder::BranchModel& m, size_t n, int n_threads) {
  Plan plan;
  plan.i8 = static_cast<int64_t>(n);
  int64_t t = plan.i8;
  for (const StageModel& st : m.stages) {
    PlanConv(st.down, &t, &plan);
    plan.rows = std::max(plan.rows, t);
    // A depthwise conv of other than 8 taps keeps its float values in the scratch too.
    plan.scratch = std::max(plan.scratch, static_cast<size_t>(t * st.down.out_ch) * sizeof(float));
    for (const BlockModel& b : st.blocks)
      plan.scratch = std::max(
          plan.scratch,
          ops::MlpScratchBytes(t, st.down.out_ch, b.fc1.n, n_threads, MlpBudget(st.down.out_ch))
              .bytes);
  }
  PlanConv(m.head, &t, &plan);
  plan.i8 = std::max(plan.i8, t * m.geo.hidden);
  plan.scratch = std::max(plan.scratch, static_cast<size_t>(t * m.geo.hidden) * sizeof(float));
  plan.rows = std::max(plan.rows, t);
  return plan;
}

// Layout of a run buffer: scratch | rows | three int8 buffers.
size_t PlanBytes(const Plan& p) {
  return Align64(p.scratch) + Align64(static_cast<size_t>(p.rows) * sizeof(float)) +
         3 * Align64(static_cast<size_t>(p.i8));
}

}  // namespace

// A HugeBuffer: with 4 KB pages, page faults are a visible part of a short encode.
struct Encoder::Workspace {
  HugeBuffer buffer;
};

Encoder::Scratch::Scratch(size_t keep_bytes) : keep_bytes_(keep_bytes) {}
Encoder::Scratch::~Scratch() = default;

ThreadPool& Encoder::Scratch::BranchPool(int b, int threads) {
  if (!pools_[b] || pools_[b]->size() != threads) pools_[b] = std::make_unique<ThreadPool>(threads);
  return *pools_[b];
}

size_t Encoder::Scratch::bytes() const {
  size_t b = 0;
  for (const auto& w : ws_) b += w ? w->buffer.size() : 0;
  return b;
}

Status Encoder::Reserve(Workspace* ws, size_t bytes, size_t n) {
  if (ws->buffer.size() >= bytes) return Status::Ok();
  ws->buffer = HugeBuffer::Allocate(bytes);
  if (ws->buffer.size() != bytes)
    return ResourceExhaustedError("encoder: cannot allocate %zu MB of activations for %zu samples",
                                  bytes >> 20, n);
  return Status::Ok();
}

Result<Features> Encoder::RunBranch(Branch which, const float* samples, size_t n, ThreadPool& pool,
                                    const StageHook* hook, EncoderTimings* timings) const {
  Workspace ws;
  return RunBranchIn(which, samples, n, pool, hook, timings, &ws);
}

Result<Features> Encoder::RunBranchIn(Branch which, const float* samples, size_t n,
                                      ThreadPool& pool, const StageHook* hook,
                                      EncoderTimings* timings, Workspace* ws) const {
  if (samples == nullptr || n == 0) return InvalidArgumentError("encoder: empty audio (0 samples)");
  const BranchModel& m = *branches_[static_cast<int>(which)];
  const std::string name = kPrefixes[static_cast<int>(which)];
  const Plan plan = MakePlan(m, n, pool.size());
  TERN_RETURN_IF_ERROR(Reserve(ws, PlanBytes(plan), n));
  const size_t i8_bytes = Align64(static_cast<size_t>(plan.i8));
  const size_t scratch_bytes = Align64(plan.scratch);
  const size_t rows_bytes = Align64(static_cast<size_t>(plan.rows) * sizeof(float));
  uint8_t* base = ws->buffer.data();
  auto* scratch = reinterpret_cast<float*>(base);
  auto* rows = reinterpret_cast<float*>(base + scratch_bytes);
  auto* i8 = reinterpret_cast<int8_t*>(base + scratch_bytes + rows_bytes);
  int8_t* bufs[3] = {i8, i8 + i8_bytes, i8 + 2 * i8_bytes};
  float* yf = scratch;
  auto* cols = reinterpret_cast<int8_t*>(scratch);  // offset set per conv below
  auto emit = [&](const std::string& step, const ops::I8sTensor& x) {
    if (hook) (*hook)(step, x);
  };
  Timer total, stage_timer;
  auto lap = [&](const std::string& step) {
    if (timings) timings->stages.emplace_back(name + "." + step, stage_timer.ElapsedMs());
    stage_timer.Reset();
  };

  int cur = 0;
  ops::I8sTensor x{bufs[cur]};
  ops::QuantizeSignal(pool, samples, static_cast<int64_t>(n), &x);
  emit("input", x);
  auto conv = [&](const ops::I8sConv1d& c, const float* bias, const std::string& step) {
    const int nxt = (cur + 1) % 3;
    ops::I8sTensor y{bufs[nxt]};
    const size_t y_bytes = Align64(ops::Conv1dScratchBytes(c, x.ne1 * x.ne0 / c.in_ch).y_bytes);
    ops::Conv1dAdd(pool, c, bias, x, yf, cols + y_bytes, &y);
    x = y;
    cur = nxt;
    emit(step, x);
  };

  for (int s = 0; s < m.geo.stages(); ++s) {
    const StageModel& st = m.stages[s];
    // Not "s" + std::to_string(s): gcc 12 warns about it (-Wrestrict, a false positive).
    const std::string sp = std::string("s").append(std::to_string(s));
    conv(st.down, st.down_b, sp + ".conv");
    ops::I8sTensor h{bufs[(cur + 1) % 3]}, d{bufs[(cur + 2) % 3]};
    for (size_t b = 0; b < st.blocks.size(); ++b) {
      const BlockModel& bm = st.blocks[b];
      const std::string bp = sp + ".b" + std::to_string(b);
      // RMSNorm and add_scaled recompute their few flops per value in the second pass
      // (null scratch) rather than store floats: at stages 0-2 (10 MB of floats per op)
      // that halves them. The 8-tap depthwise conv recomputes integer sums on its own; other
      // kernel sizes store floats in the scratch.
      ops::RmsNormScaled(pool, x, bm.norm, kNormEps, rows, &h, nullptr);
      emit(bp + ".norm", h);
      ops::DepthwiseConvAdd(pool, bm.mixer, bm.mixer_b, h, &d, yf);
      emit(bp + ".mixer", d);
      ops::AddScaled(pool, d, x, bm.gamma, &x, nullptr);
      emit(bp + ".mixer_res", x);
      ops::RmsNormScaled(pool, x, bm.ffn_norm, kNormEps, rows, &h, nullptr);
      emit(bp + ".ffn_norm", h);
      ops::MlpReluI8s(pool, bm.fc1, bm.fc1_b, bm.fc2, bm.fc2_b, h, MlpBudget(h.ne0), scratch,
                      plan.scratch, &d);
      emit(bp + ".ffn", d);
      ops::AddScaled(pool, d, x, bm.ffn_gamma, &x, nullptr);
      emit(bp + ".ffn_res", x);
    }
    lap(sp);
  }
  conv(m.head, m.head_b, "head");

  // Connector: fc1 -> RMSNorm -> fc2, no activation.
  ops::I8sTensor c1{bufs[(cur + 1) % 3]}, c2{bufs[(cur + 2) % 3]};
  ops::MulMatAdd(pool, m.fc1, m.fc1_b, x, /*relu=*/false, yf, &c1);
  emit("conn.fc1", c1);
  ops::RmsNormScaled(pool, c1, m.norm, kNormEps, rows, &c2, yf);
  emit("conn.norm", c2);
  ops::MulMatAdd(pool, m.fc2, m.fc2_b, c2, /*relu=*/false, yf, &c1);
  emit("conn.fc2", c1);
  lap("head+connector");

  Features f;
  f.frames = c1.ne1;
  f.hidden = c1.ne0;
  f.data.resize(static_cast<size_t>(c1.size()));
  ops::DequantizeI8s(c1, f.data.data());
  if (timings) {
    (which == Branch::kAcoustic ? timings->acoustic_ms : timings->semantic_ms) += total.ElapsedMs();
  }
  return f;
}

namespace {

// The one buffer of a run with the branches in turn on `threads` threads: the larger plan.
size_t InTurnBytes(const std::unique_ptr<Encoder::BranchModel> (&branches)[2], size_t n,
                   int threads) {
  return std::max(PlanBytes(MakePlan(*branches[0], n, threads)),
                  PlanBytes(MakePlan(*branches[1], n, threads)));
}

}  // namespace

std::vector<std::string> Encoder::StepNames(Branch which) const {
  const VaeGeometry& g = branches_[static_cast<int>(which)]->geo;
  std::vector<std::string> names = {"input"};
  for (int s = 0; s < g.stages(); ++s) {
    const std::string sp = std::string("s").append(std::to_string(s));
    names.push_back(sp + ".conv");
    for (int64_t b = 0; b < g.depths[s]; ++b)
      for (const char* step : {".norm", ".mixer", ".mixer_res", ".ffn_norm", ".ffn", ".ffn_res"})
        names.push_back(sp + ".b" + std::to_string(b) + step);
  }
  for (const char* step : {"head", "conn.fc1", "conn.norm", "conn.fc2"}) names.push_back(step);
  return names;
}

size_t Encoder::WorkspaceBytes(size_t n) const { return InTurnBytes(branches_, n, 1); }

Result<Features> Encoder::Run(const float* samples, size_t n, ThreadPool& pool,
                              EncoderTimings* timings, Scratch* scratch) const {
  if (samples == nullptr || n == 0) return InvalidArgumentError("encoder: empty audio (0 samples)");
  Scratch own;
  if (scratch == nullptr) scratch = &own;
  for (auto& w : scratch->ws_)
    if (!w) w = std::make_unique<Workspace>();
  // With two or more threads the branches run at the same time, each on its own share of
  // the threads: they are independent until the final sum, and two single-thread branches
  // never wait for each other, where one branch on two threads meets a barrier after every
  // op. Each needs its own buffers, so this
  // is done only while both fit kParallelBudget; longer clips run the branches in turn on
  // all threads, in one buffer sized for the larger.
  const int nth = pool.size();
  const int share[2] = {(nth + 1) / 2, nth / 2};
  const size_t both = PlanBytes(MakePlan(*branches_[0], n, share[0])) +
                      PlanBytes(MakePlan(*branches_[1], n, share[1]));
  std::optional<Result<Features>> out[2];
  EncoderTimings bt[2];
  if (nth >= 2 && both <= kParallelBudget) {
    ThreadPool* sub[2] = {&scratch->BranchPool(0, share[0]), &scratch->BranchPool(1, share[1])};
    pool.Run([&](int tid, int) {
      if (tid > 1) return;
      out[tid] = RunBranchIn(static_cast<Branch>(tid), samples, n, *sub[tid], nullptr, &bt[tid],
                             scratch->ws_[tid].get());
    });
  } else {
    Workspace* ws = scratch->ws_[0].get();
    TERN_RETURN_IF_ERROR(Reserve(ws, InTurnBytes(branches_, n, nth), n));
    for (int b = 0; b < 2; ++b)
      out[b] = RunBranchIn(static_cast<Branch>(b), samples, n, pool, nullptr, &bt[b], ws);
  }
  if (scratch->bytes() > scratch->keep_bytes_)
    for (auto& w : scratch->ws_) w.reset();
  for (int b = 0; b < 2; ++b) TERN_RETURN_IF_ERROR(out[b]->status());
  if (timings) {
    timings->acoustic_ms += bt[0].acoustic_ms;
    timings->semantic_ms += bt[1].semantic_ms;
    for (const EncoderTimings& t : bt)
      timings->stages.insert(timings->stages.end(), t.stages.begin(), t.stages.end());
  }
  Features a = std::move(*out[0]).value();
  const Features& s = out[1]->value();
  TERN_CHECK(a.hidden == s.hidden);
  // Upstream feeds min(acoustic, semantic) frames (spec 3.7); equal with equal strides.
  a.frames = std::min(a.frames, s.frames);
  a.data.resize(static_cast<size_t>(a.frames * a.hidden));
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] += s.data[i];
  return a;
}

}  // namespace tern::vibeasr
