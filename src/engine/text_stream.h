// The transcript as it is decoded: TranscribeOptions::on_text's deltas.
//
// Contract: the deltas, in order, concatenate byte for byte to the transcript's text as the
// writers show it, TrimText(Transcript::text): each piece of the audio's text (one piece
// unless long audio went in several, engine/chunks.h AppendPiece) trimmed of " \t\r\n" at
// both ends, the non-empty ones joined by one space. Every delta but possibly the last
// ends at a UTF-8 character boundary (byte-level BPE splits characters across tokens; the
// last delta carries whatever bytes the model left, even an unfinished character, because
// the text does too). Empty deltas are never sent.
//
// So a piece's trailing blanks are held back until text follows them (or dropped when the
// piece ends), and the joining space goes out with the next piece's first non-blank byte.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace tern::engine {

class TextStream {
 public:
  using Sink = std::function<bool(std::string_view delta)>;  // false: stop (cancel)

  explicit TextStream(Sink sink) : sink_(std::move(sink)) {}

  // Bytes decoded since the last call. Returns false once the sink has asked to stop.
  bool Append(std::string_view bytes);
  // The current piece is complete: what is held back goes out, its trailing blanks do not.
  bool EndPiece();

  bool stopped() const { return stopped_; }

 private:
  bool Send(size_t n);         // the first n bytes of pending_
  size_t NonBlankEnd() const;  // pending_'s length without its trailing blanks

  Sink sink_;
  std::string pending_;         // decoded, not yet sent
  bool piece_started_ = false;  // a non-blank byte of this piece was seen
  bool any_text_ = false;       // an earlier piece had text
  bool stopped_ = false;
};

}  // namespace tern::engine
