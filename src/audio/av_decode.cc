// FFmpeg decoding from memory (av_decode.h): probe -> open the demuxer -> best audio stream
// -> decode packets -> convert each frame to interleaved float (libswresample, same rate and
// channels: the mono mix stays Pipeline's plain mean, never swresample's downmix matrix) ->
// Pipeline.
#include "audio/av_decode.h"

#include <string>

#include "audio/pipeline.h"

#if TERN_HAVE_AV
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avstring.h>
#include <libavutil/channel_layout.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libswresample/swresample.h>
}

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>
#endif

namespace tern::audio {

#if !TERN_HAVE_AV

bool AvAvailable() { return false; }
std::string AvVersions() { return ""; }

Result<Audio> DecodeWithAv(const uint8_t*, size_t, const std::string& name, const AudioOptions&,
                           Resampler, const std::string& sndfile_reason) {
  return FormatError(
      "%s: not a readable audio file (WAV, FLAC, OGG/Vorbis, Ogg/Opus, MP3): libsndfile: %s; "
      "reading M4A/MP4/WebM and other containers needs tern built with FFmpeg (libavformat)",
      name.c_str(), sndfile_reason.c_str());
}

#else

namespace {

// The demuxers tern accepts (libavformat short names): audio files and the audio of common
// recordings. Playlists (hls, concat, dash) and image/video-only formats are not among them.
constexpr const char* kAvFormats =
    "mov,matroska,webm,ogg,aac,mp3,flac,wav,w64,aiff,caf,amr,ac3,eac3,asf,wv,au";
constexpr int kProbeBytes = 1 << 20;
constexpr int kIoBufferBytes = 1 << 16;
// Audio codecs put at least 2.5 ms in a packet (Opus' shortest frame); a video stream
// beside the audio adds at most a few hundred packets a second. 1000 packets (and decoded
// frames) per allowed second is far above any real file and still bounds a stream of empty
// packets.
constexpr double kMaxPacketsPerSecond = 1000;
constexpr int64_t kPacketSlack = 10000;
constexpr size_t kMaxLogChars = 600;
// FFmpeg's largest single allocation (av_max_alloc; its default is 2 GB). A demuxer sizes
// some tables from what the header claims (an MP4 sample table promising 2^30 samples would
// ask for gigabytes); real ones are far smaller: 3 h of AAC with a 30 fps video beside it
// index about 830k packets, 20 MB.
constexpr size_t kMaxAvAlloc = size_t{64} << 20;

// FFmpeg logs through one process-wide callback. Messages of the thread decoding for a
// caller go into that caller's error text (demuxing and audio decoding run on the calling
// thread: thread_count = 1); everything else is dropped.
thread_local std::string* t_log = nullptr;

void LogCallback(void*, int level, const char* fmt, va_list vl) {
  if (t_log == nullptr || level > AV_LOG_ERROR || t_log->size() >= kMaxLogChars) return;
  char line[512];
  int print_prefix = 0;  // no "[matroska @ 0x...]": the address means nothing to a client
  av_log_format_line2(nullptr, level, fmt, vl, line, sizeof line, &print_prefix);
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return;
  if (!t_log->empty()) *t_log += "; ";
  *t_log += s.substr(0, kMaxLogChars - std::min(kMaxLogChars, t_log->size()));
}

// Process-wide settings, made once before the first decode: the log callback and the
// allocation bound.
void ConfigureFfmpeg() {
  static std::once_flag once;
  std::call_once(once, [] {
    av_log_set_callback(LogCallback);
    av_max_alloc(kMaxAvAlloc);
  });
}

class LogCapture {
 public:
  LogCapture() { t_log = &text_; }
  ~LogCapture() { t_log = nullptr; }
  // " (FFmpeg: ...)" when something was logged, else "".
  std::string Suffix() const { return text_.empty() ? "" : " (FFmpeg: " + text_ + ")"; }

 private:
  std::string text_;
};

std::string AvError(int e) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(e, buf, sizeof buf);
  return buf;
}

// AVIOContext over caller memory (read and seek only).
struct MemReader {
  const uint8_t* data;
  int64_t size;
  int64_t pos;
};
int MemRead(void* opaque, uint8_t* buf, int n) {
  auto* m = static_cast<MemReader*>(opaque);
  const int64_t k = std::min<int64_t>(n, m->size - m->pos);
  if (k <= 0) return AVERROR_EOF;
  std::memcpy(buf, m->data + m->pos, static_cast<size_t>(k));
  m->pos += k;
  return static_cast<int>(k);
}
int64_t MemSeek(void* opaque, int64_t off, int whence) {
  auto* m = static_cast<MemReader*>(opaque);
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return m->size;
  const int64_t p = whence == SEEK_SET   ? off
                    : whence == SEEK_CUR ? m->pos + off
                    : whence == SEEK_END ? m->size + off
                                         : -1;
  if (p < 0 || p > m->size) return AVERROR(EINVAL);
  m->pos = p;
  return p;
}

// Any open the demuxer attempts beyond the bytes given (a playlist entry, an MP4 data
// reference, an HLS segment) is refused.
int RefuseNestedOpen(AVFormatContext*, AVIOContext**, const char* url, int, AVDictionary**) {
  av_log(nullptr, AV_LOG_ERROR, "refused to open '%.80s' from inside the file\n", url);
  return AVERROR(EPERM);
}

struct IoCloser {
  void operator()(AVIOContext* io) const {
    if (io == nullptr) return;
    av_freep(&io->buffer);
    avio_context_free(&io);
  }
};
struct FormatCloser {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
struct CodecCloser {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct SwrFree {
  void operator()(SwrContext* s) const { swr_free(&s); }
};

class Decoder {
 public:
  Decoder(const std::string& name, const AudioOptions& options, Resampler resampler)
      : name_(name), options_(options), resampler_(resampler) {
    max_packets_ = kPacketSlack + static_cast<int64_t>(options.max_seconds * kMaxPacketsPerSecond);
  }

  Result<Audio> Run(const uint8_t* data, size_t size, const std::string& sndfile_reason) {
    const char* n = name_.c_str();
    mem_ = MemReader{data, static_cast<int64_t>(size), 0};
    auto* buffer = static_cast<uint8_t*>(av_malloc(kIoBufferBytes));
    if (buffer == nullptr) return ResourceExhaustedError("%s: out of memory", n);
    io_.reset(avio_alloc_context(buffer, kIoBufferBytes, 0, &mem_, MemRead, nullptr, MemSeek));
    if (!io_) {
      av_free(buffer);
      return ResourceExhaustedError("%s: out of memory", n);
    }

    // Probe first, so that a format tern does not accept is named in the error.
    const AVInputFormat* ifmt = nullptr;
    int r = av_probe_input_buffer2(io_.get(), &ifmt, "", nullptr, 0, kProbeBytes);
    if (r < 0 || ifmt == nullptr) {
      return FormatError(
          "%s: not a readable audio file (WAV, FLAC, OGG/Vorbis, Opus, MP3, M4A/MP4, WebM, "
          "...): libsndfile: %s; FFmpeg: %s",
          n, sndfile_reason.c_str(), AvError(r < 0 ? r : AVERROR_INVALIDDATA).c_str());
    }
    if (av_match_list(ifmt->name, kAvFormats, ',') <= 0) {
      return UnsupportedError(
          "%s: a '%s' file (%s), not an audio format tern reads (playlists and files that "
          "open other files are refused)",
          n, ifmt->name, ifmt->long_name ? ifmt->long_name : "?");
    }

    AVFormatContext* fmt = avformat_alloc_context();
    if (fmt == nullptr) return ResourceExhaustedError("%s: out of memory", n);
    fmt->pb = io_.get();
    fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    fmt->probesize = kProbeBytes;
    fmt->format_probesize = kProbeBytes;
    fmt->max_analyze_duration = 5 * static_cast<int64_t>(AV_TIME_BASE);
    fmt->io_open = RefuseNestedOpen;
    AVDictionary* opts = nullptr;
    av_dict_set(&opts, "format_whitelist", kAvFormats, 0);
    av_dict_set(&opts, "protocol_whitelist", "none", 0);
    av_dict_set(&opts, "max_streams", "64", 0);
    r = avformat_open_input(&fmt, nullptr, ifmt, &opts);  // frees fmt on failure
    av_dict_free(&opts);
    const char* container = ifmt->long_name ? ifmt->long_name : ifmt->name;
    if (r < 0) return Corrupt("truncated or corrupt", container, r);
    fmt_.reset(fmt);
    r = avformat_find_stream_info(fmt, nullptr);
    if (r < 0) return Corrupt("cannot read the stream parameters of this", container, r);

    const AVCodec* codec = nullptr;
    stream_ = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (stream_ == AVERROR_STREAM_NOT_FOUND) {
      return FormatError("%s: the %s file holds no audio stream", n, container);
    }
    if (stream_ < 0 || codec == nullptr) {
      const char* codec_name = "unknown";
      for (unsigned i = 0; i < fmt->nb_streams; ++i) {
        if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO) {
          codec_name = avcodec_get_name(fmt->streams[i]->codecpar->codec_id);
          break;
        }
      }
      return UnsupportedError("%s: no decoder for its audio codec (%s)", n, codec_name);
    }
    // A container that states its length fails at once when it states too much (a length
    // estimated from the bit rate is a guess, and is not held against the file).
    const AVStream* st = fmt->streams[stream_];
    double seconds = 0;
    if (st->duration > 0 && st->duration != AV_NOPTS_VALUE && st->time_base.den > 0) {
      seconds = static_cast<double>(st->duration) * av_q2d(st->time_base);
    } else if (fmt->duration > 0 && fmt->duration != AV_NOPTS_VALUE &&
               fmt->duration_estimation_method != AVFMT_DURATION_FROM_BITRATE) {
      seconds = static_cast<double>(fmt->duration) / AV_TIME_BASE;
    }
    if (seconds > options_.max_seconds + 1.0) return TooLongError(name_, options_, seconds);

    ctx_.reset(avcodec_alloc_context3(codec));
    if (!ctx_) return ResourceExhaustedError("%s: out of memory", n);
    r = avcodec_parameters_to_context(ctx_.get(), st->codecpar);
    if (r < 0) return Corrupt("bad codec parameters", "", r);
    ctx_->thread_count = 1;  // keeps decoding (and its log) on this thread
    r = avcodec_open2(ctx_.get(), codec, nullptr);
    if (r < 0) return Corrupt("cannot open the decoder", codec->name, r);

    packet_.reset(av_packet_alloc());
    frame_.reset(av_frame_alloc());
    if (!packet_ || !frame_) return ResourceExhaustedError("%s: out of memory", n);
    for (;;) {
      r = av_read_frame(fmt, packet_.get());
      if (r == AVERROR_EOF) break;
      if (r < 0) return Corrupt("reading failed (truncated or corrupt file?)", "", r);
      if (++packets_ > max_packets_) {
        return ResourceExhaustedError("%s: more than %lld packets; not a plausible recording", n,
                                      static_cast<long long>(max_packets_));
      }
      if (packet_->stream_index != stream_) {
        av_packet_unref(packet_.get());
        continue;
      }
      r = avcodec_send_packet(ctx_.get(), packet_.get());
      if (r == AVERROR(EAGAIN)) {  // the decoder's output is full: take it, then resend
        TERN_RETURN_IF_ERROR(Drain());
        r = avcodec_send_packet(ctx_.get(), packet_.get());
      }
      av_packet_unref(packet_.get());
      if (r < 0) return Corrupt("decoding failed (truncated or corrupt file?)", "", r);
      TERN_RETURN_IF_ERROR(Drain());
    }
    r = avcodec_send_packet(ctx_.get(), nullptr);  // flush the decoder's delay
    if (r < 0 && r != AVERROR_EOF) return Corrupt("decoding failed at the end", "", r);
    TERN_RETURN_IF_ERROR(Drain());
    if (!pipeline_) return FormatError("%s: contains no audio samples%s", n, log_.Suffix().c_str());
    return pipeline_->Finish();
  }

 private:
  // "NAME: WHAT[ WHO]: <FFmpeg's reason>[ after S s of audio][ (FFmpeg: logged lines)]".
  Status Corrupt(const char* what, const char* who, int err) const {
    char at[64] = "";
    if (pipeline_) {
      std::snprintf(at, sizeof at, " after %.2f s of audio",
                    static_cast<double>(pipeline_->frames()) / pipeline_->rate());
    }
    return FormatError("%s: %s%s%s: %s%s%s", name_.c_str(), what, *who ? " " : "", who,
                       AvError(err).c_str(), at, log_.Suffix().c_str());
  }

  Status Drain() {
    for (;;) {
      const int r = avcodec_receive_frame(ctx_.get(), frame_.get());
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return Status::Ok();
      if (r < 0) return Corrupt("decoding failed (truncated or corrupt file?)", "", r);
      Status s = Consume(*frame_);
      av_frame_unref(frame_.get());
      TERN_RETURN_IF_ERROR(s);
    }
  }

  // One decoded frame: to interleaved float at its own rate and channels, then Pipeline.
  Status Consume(const AVFrame& f) {
    const char* n = name_.c_str();
    if (++frames_ > max_packets_) {
      return ResourceExhaustedError("%s: more than %lld decoded frames", n,
                                    static_cast<long long>(max_packets_));
    }
    const int channels = f.ch_layout.nb_channels;
    if (!pipeline_) {
      TERN_ASSIGN_OR_RETURN(pipeline_,
                            Pipeline::Create(name_, f.sample_rate, channels, options_, resampler_));
      format_ = f.format;
      AVChannelLayout layout{};
      av_channel_layout_default(&layout, channels);  // same count in and out: no mixing
      SwrContext* swr = nullptr;
      int r = swr_alloc_set_opts2(&swr, &layout, AV_SAMPLE_FMT_FLT, f.sample_rate, &layout,
                                  static_cast<AVSampleFormat>(f.format), f.sample_rate, 0, nullptr);
      av_channel_layout_uninit(&layout);
      if (r < 0 || swr == nullptr) return Corrupt("cannot convert its samples", "", r < 0 ? r : -1);
      swr_.reset(swr);
      r = swr_init(swr);
      if (r < 0) return Corrupt("cannot convert its samples", "", r);
    }
    if (f.sample_rate != pipeline_->rate() || channels != pipeline_->channels() ||
        f.format != format_) {
      return UnsupportedError(
          "%s: the audio changes from %d Hz, %d channels to %d Hz, %d channels mid-stream", n,
          pipeline_->rate(), pipeline_->channels(), f.sample_rate, channels);
    }
    if (f.nb_samples <= 0) return Status::Ok();
    buf_.resize(static_cast<size_t>(f.nb_samples) * channels);
    uint8_t* out = reinterpret_cast<uint8_t*>(buf_.data());
    const int got = swr_convert(swr_.get(), &out, f.nb_samples,
                                const_cast<const uint8_t**>(f.extended_data), f.nb_samples);
    if (got < 0) return Corrupt("cannot convert its samples", "", got);
    return pipeline_->Push(buf_.data(), static_cast<size_t>(got));
  }

  std::string name_;
  AudioOptions options_;
  Resampler resampler_;
  LogCapture log_;
  MemReader mem_{};
  std::unique_ptr<AVIOContext, IoCloser> io_;
  std::unique_ptr<AVFormatContext, FormatCloser> fmt_;
  std::unique_ptr<AVCodecContext, CodecCloser> ctx_;
  std::unique_ptr<AVPacket, PacketFree> packet_;
  std::unique_ptr<AVFrame, FrameFree> frame_;
  std::unique_ptr<SwrContext, SwrFree> swr_;
  std::unique_ptr<Pipeline> pipeline_;
  std::vector<float> buf_;
  int stream_ = -1;
  int format_ = -1;
  int64_t max_packets_ = 0, packets_ = 0, frames_ = 0;
};

}  // namespace

bool AvAvailable() { return true; }

std::string AvVersions() {
  auto v = [](const char* lib, unsigned x) {
    return std::string(lib) + " " + std::to_string(AV_VERSION_MAJOR(x)) + "." +
           std::to_string(AV_VERSION_MINOR(x)) + "." + std::to_string(AV_VERSION_MICRO(x));
  };
  return v("libavformat", avformat_version()) + ", " + v("libavcodec", avcodec_version());
}

Result<Audio> DecodeWithAv(const uint8_t* data, size_t size, const std::string& name,
                           const AudioOptions& options, Resampler resampler,
                           const std::string& sndfile_reason) {
  ConfigureFfmpeg();
  Decoder d(name, options, resampler);
  return d.Run(data, size, sndfile_reason);
}

#endif

}  // namespace tern::audio
