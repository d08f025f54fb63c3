#include "audio/voice_features.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <utility>
#include <vector>

namespace tern::audio {
namespace {

constexpr int kRate = 24000;
constexpr int kWindow = 600, kHop = 240, kFft = 1024, kBins = kFft / 2 + 1;
constexpr int kMel = 40;
constexpr double kMelLowHz = 60.0, kMelHighHz = 8000.0;
constexpr double kFloor = 1e-9;
const double kGate = std::log(1000.0);  // 30 dB of power
// Pitch periods of 75-400 Hz. The zero padding keeps lags up to kFft - kWindow (424) free of
// the circular transform's wrap-around.
constexpr int kLagMin = 60, kLagMax = 320;
static_assert(kLagMax <= kFft - kWindow);
constexpr double kVoiced = 0.5;  // normalized autocorrelation peak of a voiced frame
constexpr int kMinVoiced = 3;
const double kUnvoicedLogPitch = std::log(150.0);

double HzToMel(double f) { return 2595.0 * std::log10(1.0 + f / 700.0); }
double MelToHz(double m) { return 700.0 * (std::pow(10.0, m / 2595.0) - 1.0); }

// The fixed tables, built once.
struct Tables {
  std::vector<double> window;                 // kWindow
  std::vector<double> window_ac;              // the window's autocorrelation / its lag 0
  std::vector<std::vector<double>> mel;       // kMel x kBins
  std::vector<std::pair<int, int>> mel_span;  // each triangle's nonzero bins [first, last)
  std::vector<std::vector<double>> dct;       // kVoiceCepstra x kMel (rows c1..c19)
  std::vector<std::complex<double>> twiddle;  // kFft / 2
  std::vector<int> bit_reverse;               // kFft

  Tables()
      : window(kWindow),
        window_ac(kLagMax + 1),
        mel(kMel, std::vector<double>(kBins)),
        mel_span(kMel),
        dct(kVoiceCepstra, std::vector<double>(kMel)),
        twiddle(kFft / 2),
        bit_reverse(kFft) {
    const double pi = std::numbers::pi;
    for (int i = 0; i < kWindow; ++i)
      window[i] = 0.54 - 0.46 * std::cos(2 * pi * i / (kWindow - 1));
    for (int lag = 0; lag <= kLagMax; ++lag) {
      double sum = 0.0;
      for (int i = 0; i + lag < kWindow; ++i) sum += window[i] * window[i + lag];
      window_ac[lag] = sum;
    }
    const double lag0 = window_ac[0];
    for (double& v : window_ac) v /= lag0;
    double pts[kMel + 2];
    const double lo = HzToMel(kMelLowHz), hi = HzToMel(kMelHighHz);
    for (int i = 0; i < kMel + 2; ++i) pts[i] = MelToHz(lo + (hi - lo) * i / (kMel + 1));
    for (int b = 0; b < kMel; ++b) {
      for (int k = 0; k < kBins; ++k) {
        const double f = static_cast<double>(k) * kRate / kFft;
        const double up = (f - pts[b]) / (pts[b + 1] - pts[b]);
        const double down = (pts[b + 2] - f) / (pts[b + 2] - pts[b + 1]);
        mel[b][k] = std::max(0.0, std::min(up, down));
      }
      int first = 0, last = kBins;
      while (first < kBins && mel[b][first] == 0.0) ++first;
      while (last > first && mel[b][last - 1] == 0.0) --last;
      mel_span[b] = {first, last};
    }
    for (int c = 0; c < kVoiceCepstra; ++c)
      for (int i = 0; i < kMel; ++i) dct[c][i] = std::cos(pi / kMel * (i + 0.5) * (c + 1));
    for (int k = 0; k < kFft / 2; ++k) twiddle[k] = std::polar(1.0, -2 * pi * k / kFft);
    for (int i = 0; i < kFft; ++i) {
      int r = 0;
      for (int b = 1, v = i; b < kFft; b <<= 1, v >>= 1) r = (r << 1) | (v & 1);
      bit_reverse[i] = r;
    }
  }
};

const Tables& T() {
  static const Tables t;
  return t;
}

// In-place radix-2 decimation-in-time FFT of kFft points.
void Fft(std::vector<std::complex<double>>* a) {
  const Tables& t = T();
  std::vector<std::complex<double>>& v = *a;
  for (int i = 0; i < kFft; ++i)
    if (i < t.bit_reverse[i]) std::swap(v[i], v[t.bit_reverse[i]]);
  for (int len = 2; len <= kFft; len <<= 1) {
    const int step = kFft / len;
    for (int i = 0; i < kFft; i += len) {
      for (int j = 0; j < len / 2; ++j) {
        const std::complex<double> u = v[i + j], w = v[i + j + len / 2] * t.twiddle[j * step];
        v[i + j] = u + w;
        v[i + j + len / 2] = u - w;
      }
    }
  }
}

// The lag of a frame's pitch, or 0 when the frame is not voiced. `power`: its kBins bins.
int PitchLag(const double* power, std::vector<std::complex<double>>* buf) {
  const Tables& t = T();
  std::vector<std::complex<double>>& v = *buf;
  // The power spectrum is real and even, so the forward transform of the full spectrum is
  // kFft times its inverse, the autocorrelation; the ratio to lag 0 cancels the factor.
  for (int k = 0; k < kBins; ++k) v[k] = {power[k], 0.0};
  for (int k = kBins; k < kFft; ++k) v[k] = {power[kFft - k], 0.0};
  Fft(buf);
  const double r0 = v[0].real();
  if (!(r0 > 0.0)) return 0;
  int best = kLagMin;
  double peak = -INFINITY;
  for (int lag = kLagMin; lag <= kLagMax; ++lag) {
    const double r = v[lag].real() / r0 / t.window_ac[lag];
    if (r > peak) {  // the first of equal peaks, as numpy's argmax
      peak = r;
      best = lag;
    }
  }
  return peak > kVoiced ? best : 0;
}

// numpy.median: the middle value, or the mean of the middle two.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// numpy.percentile's default (linear between the closest ranks).
double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (pos - static_cast<double>(i)) * (v[i + 1] - v[i]);
}

}  // namespace

bool ComputeVoiceFeatures(const float* x, int64_t n, VoiceFeatures* out) {
  if (n < kWindow) return false;
  const int64_t frames = (n - kWindow) / kHop + 1;
  if (frames < kVoiceMinFrames) return false;
  const Tables& t = T();
  std::vector<double> log_mel(static_cast<size_t>(frames) * kMel), top(frames);
  std::vector<int> pitch_lag(frames);  // every frame's (the gate is known only after them all)
  std::vector<std::complex<double>> spectrum(kFft);
  std::vector<std::complex<double>> buf(kFft);
  for (int64_t f = 0; f < frames; ++f) {
    const float* s = x + f * kHop;
    for (int i = 0; i < kWindow; ++i) buf[i] = {static_cast<double>(s[i]) * t.window[i], 0.0};
    std::fill(buf.begin() + kWindow, buf.end(), std::complex<double>());
    Fft(&buf);
    double power[kBins];
    for (int k = 0; k < kBins; ++k) power[k] = std::norm(buf[k]);
    pitch_lag[f] = PitchLag(power, &spectrum);
    double* lm = &log_mel[static_cast<size_t>(f) * kMel];
    top[f] = -INFINITY;
    for (int b = 0; b < kMel; ++b) {
      double e = 0.0;
      for (int k = t.mel_span[b].first; k < t.mel_span[b].second; ++k) e += t.mel[b][k] * power[k];
      lm[b] = std::log(e + kFloor);
      top[f] = std::max(top[f], lm[b]);
    }
  }
  const double gate = Percentile(top, 95.0) - kGate;
  std::vector<std::array<double, kVoiceCepstra>> cep;
  std::vector<double> log_pitch;
  for (int64_t f = 0; f < frames; ++f) {
    if (!(top[f] > gate)) continue;
    if (pitch_lag[f] > 0) log_pitch.push_back(std::log(static_cast<double>(kRate) / pitch_lag[f]));
    const double* lm = &log_mel[static_cast<size_t>(f) * kMel];
    std::array<double, kVoiceCepstra>& c = cep.emplace_back();
    for (int k = 0; k < kVoiceCepstra; ++k) {
      c[k] = 0.0;
      for (int i = 0; i < kMel; ++i) c[k] += t.dct[k][i] * lm[i];
    }
  }
  // At least the loudest frame passes the gate (the 95th percentile is at most the maximum).
  const double kept = static_cast<double>(cep.size());
  for (int k = 0; k < kVoiceCepstra; ++k) {
    double mean = 0.0, var = 0.0;
    for (const auto& c : cep) mean += c[k];
    mean /= kept;
    for (const auto& c : cep) var += (c[k] - mean) * (c[k] - mean);
    (*out)[k] = mean;
    (*out)[kVoiceCepstra + k] = std::sqrt(var / kept);
  }
  const double voiced_share = static_cast<double>(log_pitch.size()) / kept;
  if (log_pitch.size() < kMinVoiced) log_pitch.assign(1, kUnvoicedLogPitch);
  double mean = 0.0, var = 0.0;
  for (double v : log_pitch) mean += v;
  mean /= static_cast<double>(log_pitch.size());
  for (double v : log_pitch) var += (v - mean) * (v - mean);
  double* pitch = out->data() + 2 * kVoiceCepstra;
  pitch[0] = Median(log_pitch);
  pitch[1] = std::sqrt(var / static_cast<double>(log_pitch.size()));
  pitch[2] = voiced_share;
  return true;
}

}  // namespace tern::audio
