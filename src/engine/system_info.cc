#include "audio/av_decode.h"
#include "base/cpu_features.h"
#include "kernels/kernels.h"
#include "tern/tern.h"

namespace tern {

Result<std::string> SystemInfo() {
  std::string s = "cpu features: " + GetCpuFeatures().ToString() + "\navailable isas:";
  size_t n = 0;
  const kernels::Isa* isas = kernels::AvailableIsas(&n);
  for (size_t i = 0; i < n; ++i) s += std::string(" ") + kernels::IsaName(isas[i]);
  TERN_ASSIGN_OR_RETURN(const kernels::Isa chosen, kernels::SelectIsa());
  s += std::string("\nchosen isa: ") + kernels::IsaName(chosen) + "\n";
  // Which containers this build reads (docs/cli.md, Audio input).
  s += "audio decoders: libsndfile" +
       (audio::AvAvailable() ? ", FFmpeg (" + audio::AvVersions() + ")"
                             : std::string(" (built without FFmpeg: no m4a/mp4/webm)")) +
       "\n";
  return s;
}

std::string VersionString() {
  std::string s = "tern " TERN_VERSION " (git " TERN_GIT_HASH ") isas:";
  size_t n = 0;
  const kernels::Isa* isas = kernels::AvailableIsas(&n);
  for (size_t i = 0; i < n; ++i) s += std::string(" ") + kernels::IsaName(isas[i]);
  return s;
}

}  // namespace tern
