#include "text/special_tokens.h"

#include <string>

namespace tern::text {
namespace {

constexpr int32_t kQwenEndOfText = 151643, kQwenImStart = 151644, kQwenImEnd = 151645;
constexpr int32_t kQwenSpeechStart = 151646, kQwenSpeechEnd = 151647, kQwenSpeechPad = 151648;

}  // namespace

Result<SpecialTokens> FindSpecialTokens(const Tokenizer& tok) {
  SpecialTokens s;
  s.endoftext = tok.Find("<|endoftext|>");
  s.im_start = tok.Find("<|im_start|>");
  s.im_end = tok.Find("<|im_end|>");
  s.speech_start = tok.Find("<|speech_start|>");
  s.speech_end = tok.Find("<|speech_end|>");
  s.speech_pad = tok.Find("<|speech_pad|>");

  const bool no_speech = s.speech_start < 0 && s.speech_end < 0 && s.speech_pad < 0;
  const bool qwen_chat =
      s.endoftext == kQwenEndOfText && s.im_start == kQwenImStart && s.im_end == kQwenImEnd;
  if (no_speech && qwen_chat && tok.valid_id(kQwenSpeechPad)) {
    bool usable = true;
    for (int32_t id : {kQwenSpeechStart, kQwenSpeechEnd, kQwenSpeechPad}) {
      usable = usable && tok.type(id) != TokenType::kNormal && tok.type(id) != TokenType::kByte;
    }
    if (usable) {
      s.speech_start = kQwenSpeechStart;
      s.speech_end = kQwenSpeechEnd;
      s.speech_pad = kQwenSpeechPad;
      s.qwen_mapping = true;
    }
  }

  std::string missing;
  auto need = [&](int32_t id, const char* name) {
    if (id >= 0) return;
    if (!missing.empty()) missing += ", ";
    missing += name;
  };
  need(s.endoftext, "<|endoftext|>");
  need(s.im_start, "<|im_start|>");
  need(s.im_end, "<|im_end|>");
  need(s.speech_start, "<|speech_start|>");
  need(s.speech_end, "<|speech_end|>");
  need(s.speech_pad, "<|speech_pad|>");
  if (!missing.empty()) {
    return FormatError(
        "%s: vocabulary lacks the special token(s) %s (and is not the Qwen2 "
        "vocabulary whose ids 151646-151648 VibeASR uses for speech)",
        tok.name().c_str(), missing.c_str());
  }
  return s;
}

}  // namespace tern::text
