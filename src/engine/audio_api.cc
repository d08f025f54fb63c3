// The public audio entry points: the audio layer's loader (its types are the public ones).
#include "audio/audio.h"
#include "tern/tern.h"

namespace tern {

Result<Audio> LoadAudio(const std::string& path, const AudioOptions& options) {
  return audio::LoadAudio(path, options);
}

Result<Audio> LoadAudioFromMemory(const void* data, size_t size, const std::string& name,
                                  const AudioOptions& options) {
  return audio::LoadAudioFromMemory(data, size, name, options);
}

}  // namespace tern
