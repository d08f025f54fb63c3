// Code point classes and the GPT-2 byte <-> unicode map used by byte-level BPE.
//
// Byte-level BPE works on bytes but stores its vocabulary as printable text: each byte b
// is shown as one code point. Bytes that are printable Latin-1 ('!'..'~', U+00A1..U+00AC,
// U+00AE..U+00FF) stand for themselves; the other 68 (controls, space, U+00AD...) are
// mapped in increasing byte order to U+0100, U+0101, ... So ' ' (0x20) is U+0120 'Ġ' and
// '\n' is U+010A 'Ċ'.
#pragma once

#include <cstdint>
#include <string>

namespace tern::text {

// UTF-8 text of the code point that stands for byte `b`.
const std::string& ByteToUnicode(uint8_t b);
// The byte a code point stands for, or -1 if it is not one of the 256 stand-ins.
int UnicodeToByte(uint32_t cpt);

// Code point classes as the pre-tokenizers see them.
//  letter: general category L*; number: N* (Nd, Nl, No) — both from PCRE2's Unicode
//  tables, so the custom GPT-2 splitter and the regexes never disagree;
//  whitespace: the Unicode White_Space property (25 code points, listed in unicode.cc),
//  the set llama.cpp uses.
enum CpClass : uint8_t { kCpLetter = 1, kCpNumber = 2, kCpWhitespace = 4 };
uint8_t CodepointClass(uint32_t cpt);  // 0 for anything above U+10FFFF

// A PCRE2 character class body (without brackets) for White_Space, so that the regex
// pre-tokenizers use exactly the same whitespace as CodepointClass.
const char* WhitespaceClassBody();

}  // namespace tern::text
