// The VibeASR audio encoder: two int8 "VAE" tokenizer encoders (acoustic, semantic) and their
// connectors, summed into one feature vector per 3200 samples (spec 3).
//
// Per branch (spec 3.3; every activation is I8_S, channel-major {C, T}):
//   x = quantize(waveform)                                     one scale for the whole clip
//   for each stage s: x = conv_s(x)   causal, stride s, left pad K-stride, right pad 0
//                     depth(s) x ConvNeXt block:
//                       h = rms_norm(x, 1e-5); h = depthwise(h); x = add_scaled(h, x, gamma)
//                       h = rms_norm(x, 1e-5); h = fc2(relu(fc1(h))); x = add_scaled(h, x, ffn_gamma)
//   x = head(x)                        causal conv to D, stride 1
//   y = fc2(rms_norm(fc1(x), 1e-5))    the connector (1e-5, not the file's 1e-6: spec 3.6)
//   features = dequant(acoustic) + dequant(semantic)      float, frames x hidden, row-major
//
// Memory: one branch at a time (with 2+ threads and a clip below ~34 s, the two branches at
// once, each in its own buffers: kParallelBudget), stage by stage, in three int8 ping-pong
// buffers plus one scratch region, all sized from the geometry and the clip length before
// the run (linear in the length); no graph is kept. FFN hidden activations are recomputed
// instead of stored unless small (ops::MlpReluI8s). So the packed weights are resident once
// and a run adds buffers linear in the clip length (WorkspaceBytes).
//
// The Encoder is immutable after Load; Run may be called from several threads at once, each
// with its own pool. Results are byte-identical for any thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"
#include "models/vibeasr/vae_weights.h"
#include "ops/i8s_elementwise.h"
#include "ops/i8s_matmul.h"
#include "ops/i8s_tensor.h"
#include "runtime/thread_pool.h"
#include "tern/types.h"

namespace tern::vibeasr {

// Frames x hidden, row-major: the public type (tern/types.h), returned as it is.
using tern::Features;

struct EncoderTimings {
  double acoustic_ms = 0, semantic_ms = 0;
  std::vector<std::pair<std::string, double>> stages;  // "acoustic.s0", ..., "semantic.connector"
};

enum class Branch { kAcoustic = 0, kSemantic = 1 };

class Encoder {
  struct Workspace;  // one branch's run buffer (encoder.cc)

 public:
  // Checks and packs both branches, side by side on two threads where the machine has two
  // CPUs (the result does not depend on it); an error names the file and tensor, and with
  // both branches at fault it is the acoustic branch's.
  static Result<std::unique_ptr<Encoder>> Load(const std::string& vae_gguf_path);

  // What a caller keeps between runs (a Session does): the activation buffers, so that a
  // run that fits the buffers of an earlier one reuses them instead of faulting fresh pages
  // in, and the two branches' thread pools, so that their threads start once, not on every
  // run. Buffers larger than `keep_bytes` in all are released after the run that needed
  // them; the pools stay (idle workers sleep).
  static constexpr size_t kScratchKeepBytes = size_t{256} << 20;
  class Scratch {
   public:
    explicit Scratch(size_t keep_bytes = kScratchKeepBytes);
    ~Scratch();
    size_t bytes() const;  // buffers held now

   private:
    friend class Encoder;
    // The pool for branch b with `threads` threads, made on first use or when the size
    // changes (a different outer pool).
    ThreadPool& BranchPool(int b, int threads);
    size_t keep_bytes_;
    std::unique_ptr<Workspace> ws_[2];      // one per branch running at the same time
    std::unique_ptr<ThreadPool> pools_[2];  // likewise
  };

  // Both branches, summed. Errors on empty input. `scratch` may be null (buffers for this
  // run only).
  Result<Features> Run(const float* samples_24k, size_t n, ThreadPool& pool,
                       EncoderTimings* timings = nullptr, Scratch* scratch = nullptr) const;

  // Diagnostics and tests: one branch, dequantized, calling `hook` after every op with its
  // output (channel-major {C, T}). Step names: "input", "s<i>.conv", "s<i>.b<j>.norm",
  // ".mixer", ".mixer_res", ".ffn_norm", ".ffn", ".ffn_res", "head", "conn.fc1",
  // "conn.norm", "conn.fc2".
  using StageHook = std::function<void(const std::string& step, const ops::I8sTensor& x)>;
  // The step names RunBranch passes to its hook for branch `b`, in order (from the geometry,
  // so callers can check a name before running anything).
  std::vector<std::string> StepNames(Branch b) const;
  Result<Features> RunBranch(Branch b, const float* samples_24k, size_t n, ThreadPool& pool,
                             const StageHook* hook = nullptr,
                             EncoderTimings* timings = nullptr) const;

  // The activation buffer Run allocates for n samples on one thread (the branches run in
  // turn in one buffer sized for the larger): linear in n. Callers bound memory with it.
  size_t WorkspaceBytes(size_t n_samples) const;

  int64_t hidden() const;
  const VaeGeometry& geometry(Branch b) const;
  // Frames for n samples with the published strides: floor(n/3200) for n >= 3200, 1 for
  // 0 < n < 3200, 0 for n = 0 (spec 3.1).
  static int64_t FramesFor(size_t n_samples);

  // FFN activations larger than this are recomputed rather than stored (ops::MlpReluI8s).
  static constexpr size_t kMlpStoreBudget = size_t{64} << 20;

  // With 2+ threads Run gives each branch half of them and runs the two at once, while
  // both branches' buffers together stay within this (at the published geometry, clips up
  // to about half a minute; longer ones run the branches in turn, in one buffer).
  static constexpr size_t kParallelBudget = size_t{400} << 20;

  ~Encoder();

  struct BranchModel;  // the packed weights of one branch (encoder.cc)

 private:
  Encoder() = default;
  static Status Reserve(Workspace* ws, size_t bytes, size_t n);
  Result<Features> RunBranchIn(Branch b, const float* samples_24k, size_t n, ThreadPool& pool,
                               const StageHook* hook, EncoderTimings* timings, Workspace* ws) const;
  std::unique_ptr<gguf::File> file_;  // F32 biases and norms point into the mapping
  std::unique_ptr<BranchModel> branches_[2];
};

}  // namespace tern::vibeasr
