#include "engine/prompt.h"

#include <cstdio>

namespace tern::engine {
namespace {

constexpr const char* kSystem =
    "system\nYou are a helpful assistant that transcribes audio input into text output in JSON "
    "format.";
constexpr const char* kJsonKeys = " with these keys: Start, End, Speaker, Content";

}  // namespace

int64_t PadCount(int64_t n) { return (n + kSamplesPerFrame - 1) / kSamplesPerFrame; }

int64_t FrameCount(int64_t n) {
  // Every stride-s stage of the encoder outputs floor(len/s) frames, but at least one
  // (causal left padding, no right padding); the nested floors compose to floor(n/3200).
  return n < kSamplesPerFrame ? 1 : n / kSamplesPerFrame;
}

Result<Prompt> BuildPrompt(const text::Tokenizer& tok, const text::SpecialTokens& special,
                           int64_t n_samples, PromptFormat format, const std::string& context) {
  if (n_samples < 1) {
    return InvalidArgumentError("prompt: audio has %lld samples; need at least one",
                                static_cast<long long>(n_samples));
  }
  const int64_t n_pads = PadCount(n_samples);
  if (n_pads > (1 << 24)) {  // far beyond any context window; keeps int arithmetic safe
    return ResourceExhaustedError("prompt: %lld speech frames is beyond any context window",
                                  static_cast<long long>(n_pads));
  }
  Prompt p;
  char d[64];
  std::snprintf(
      d, sizeof(d), "%.2f",
      static_cast<double>(static_cast<float>(n_samples) / static_cast<float>(kModelSampleRate)));
  p.duration = d;

  std::string suffix = "\nThis is a " + p.duration + " seconds audio, ";
  const bool json = format == PromptFormat::kJson;
  if (context.empty()) {
    suffix += json ? std::string("please transcribe it") + kJsonKeys : "please transcribe it.";
  } else {
    suffix += "with extra info: " + context + "\n\nPlease transcribe it";
    suffix += json ? kJsonKeys : ".";
  }

  auto append_text = [&](const std::string& s) -> Status {
    auto ids = tok.Encode(s);
    if (!ids.ok()) return ids.status().WithPrefix("prompt");
    p.tokens.insert(p.tokens.end(), ids->begin(), ids->end());
    return Status::Ok();
  };
  p.tokens.push_back(special.im_start);
  TERN_RETURN_IF_ERROR(append_text(kSystem));
  p.tokens.push_back(special.im_end);
  TERN_RETURN_IF_ERROR(append_text("\n"));
  p.tokens.push_back(special.im_start);
  TERN_RETURN_IF_ERROR(append_text("user\n"));
  p.tokens.push_back(special.speech_start);
  p.pad_start = static_cast<int>(p.tokens.size());
  p.pad_count = static_cast<int>(n_pads);
  p.n_frames = static_cast<int>(FrameCount(n_samples));
  p.tokens.insert(p.tokens.end(), static_cast<size_t>(n_pads), special.speech_pad);
  p.tokens.push_back(special.speech_end);
  TERN_RETURN_IF_ERROR(append_text(suffix));
  p.tokens.push_back(special.im_end);
  TERN_RETURN_IF_ERROR(append_text("\n"));
  return p;
}

ContentRange StripAssistantHeader(const text::Tokenizer& tok, const text::SpecialTokens& special,
                                  std::span<const int32_t> g) {
  size_t begin = 0;
  if (g.size() >= 3 && g[0] == special.im_start) {
    begin = 1;
    if (tok.PieceWithSpecial(g[1]) == "assistant") {
      begin = 2;
      if (tok.PieceWithSpecial(g[2]) == "\n") begin = 3;
    }
  }
  size_t end = g.size();
  if (end > begin && special.IsStop(g[end - 1])) --end;
  return {begin, end};
}

}  // namespace tern::engine
