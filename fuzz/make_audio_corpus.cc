// Writes the seed corpus of audio_fuzz: short (0.05-0.1 s) sine tones written by
// libsndfile in the containers and encodings uploads use (WAV PCM 8/16/24/32 and float,
// stereo, WAVEX, FLAC, OGG/Vorbis, MP3 when libsndfile can write it), plus two hand-made
// WAV headers: a data chunk declaring far more bytes than present (truncated upload) and
// the 0xFFFFFFFF streaming placeholder. Built with TERN_HAVE_AV, also what the FFmpeg path
// reads (src/audio/av_decode.h), encoded by FFmpeg: WebM/Opus, M4A/AAC, MP4/AAC, and an HLS
// and a concat playlist (which must be refused). Usage: make_audio_corpus OUTPUT_DIR
#include <sndfile.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#if TERN_HAVE_AV
#include "audio/av_encode_testutil.h"
#endif

namespace {

bool Write(const std::string& path, int format, int rate, int channels, double seconds) {
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = format;
  if (!sf_format_check(&info)) return true;  // this libsndfile cannot write it: skip
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (f == nullptr) {
    std::fprintf(stderr, "make_audio_corpus: %s: %s\n", path.c_str(), sf_strerror(nullptr));
    return false;
  }
  const int frames = static_cast<int>(seconds * rate);
  std::vector<float> buf(static_cast<size_t>(frames) * channels);
  for (int i = 0; i < frames; ++i) {
    for (int c = 0; c < channels; ++c) {
      buf[static_cast<size_t>(i) * channels + c] =
          0.5f * std::sin(2.0f * 3.14159265f * 440.0f * (c + 1) * i / rate);
    }
  }
  const bool ok = sf_writef_float(f, buf.data(), frames) == frames;
  return sf_close(f) == 0 && ok;
}

void Put32(std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), 4); }
void Put16(std::string* s, uint16_t v) { s->append(reinterpret_cast<const char*>(&v), 2); }

// A 16-bit mono 16 kHz WAV header whose data chunk declares `declared` bytes, then `n`
// samples. (Little-endian host, as everywhere tern runs.)
bool WriteRawWav(const std::string& path, uint32_t declared, int n) {
  std::string s = "RIFF";
  Put32(&s, 36 + declared);
  s += "WAVEfmt ";
  Put32(&s, 16);
  Put16(&s, 1);  // PCM
  Put16(&s, 1);
  Put32(&s, 16000);
  Put32(&s, 32000);
  Put16(&s, 2);
  Put16(&s, 16);
  s += "data";
  Put32(&s, declared);
  for (int i = 0; i < n; ++i) Put16(&s, static_cast<uint16_t>(i * 977));
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(s.data(), 1, s.size(), f) == s.size();
  return std::fclose(f) == 0 && ok;
}

bool WriteBytes(const std::string& path, const std::string& s) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(s.data(), 1, s.size(), f) == s.size();
  return std::fclose(f) == 0 && ok;
}

#if TERN_HAVE_AV
// 0.1 s of a tone through an FFmpeg encoder; true (nothing written) when this FFmpeg lacks
// the encoder or the muxer.
bool WriteAv(const std::string& path, const char* container, const char* encoder, int rate,
             int channels) {
  std::vector<float> buf(static_cast<size_t>(rate / 10) * channels);
  for (size_t i = 0; i < buf.size(); ++i) {
    buf[i] = 0.5f * std::sin(2.0f * 3.14159265f * 440.0f * static_cast<float>(i / channels) / rate);
  }
  auto bytes = tern::audio::testutil::EncodeWithAv(container, encoder, rate, channels, buf, 32000);
  return !bytes.ok() || WriteBytes(path, *bytes);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_audio_corpus OUTPUT_DIR\n");
    return 2;
  }
  const std::string d = std::string(argv[1]) + "/";
  bool ok = true;
  ok &= Write(d + "pcm16-24k.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 24000, 1, 0.05);
  ok &= Write(d + "pcm16-16k-stereo.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 16000, 2, 0.05);
  ok &= Write(d + "u8-8k.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_U8, 8000, 1, 0.1);
  ok &= Write(d + "pcm24-48k.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_24, 48000, 1, 0.02);
  ok &= Write(d + "pcm32-22k.wav", SF_FORMAT_WAV | SF_FORMAT_PCM_32, 22050, 1, 0.02);
  ok &= Write(d + "float-44k.wav", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 44100, 1, 0.02);
  ok &= Write(d + "wavex-3ch.wav", SF_FORMAT_WAVEX | SF_FORMAT_PCM_16, 16000, 3, 0.03);
  ok &= Write(d + "pcm16-16k.flac", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 16000, 1, 0.1);
  ok &= Write(d + "vorbis-16k.ogg", SF_FORMAT_OGG | SF_FORMAT_VORBIS, 16000, 1, 0.1);
  ok &= Write(d + "mp3-16k.mp3", SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, 16000, 1, 0.1);
  ok &= WriteRawWav(d + "truncated.wav", 0x7FFFFF00u, 64);
  ok &= WriteRawWav(d + "streaming.wav", 0xFFFFFFFFu, 800);
#if TERN_HAVE_AV
  ok &= WriteAv(d + "opus-48k-stereo.webm", "webm", "libopus", 48000, 2);
  ok &= WriteAv(d + "aac-24k.m4a", "ipod", "aac", 24000, 1);
  ok &= WriteAv(d + "aac-16k-stereo.mp4", "mp4", "aac", 16000, 2);
  ok &= WriteBytes(d + "playlist.m3u8",
                   "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nseg.ts\n#EXT-X-ENDLIST\n");
  ok &= WriteBytes(d + "list.ffconcat", "ffconcat version 1.0\nfile 'a.wav'\n");
#endif
  if (!ok) return 1;
  std::printf("make_audio_corpus: wrote seeds to %s\n", argv[1]);
  return 0;
}
