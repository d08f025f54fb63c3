// FFmpeg encode into memory for the tests (av_encode_testutil.h). A seekable in-memory
// output, so MP4 writes its index (moov) at the end as a phone would, and WebM its cues and
// duration.
#include "audio/av_encode_testutil.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
}

#include <algorithm>
#include <cstring>
#include <memory>

namespace tern::audio::testutil {
namespace {

struct MemWriter {
  std::string bytes;
  int64_t pos = 0;
};
#if LIBAVFORMAT_VERSION_MAJOR >= 61
int Write(void* opaque, const uint8_t* buf, int n) {
#else
int Write(void* opaque, uint8_t* buf, int n) {
#endif
  auto* m = static_cast<MemWriter*>(opaque);
  const size_t end = static_cast<size_t>(m->pos) + static_cast<size_t>(n);
  if (m->bytes.size() < end) m->bytes.resize(end);
  std::memcpy(m->bytes.data() + m->pos, buf, static_cast<size_t>(n));
  m->pos = static_cast<int64_t>(end);
  return n;
}
int64_t Seek(void* opaque, int64_t off, int whence) {
  auto* m = static_cast<MemWriter*>(opaque);
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return static_cast<int64_t>(m->bytes.size());
  const int64_t p = whence == SEEK_SET   ? off
                    : whence == SEEK_CUR ? m->pos + off
                                         : static_cast<int64_t>(m->bytes.size()) + off;
  if (p < 0) return AVERROR(EINVAL);
  m->pos = p;
  return p;
}

// One float sample into the encoder's format.
void Put(AVFrame* f, AVSampleFormat fmt, int channels, int i, int c, float v) {
  switch (fmt) {
    case AV_SAMPLE_FMT_FLT:
      reinterpret_cast<float*>(f->data[0])[i * channels + c] = v;
      break;
    case AV_SAMPLE_FMT_FLTP:
      reinterpret_cast<float*>(f->extended_data[c])[i] = v;
      break;
    case AV_SAMPLE_FMT_S16:
      reinterpret_cast<int16_t*>(f->data[0])[i * channels + c] =
          static_cast<int16_t>(std::clamp(v, -1.0f, 1.0f) * 32767.0f);
      break;
    default:
      break;
  }
}

}  // namespace

Result<std::string> EncodeWithAv(const std::string& container, const std::string& encoder, int rate,
                                 int channels, const std::vector<float>& interleaved,
                                 int bit_rate) {
  av_log_set_level(AV_LOG_ERROR);  // the encoders' notes are not what a test shows
  const AVCodec* codec = avcodec_find_encoder_by_name(encoder.c_str());
  if (codec == nullptr) return NotFoundError("no %s encoder in this FFmpeg", encoder.c_str());
  AVFormatContext* oc = nullptr;
  if (avformat_alloc_output_context2(&oc, nullptr, container.c_str(), nullptr) < 0 || !oc) {
    return NotFoundError("no %s muxer in this FFmpeg", container.c_str());
  }
  std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> oc_owner(
      oc, [](AVFormatContext* f) { avformat_free_context(f); });
  AVCodecContext* ctx = avcodec_alloc_context3(codec);
  std::unique_ptr<AVCodecContext, void (*)(AVCodecContext*)> ctx_owner(
      ctx, [](AVCodecContext* c) { avcodec_free_context(&c); });
  AVSampleFormat fmt = AV_SAMPLE_FMT_NONE;
  for (const AVSampleFormat* p = codec->sample_fmts; p && *p != AV_SAMPLE_FMT_NONE; ++p) {
    if (*p == AV_SAMPLE_FMT_FLT || *p == AV_SAMPLE_FMT_FLTP || *p == AV_SAMPLE_FMT_S16) {
      fmt = *p;
      break;
    }
  }
  if (fmt == AV_SAMPLE_FMT_NONE) return UnsupportedError("%s: no float/s16 input", encoder.c_str());
  ctx->sample_fmt = fmt;
  ctx->sample_rate = rate;
  av_channel_layout_default(&ctx->ch_layout, channels);
  ctx->bit_rate = bit_rate;
  ctx->time_base = AVRational{1, rate};
  if (oc->oformat->flags & AVFMT_GLOBALHEADER) ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if (avcodec_open2(ctx, codec, nullptr) < 0)
    return InternalError("cannot open %s", encoder.c_str());
  AVStream* st = avformat_new_stream(oc, nullptr);
  avcodec_parameters_from_context(st->codecpar, ctx);
  st->time_base = ctx->time_base;

  MemWriter out;
  constexpr int kBuf = 1 << 16;
  AVIOContext* io = avio_alloc_context(static_cast<uint8_t*>(av_malloc(kBuf)), kBuf, 1, &out,
                                       nullptr, Write, Seek);
  std::unique_ptr<AVIOContext, void (*)(AVIOContext*)> io_owner(io, [](AVIOContext* p) {
    av_freep(&p->buffer);
    avio_context_free(&p);
  });
  oc->pb = io;
  oc->flags |= AVFMT_FLAG_CUSTOM_IO;
  if (avformat_write_header(oc, nullptr) < 0) return InternalError("cannot write a header");

  AVPacket* pkt = av_packet_alloc();
  AVFrame* frame = av_frame_alloc();
  std::unique_ptr<AVPacket, void (*)(AVPacket*)> pkt_owner(pkt,
                                                           [](AVPacket* p) { av_packet_free(&p); });
  std::unique_ptr<AVFrame, void (*)(AVFrame*)> frame_owner(frame,
                                                           [](AVFrame* f) { av_frame_free(&f); });
  auto drain = [&]() -> Status {
    for (;;) {
      const int r = avcodec_receive_packet(ctx, pkt);
      if (r == AVERROR(EAGAIN) || r == AVERROR_EOF) return Status::Ok();
      if (r < 0) return InternalError("encoding failed");
      av_packet_rescale_ts(pkt, ctx->time_base, st->time_base);
      pkt->stream_index = st->index;
      if (av_interleaved_write_frame(oc, pkt) < 0) return InternalError("muxing failed");
    }
  };
  const int total = static_cast<int>(interleaved.size() / channels);
  const int step = ctx->frame_size > 0 ? ctx->frame_size : 1024;
  for (int start = 0; start < total; start += step) {
    const int n = std::min(step, total - start);
    frame->nb_samples = n;
    frame->format = fmt;
    frame->sample_rate = rate;
    av_channel_layout_copy(&frame->ch_layout, &ctx->ch_layout);
    if (av_frame_get_buffer(frame, 0) < 0) return InternalError("out of memory");
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < channels; ++c) {
        Put(frame, fmt, channels, i, c, interleaved[static_cast<size_t>(start + i) * channels + c]);
      }
    }
    frame->pts = start;
    if (avcodec_send_frame(ctx, frame) < 0) return InternalError("encoding failed");
    av_frame_unref(frame);
    TERN_RETURN_IF_ERROR(drain());
  }
  avcodec_send_frame(ctx, nullptr);
  TERN_RETURN_IF_ERROR(drain());
  if (av_write_trailer(oc) < 0) return InternalError("cannot write the trailer");
  avio_flush(io);
  return out.bytes;
}

}  // namespace tern::audio::testutil
