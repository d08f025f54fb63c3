// UTF-8 helpers for the text layer: strict decoding into code points, encoding, and a
// streaming assembler that turns a byte stream (token pieces) into complete characters.
//
// "Valid" means RFC 3629: shortest form only, no surrogates (U+D800..U+DFFF), nothing
// above U+10FFFF. Text handed to the tokenizer must be valid; model output may not be
// (a model can emit half a character), which is what Utf8Assembler is for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tern::text {

// Length of the valid UTF-8 sequence at s[pos], or 0 if the bytes there are not one
// (bad lead byte, bad continuation, overlong, surrogate, > U+10FFFF or cut off).
size_t ValidUtf8SequenceLength(std::string_view s, size_t pos);

// Decodes `s` into code points. Returns false (and leaves `bad_offset` at the first bad
// byte) if `s` is not valid UTF-8.
bool DecodeUtf8(std::string_view s, std::vector<uint32_t>* cpts, size_t* bad_offset);

// Appends the UTF-8 encoding of `cpt` (must be <= U+10FFFF and not a surrogate).
void AppendUtf8(uint32_t cpt, std::string* out);

// Streaming UTF-8 assembly: feed arbitrary byte chunks, get back only complete, valid
// characters. An incomplete sequence at the end of a chunk is held until the next chunk;
// bytes that can never become valid are replaced by U+FFFD (one per maximal bad prefix,
// as the Unicode "substitution of maximal subparts" practice recommends).
class Utf8Assembler {
 public:
  // Returns the text that became complete with `bytes`.
  std::string Push(std::string_view bytes);
  // Ends the stream: a held incomplete sequence becomes U+FFFD.
  std::string Flush();
  bool has_pending() const { return !pending_.empty(); }

 private:
  std::string pending_;
};

}  // namespace tern::text
