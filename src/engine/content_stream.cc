#include "engine/content_stream.h"

#include <string>

namespace tern::engine {

std::optional<std::span<const int32_t>> Content(std::span<const int32_t> g,
                                                const text::Tokenizer& tok,
                                                const text::SpecialTokens& special) {
  if (g.empty()) return std::nullopt;
  if (g[0] != special.im_start) return g;
  if (g.size() < 3) return std::nullopt;
  return g.subspan(StripAssistantHeader(tok, special, g).begin);
}

bool ContentStreamer::Step(std::span<const int32_t> g) {
  if (stream_ == nullptr) return true;
  const auto content = Content(g, tok_, special_);
  if (!content) return true;
  std::string bytes;
  for (; sent_ + 1 < content->size(); ++sent_) bytes.append(tok_.Piece((*content)[sent_]));
  return stream_->Append(bytes);
}

bool ContentStreamer::Finish(std::span<const int32_t> g, const ContentRange& r) {
  if (stream_ == nullptr) return true;
  std::string bytes;
  for (size_t i = r.begin + sent_; i < r.end; ++i) bytes.append(tok_.Piece(g[i]));
  return stream_->Append(bytes) && stream_->EndPiece();
}

}  // namespace tern::engine
