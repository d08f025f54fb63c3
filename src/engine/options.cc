// Validate() for the public option structs: every bad value is reported with the option's
// name and the accepted range before any work starts.
#include <algorithm>
#include <cmath>

#include "tern/tern.h"

namespace tern {

Result<HeadPrecision> HeadPrecisionFromName(std::string_view name) {
  if (name == "f16") return HeadPrecision::kF16;
  if (name == "int8") return HeadPrecision::kInt8;
  return InvalidArgumentError("--head must be f16 or int8, not '%.*s'",
                              static_cast<int>(name.size()), name.data());
}

Status ModelOptions::Validate() const {
  if (model_dir.empty() && (vae_path.empty() || lm_path.empty())) {
    return InvalidArgumentError("no model: give --model DIR, or both --vae FILE and --lm FILE");
  }
  return Status::Ok();
}

Status DecodingOptions::Validate() const {
  if (!(temperature >= 0.0f) || !std::isfinite(temperature) || temperature > 100.0f)
    return InvalidArgumentError("temperature must be in [0, 100], got %g", temperature);
  if (top_k < 0) return InvalidArgumentError("top-k must be >= 0, got %d", top_k);
  if (!(top_p > 0.0f && top_p <= 1.0f))
    return InvalidArgumentError("top-p must be in (0, 1], got %g", top_p);
  if (beam < 0 || beam > 16)
    return InvalidArgumentError("beam must be in [1, 16] (0: the model's), got %d", beam);
  if (beam > 1 && temperature > 0.0f)
    return InvalidArgumentError("beam search is deterministic: use --beam with temperature 0");
  if (max_tokens < 1 || max_tokens > 1 << 20)
    return InvalidArgumentError("max tokens must be in [1, 1048576], got %d", max_tokens);
  if (repetition_max_repeats < 2)
    return InvalidArgumentError("repetition repeats must be >= 2, got %d", repetition_max_repeats);
  if (!(hotword_boost >= 0.0f && hotword_boost <= 20.0f))
    return InvalidArgumentError("hotword boost must be in [0, 20], got %g", hotword_boost);
  if (hotwords.size() > 1000)
    return InvalidArgumentError("%zu hotwords; at most 1000 are accepted", hotwords.size());
  for (const std::string& w : hotwords) {
    if (w.empty() || w.find_first_not_of(" \t\n") == std::string::npos)
      return InvalidArgumentError("a hotword is empty");
    if (w.size() > 100)
      return InvalidArgumentError("hotword \"%.20s...\" is %zu bytes; at most 100 are accepted",
                                  w.c_str(), w.size());
  }
  return Status::Ok();
}

Result<std::vector<std::string>> SplitHotwords(std::string_view list) {
  std::vector<std::string> words;
  for (size_t b = 0; b <= list.size();) {
    const size_t e = std::min(list.find(',', b), list.size());
    const std::string_view w = list.substr(b, e - b);
    const size_t first = w.find_first_not_of(' '), last = w.find_last_not_of(' ');
    if (first == std::string_view::npos)
      return InvalidArgumentError("an empty word in '%.*s'", static_cast<int>(list.size()),
                                  list.data());
    words.emplace_back(w.substr(first, last - first + 1));
    b = e + 1;
  }
  return words;
}

Status FormatOptions::Validate() const {
  if (max_cue_chars != 0 && (max_cue_chars < 8 || max_cue_chars > 10000))
    return InvalidArgumentError("max cue chars must be 0 (off) or in [8, 10000], got %d",
                                max_cue_chars);
  return Status::Ok();
}

Status TranscribeOptions::Validate() const {
  if (context.size() > 64 * 1024)
    return InvalidArgumentError("context is %zu bytes; at most 65536 are accepted", context.size());
  if (!(chunk_seconds == 0 || (chunk_seconds >= 1 && chunk_seconds <= 1e6)))
    return InvalidArgumentError("chunk seconds must be 0 (automatic) or in [1, 1e6], got %g",
                                chunk_seconds);
  if (!(snap_seconds == -1 || (snap_seconds >= 0 && snap_seconds <= 60)))
    return InvalidArgumentError(
        "snap seconds must be -1 (the model's), 0 (off) or up to 60, got %g", snap_seconds);
  if (!(no_speech_floor_dbfs >= -150.0 && no_speech_floor_dbfs <= 0.0))
    return InvalidArgumentError("no-speech floor must be in [-150, 0] dBFS, got %g",
                                no_speech_floor_dbfs);
  return decoding.Validate();
}

}  // namespace tern
