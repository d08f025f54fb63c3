#include "live.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tern::cli {
namespace {

uint32_t U32(const unsigned char* p) {
  return p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24;
}
uint16_t U16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// Samples as they arrive: raw s16le mono, or a WAV stream (PCM 16-bit or float 32-bit, any
// channel count, mixed to mono) whose data chunk may claim any size (streams often say 0 or
// 0xFFFFFFFF): everything after its header is audio until the end of input.
class PcmReader {
 public:
  PcmReader(std::FILE* f, std::string name, int raw_rate)
      : f_(f), name_(std::move(name)), rate_(raw_rate) {}

  // The next block (kBlock bytes: 20 ms of 24 kHz s16 mono, so reading adds little lag);
  // false at the end of input.
  Result<bool> Read(std::vector<float>* out) {
    out->clear();
    unsigned char buf[kBlock];
    const size_t got = std::fread(buf, 1, sizeof buf, f_);
    if (got == 0 && std::ferror(f_)) return IoError("%s: read failed", name_.c_str());
    if (got == 0) {
      if (!header_done_ && !pending_.empty()) TERN_RETURN_IF_ERROR(ParseHeader(true));
      return false;
    }
    pending_.insert(pending_.end(), buf, buf + got);
    if (!header_done_) {
      TERN_RETURN_IF_ERROR(ParseHeader(false));
      if (!header_done_) return true;
    }
    const size_t frame = static_cast<size_t>(bytes_per_sample_) * channels_;
    const size_t frames = pending_.size() / frame;
    for (size_t i = 0; i < frames; ++i) {
      const unsigned char* p = pending_.data() + i * frame;
      float sum = 0;
      for (int c = 0; c < channels_; ++c, p += bytes_per_sample_) {
        if (is_float_) {
          float v;
          std::memcpy(&v, p, 4);
          sum += v;
        } else {
          sum += static_cast<float>(static_cast<int16_t>(U16(p))) / 32768.0f;
        }
      }
      out->push_back(sum / static_cast<float>(channels_));
    }
    pending_.erase(pending_.begin(),
                   pending_.begin() + static_cast<std::ptrdiff_t>(frames * frame));
    return true;
  }
  int rate() const { return rate_; }
  bool header_done() const { return header_done_; }

 private:
  // Without "RIFF" first the input is raw s16le mono. `eof`: no more bytes will come.
  Status ParseHeader(bool eof) {
    if (pending_.size() < 12) {
      if (!eof && std::memcmp(pending_.data(), "RIFF", std::min<size_t>(4, pending_.size())) == 0)
        return Status::Ok();  // wait for more
    }
    if (pending_.size() < 4 || std::memcmp(pending_.data(), "RIFF", 4) != 0) {
      header_done_ = true;  // raw
      return Status::Ok();
    }
    if (pending_.size() >= 12 && std::memcmp(pending_.data() + 8, "WAVE", 4) != 0)
      return FormatError("%s: a RIFF stream that is not WAVE", name_.c_str());
    size_t at = 12;
    bool have_fmt = false;
    while (true) {
      if (pending_.size() < at + 8) break;
      const unsigned char* ck = pending_.data() + at;
      const uint32_t size = U32(ck + 4);
      if (std::memcmp(ck, "data", 4) == 0) {
        if (!have_fmt) return FormatError("%s: WAV data before its fmt chunk", name_.c_str());
        pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(at + 8));
        header_done_ = true;
        return Status::Ok();
      }
      if (size > (1u << 20))
        return FormatError("%s: WAV header chunk of %u bytes", name_.c_str(), size);
      if (pending_.size() < at + 8 + size) break;
      if (std::memcmp(ck, "fmt ", 4) == 0) {
        if (size < 16) return FormatError("%s: WAV fmt chunk of %u bytes", name_.c_str(), size);
        uint16_t format = U16(ck + 8);
        channels_ = U16(ck + 10);
        rate_ = static_cast<int>(U32(ck + 12));
        const uint16_t bits = U16(ck + 22);
        if (format == 0xFFFE && size >= 40) format = U16(ck + 8 + 24);  // extensible
        if (format == 1 && bits == 16) {
          is_float_ = false;
          bytes_per_sample_ = 2;
        } else if (format == 3 && bits == 32) {
          is_float_ = true;
          bytes_per_sample_ = 4;
        } else {
          return UnsupportedError(
              "%s: live WAV must be 16-bit PCM or 32-bit float (format %u, %u bits)", name_.c_str(),
              format, bits);
        }
        if (channels_ < 1 || channels_ > 64)
          return FormatError("%s: WAV with %d channels", name_.c_str(), channels_);
        have_fmt = true;
      }
      at += 8 + size + (size & 1);
    }
    if (eof) return FormatError("%s: the WAV header ends before its data chunk", name_.c_str());
    if (pending_.size() > (1u << 21))
      return FormatError("%s: no WAV data chunk in 2 MB", name_.c_str());
    return Status::Ok();
  }

  static constexpr size_t kBlock = 960;
  std::FILE* f_;
  std::string name_;
  int rate_;
  int channels_ = 1;
  int bytes_per_sample_ = 2;
  bool is_float_ = false;
  bool header_done_ = false;
  std::vector<unsigned char> pending_;
};

// The last `cols` - 1 bytes of `s`, starting at a UTF-8 character boundary.
std::string Tail(const std::string& s, int cols) {
  const size_t keep = static_cast<size_t>(std::max(1, cols - 1));
  if (s.size() <= keep) return s;
  size_t b = s.size() - keep;
  while (b < s.size() && (static_cast<unsigned char>(s[b]) & 0xC0) == 0x80) ++b;
  return s.substr(b);
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

Status TranscribeLive(Session& session, const LiveCliOptions& o) {
  std::FILE* f = stdin;
  const std::string name = o.input == "-" ? "stdin" : o.input;
  if (o.input != "-") {
    f = std::fopen(o.input.c_str(), "rb");
    if (f == nullptr) return IoError("%s: cannot open: %s", o.input.c_str(), std::strerror(errno));
  }
  struct Closer {
    std::FILE* f;
    ~Closer() {
      if (f != stdin) std::fclose(f);
    }
  } closer{f};

  PcmReader reader(f, name, o.raw_rate);
  std::vector<float> samples;
  // The first bytes say raw or WAV (and the WAV's rate) before the session starts.
  while (!reader.header_done()) {
    TERN_ASSIGN_OR_RETURN(const bool more, reader.Read(&samples));
    if (!more) break;
  }
  LiveOptions lo = o.live;
  lo.sample_rate = reader.rate();
  Result<std::unique_ptr<LiveSession>> started = session.StartLive(lo);
  if (!started.ok()) return started.status().WithPrefix(name);
  LiveSession& live = **started;

  const int cols = o.json ? 0 : TerminalColumns(stdout);
  const bool tty = cols > 0;
  bool partial_shown = false;
  std::vector<double> lag_partial, lag_final;
  double encoder_ms = 0, prefill_ms = 0, decode_ms = 0;
  std::vector<LiveEvent> events;
  auto emit = [&]() {
    for (const LiveEvent& e : events) {
      if (e.kind == LiveEvent::Kind::kPartial) lag_partial.push_back(e.lag_ms);
      if (e.kind == LiveEvent::Kind::kFinal) lag_final.push_back(e.lag_ms);
      encoder_ms += e.metrics.encoder_ms;
      prefill_ms += e.metrics.prefill_ms;
      decode_ms += e.metrics.decode_ms;
      if (o.json) {
        nlohmann::json j;
        j["type"] = LiveEventKindName(e.kind);
        j["piece"] = e.piece;
        j["start"] = e.start_s();
        j["end"] = e.end_s();
        j["heard"] = static_cast<double>(e.heard_sample) / 24000.0;
        if (e.kind != LiveEvent::Kind::kSpeechStarted) j["text"] = e.text;
        if (e.kind == LiveEvent::Kind::kFinal && e.transcript.structured) {
          // The json writer's segments (times from the stream's start, speakers numbered
          // over the stream when the model declares voices).
          j["segments"] = nlohmann::json::parse(
              FormatTranscript(e.transcript, OutputFormat::kJson))["segments"];
        }
        j["lag_ms"] = std::round(e.lag_ms * 100.0) / 100.0;
        const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        std::fprintf(stdout, "%s\n", line.c_str());
      } else if (e.kind == LiveEvent::Kind::kPartial && tty) {
        std::fprintf(stdout, "\r\033[K%s", Tail(e.text, cols).c_str());
        partial_shown = true;
      } else if (e.kind == LiveEvent::Kind::kFinal) {
        // Segments with speakers ("Speaker 1: ...") as the txt writer prints them.
        const std::string line = e.transcript.structured
                                     ? FormatTranscript(e.transcript, OutputFormat::kTxt)
                                     : e.text + "\n";
        std::fprintf(stdout, "%s%s", partial_shown ? "\r\033[K" : "", line.c_str());
        partial_shown = false;
      }
    }
    std::fflush(stdout);
    events.clear();
  };
  while (true) {
    if (!samples.empty()) {
      TERN_RETURN_IF_ERROR(live.Feed(samples.data(), samples.size(), &events));
      emit();
    }
    TERN_ASSIGN_OR_RETURN(const bool more, reader.Read(&samples));
    if (!more) break;
  }
  TERN_RETURN_IF_ERROR(live.Finish(&events));
  emit();
  if (partial_shown) std::fputs("\r\033[K", stdout);
  if (o.metrics) {
    const double audio_s = static_cast<double>(live.samples_received()) / 24000.0;
    std::fprintf(stderr,
                 "metrics: live audio_s=%.2f partials=%zu lag_partial_ms median=%.1f p95=%.1f "
                 "finals=%zu lag_final_ms median=%.1f p95=%.1f encoder_ms=%.1f prefill_ms=%.1f "
                 "decode_ms=%.1f encoder_ms_per_audio_s=%.1f\n",
                 audio_s, lag_partial.size(), Percentile(lag_partial, 0.5),
                 Percentile(lag_partial, 0.95), lag_final.size(), Percentile(lag_final, 0.5),
                 Percentile(lag_final, 0.95), encoder_ms, prefill_ms, decode_ms,
                 audio_s > 0 ? encoder_ms / audio_s : 0.0);
  }
  return Status::Ok();
}

}  // namespace tern::cli
