// Decoding with libsndfile (then FFmpeg, av_decode.h, for what libsndfile does not read);
// each decoder hands its frames to Pipeline (mono -> resample -> normalize).
#include "audio/audio.h"

#include <sndfile.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>

#include "audio/av_decode.h"
#include "audio/pipeline.h"
#include "base/mapped_file.h"

namespace tern::audio {
namespace {

// libsndfile virtual I/O over caller memory.
struct MemStream {
  const uint8_t* data;
  sf_count_t size;
  sf_count_t pos;
};
sf_count_t MemLength(void* u) { return static_cast<MemStream*>(u)->size; }
sf_count_t MemSeek(sf_count_t off, int whence, void* u) {
  auto* m = static_cast<MemStream*>(u);
  sf_count_t p = whence == SEEK_SET ? off : whence == SEEK_CUR ? m->pos + off : m->size + off;
  if (p < 0 || p > m->size) return -1;
  m->pos = p;
  return p;
}
sf_count_t MemRead(void* dst, sf_count_t n, void* u) {
  auto* m = static_cast<MemStream*>(u);
  const sf_count_t k = std::min(n, m->size - m->pos);
  if (k <= 0) return 0;
  std::memcpy(dst, m->data + m->pos, static_cast<size_t>(k));
  m->pos += k;
  return k;
}
sf_count_t MemWrite(const void*, sf_count_t, void*) { return 0; }
sf_count_t MemTell(void* u) { return static_cast<MemStream*>(u)->pos; }

struct SndfileCloser {
  void operator()(SNDFILE* f) const { sf_close(f); }
};
using SndfilePtr = std::unique_ptr<SNDFILE, SndfileCloser>;

constexpr sf_count_t kBlockFrames = 1 << 15;

// A WAV whose data chunk promises more bytes than the file holds was cut short (an
// interrupted download or upload). libsndfile silently reads what is there; its log says
// "data : <declared> (should be <present>)". 0 and 0xFFFFFFFF are the placeholders that
// streaming writers (ffmpeg to a pipe) leave, not truncation.
Status CheckWavTruncation(SNDFILE* f, const SF_INFO& info, const std::string& name) {
  const int major = info.format & SF_FORMAT_TYPEMASK;
  if (major != SF_FORMAT_WAV && major != SF_FORMAT_WAVEX) return Status::Ok();
  char log[8192] = {0};
  sf_command(f, SFC_GET_LOG_INFO, log, sizeof(log));
  const char* d = std::strstr(log, "\ndata : ");
  unsigned long long declared = 0, present = 0;
  if (d != nullptr && std::sscanf(d, "\ndata : %llu (should be %llu)", &declared, &present) == 2 &&
      declared > present && declared != 0xFFFFFFFFull) {
    return FormatError(
        "%s: truncated WAV: the header declares %llu bytes of audio data, the file "
        "holds %llu",
        name.c_str(), declared, present);
  }
  return Status::Ok();
}

Result<Audio> Decode(SNDFILE* f, const SF_INFO& info, const std::string& name,
                     const AudioOptions& options, Resampler resampler) {
  TERN_ASSIGN_OR_RETURN(std::unique_ptr<Pipeline> p,
                        Pipeline::Create(name, info.samplerate, info.channels, options, resampler));
  if (info.frames != SF_COUNT_MAX) TERN_RETURN_IF_ERROR(p->CheckDeclaredFrames(info.frames));
  TERN_RETURN_IF_ERROR(CheckWavTruncation(f, info, name));
  std::vector<float> block(static_cast<size_t>(kBlockFrames) * info.channels);
  for (;;) {
    const sf_count_t got = sf_readf_float(f, block.data(), kBlockFrames);
    if (got <= 0) break;
    TERN_RETURN_IF_ERROR(p->Push(block.data(), static_cast<size_t>(got)));
  }
  const char* n = name.c_str();
  if (sf_error(f) != SF_ERR_NO_ERROR) {
    return FormatError("%s: decoding failed after %lld frames (truncated or corrupt file?): %s", n,
                       static_cast<long long>(p->frames()), sf_strerror(f));
  }
  // FLAC's STREAMINFO holds the exact length; fewer decoded frames means a cut stream.
  if ((info.format & SF_FORMAT_TYPEMASK) == SF_FORMAT_FLAC && info.frames > 0 && p->frames() > 0 &&
      p->frames() < info.frames) {
    return FormatError(
        "%s: truncated or corrupt FLAC: the header declares %lld frames, only %lld "
        "decode",
        n, static_cast<long long>(info.frames), static_cast<long long>(p->frames()));
  }
  return p->Finish();
}

// libsndfile keeps the reason for a failed open in a global: opens are serialised so that
// concurrent loads (a server) each report their own reason. Reading is per handle and runs
// in parallel.
std::mutex& OpenMutex() {
  static std::mutex m;
  return m;
}

// Call with OpenMutex() held: the message of the last failed open.
std::string OpenFailure() { return sf_strerror(nullptr); }

}  // namespace

Result<Audio> LoadAudio(const std::string& path, const AudioOptions& options, Resampler resampler) {
  TERN_RETURN_IF_ERROR(options.Validate());
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT) return NotFoundError("%s: no such file", path.c_str());
    return IoError("%s: %s", path.c_str(), std::strerror(e));
  }
  if (S_ISDIR(st.st_mode))
    return InvalidArgumentError("%s: is a directory, not an audio file", path.c_str());
  if (st.st_size == 0) return FormatError("%s: file is empty", path.c_str());
  SF_INFO info{};
  SndfilePtr f;
  std::string reason;
  {
    std::lock_guard<std::mutex> lock(OpenMutex());
    f.reset(sf_open(path.c_str(), SFM_READ, &info));
    if (!f) reason = OpenFailure();
  }
  if (f) return Decode(f.get(), info, path, options, resampler);
  // Not a format libsndfile reads: FFmpeg's turn, over a read-only map of the file (nothing
  // is copied; the demuxer reads what it needs).
  if (!AvAvailable()) return DecodeWithAv(nullptr, 0, path, options, resampler, reason);
  TERN_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> map, MappedFile::Open(path));
  return DecodeWithAv(map->data(), map->size(), path, options, resampler, reason);
}

Result<Audio> LoadAudioFromMemory(const void* data, size_t size, const std::string& name,
                                  const AudioOptions& options, Resampler resampler) {
  TERN_RETURN_IF_ERROR(options.Validate());
  if (size == 0) return FormatError("%s: no bytes (empty input)", name.c_str());
  SF_VIRTUAL_IO io{MemLength, MemSeek, MemRead, MemWrite, MemTell};
  MemStream m{static_cast<const uint8_t*>(data), static_cast<sf_count_t>(size), 0};
  SF_INFO info{};
  SndfilePtr f;
  std::string reason;
  {
    std::lock_guard<std::mutex> lock(OpenMutex());
    f.reset(sf_open_virtual(&io, SFM_READ, &info, &m));
    if (!f) reason = OpenFailure();
  }
  if (f) return Decode(f.get(), info, name, options, resampler);
  return DecodeWithAv(static_cast<const uint8_t*>(data), size, name, options, resampler, reason);
}

}  // namespace tern::audio

namespace tern {

// The public AudioOptions' rules live with the loader that reads them.
Status AudioOptions::Validate() const {
  if (!(max_seconds > 0) || !std::isfinite(max_seconds)) {
    return InvalidArgumentError("max audio seconds must be a positive number, got %g", max_seconds);
  }
  if (max_seconds > 1e7) {  // ~115 days: far past memory; rejects typos like 1e12
    return InvalidArgumentError("max audio seconds %g is absurd (limit 1e7)", max_seconds);
  }
  if (!(offset_s >= 0 && offset_s <= 1e7))
    return InvalidArgumentError("--offset must be in [0, 1e7] seconds, got %g", offset_s);
  if (!(duration_s >= 0 && duration_s <= 1e7))
    return InvalidArgumentError("--duration must be in [0, 1e7] seconds (0: to the end), got %g",
                                duration_s);
  return Status::Ok();
}

}  // namespace tern
