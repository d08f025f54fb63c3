#include "audio/resample.h"

#include <soxr.h>

#include <cmath>

namespace tern::audio {

struct SoxrResampler::State {
  soxr_t soxr = nullptr;
  double ratio = 1;
  ~State() { soxr_delete(soxr); }
};

SoxrResampler::~SoxrResampler() = default;

Result<std::unique_ptr<SoxrResampler>> SoxrResampler::Create(double in_rate, double out_rate) {
  std::unique_ptr<SoxrResampler> r(new SoxrResampler());
  r->s_ = std::make_unique<State>();
  r->s_->ratio = out_rate / in_rate;
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  const soxr_quality_spec_t q = soxr_quality_spec(SOXR_HQ, 0);
  const soxr_runtime_spec_t rt = soxr_runtime_spec(1);  // one thread: deterministic, no OMP
  soxr_error_t err = nullptr;
  r->s_->soxr = soxr_create(in_rate, out_rate, 1, &err, &io, &q, &rt);
  if (err != nullptr || r->s_->soxr == nullptr) {
    return InternalError("soxr: cannot resample %.0f Hz -> %.0f Hz: %s", in_rate, out_rate,
                         err ? err : "unknown error");
  }
  return r;
}

Status SoxrResampler::Push(const float* in, size_t n, std::vector<float>* out) {
  while (n > 0) {
    const size_t room = static_cast<size_t>(std::ceil(static_cast<double>(n) * s_->ratio)) + 64;
    const size_t base = out->size();
    out->resize(base + room);
    size_t idone = 0, odone = 0;
    soxr_error_t err = soxr_process(s_->soxr, in, n, &idone, out->data() + base, room, &odone);
    out->resize(base + odone);
    if (err != nullptr) return InternalError("soxr: %s", err);
    in += idone;
    n -= idone;
  }
  return Status::Ok();
}

Status SoxrResampler::Finish(std::vector<float>* out) {
  // Input NULL = end of stream; drain until soxr has nothing left.
  for (;;) {
    const size_t room = 4096;
    const size_t base = out->size();
    out->resize(base + room);
    size_t odone = 0;
    soxr_error_t err =
        soxr_process(s_->soxr, nullptr, 0, nullptr, out->data() + base, room, &odone);
    out->resize(base + odone);
    if (err != nullptr) return InternalError("soxr: %s", err);
    if (odone == 0) return Status::Ok();
  }
}

std::vector<float> ResampleLinear(const std::vector<float>& in, int in_rate, int out_rate) {
  const double ratio = static_cast<double>(in_rate) / static_cast<double>(out_rate);
  const size_t out_len = static_cast<size_t>(static_cast<double>(in.size()) / ratio);
  std::vector<float> out(out_len);
  for (size_t i = 0; i < out_len; ++i) {
    const double pos = static_cast<double>(i) * ratio;
    const size_t idx = static_cast<size_t>(pos);
    const double frac = pos - static_cast<double>(idx);
    if (idx + 1 < in.size()) {
      out[i] = static_cast<float>((1.0 - frac) * in[idx] + frac * in[idx + 1]);
    } else {
      out[i] = idx < in.size() ? in[idx] : 0.0f;
    }
  }
  return out;
}

}  // namespace tern::audio
