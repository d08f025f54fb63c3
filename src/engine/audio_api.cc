// The public audio entry points: the audio layer's loader with the public option names.
#include "audio/audio.h"
#include "tern/tern.h"

namespace tern {
namespace {

audio::AudioOptions ToInternal(const AudioOptions& o) {
  audio::AudioOptions a;
  a.normalize = o.normalize;
  a.clip_guard = o.clip_guard;
  a.max_seconds = o.max_seconds;
  a.offset_s = o.offset_s;
  a.duration_s = o.duration_s;
  return a;
}

Audio FromInternal(audio::Audio&& in, const std::string& name) {
  Audio out;
  out.name = name;
  out.samples = std::move(in.samples);
  out.source_rate = in.source_rate;
  out.source_channels = in.source_channels;
  out.offset_s = in.offset_s;
  out.gain = in.gain;
  return out;
}

}  // namespace

// The audio layer's rules, one place for both option structs.
Status AudioOptions::Validate() const { return ToInternal(*this).Validate(); }

Result<Audio> LoadAudio(const std::string& path, const AudioOptions& options) {
  TERN_RETURN_IF_ERROR(options.Validate());
  TERN_ASSIGN_OR_RETURN(audio::Audio a, audio::LoadAudio(path, ToInternal(options)));
  return FromInternal(std::move(a), path);
}

Result<Audio> LoadAudioFromMemory(const void* data, size_t size, const std::string& name,
                                  const AudioOptions& options) {
  TERN_RETURN_IF_ERROR(options.Validate());
  TERN_ASSIGN_OR_RETURN(audio::Audio a,
                        audio::LoadAudioFromMemory(data, size, name, ToInternal(options)));
  return FromInternal(std::move(a), name);
}

}  // namespace tern
