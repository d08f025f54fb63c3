// What a loaded Model holds: the two networks, the tokenizer and the special tokens.
// Immutable after Model::Load; shared by every Session.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/speakers.h"
#include "gguf/gguf.h"
#include "models/vibeasr/decoder.h"
#include "models/vibeasr/encoder.h"
#include "tern/tern.h"
#include "text/special_tokens.h"
#include "text/tokenizer.h"

namespace tern {

struct Model::Impl {
  ModelInfo info;
  std::unique_ptr<gguf::File> lm_file;  // the decoder uses its mapping in place
  std::unique_ptr<vibeasr::Encoder> encoder;
  std::unique_ptr<vibeasr::Decoder> decoder;
  std::unique_ptr<text::Tokenizer> tokenizer;
  text::SpecialTokens special;
  // Declared by a model that does not tell voices apart: the engine labels speakers itself.
  std::optional<engine::VoiceProjection> voices;
};

}  // namespace tern
