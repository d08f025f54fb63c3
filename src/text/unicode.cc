#include "text/unicode.h"

#include <array>
#include <vector>

#include "base/check.h"
#include "text/regex.h"
#include "text/utf8.h"

namespace tern::text {
namespace {

constexpr uint32_t kMaxCodepoint = 0x10FFFF;

struct ByteMap {
  std::array<std::string, 256> to_unicode;
  std::array<int16_t, 512> to_byte;  // every stand-in is below U+0200
  ByteMap() {
    to_byte.fill(-1);
    auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const int cpt = printable(b) ? b : next++;
      AppendUtf8(static_cast<uint32_t>(cpt), &to_unicode[b]);
      to_byte[cpt] = static_cast<int16_t>(b);
    }
    TERN_CHECK(next == 0x100 + 68);
  }
};

const ByteMap& GetByteMap() {
  static const ByteMap map;
  return map;
}

constexpr uint32_t kWhitespace[] = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,
                                    0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
                                    0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028,
                                    0x2029, 0x202F, 0x205F, 0x3000};

// Built once from PCRE2's own tables: every scalar value is written out as UTF-8 and the
// runs matched by \p{L}+ and \p{N}+ are marked (a few milliseconds with JIT).
std::vector<uint8_t> BuildClassTable() {
  std::vector<uint8_t> table(kMaxCodepoint + 1, 0);
  std::string all;
  all.reserve(4500000);
  for (uint32_t c = 0; c <= kMaxCodepoint; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    AppendUtf8(c, &all);
  }
  auto mark = [&](const char* pattern, uint8_t bit) {
    auto re = Regex::Compile(pattern);
    TERN_CHECK(re.ok());
    std::vector<uint32_t> cpts;
    std::vector<std::pair<size_t, size_t>> runs;
    TERN_CHECK(re->FindAll(all, &runs).ok());
    for (auto [b, e] : runs) {
      TERN_CHECK(DecodeUtf8(std::string_view(all).substr(b, e - b), &cpts, nullptr));
      for (uint32_t c : cpts) table[c] |= bit;
    }
  };
  mark("\\p{L}+", kCpLetter);
  mark("\\p{N}+", kCpNumber);
  for (uint32_t c : kWhitespace) table[c] |= kCpWhitespace;
  return table;
}

}  // namespace

const std::string& ByteToUnicode(uint8_t b) { return GetByteMap().to_unicode[b]; }

int UnicodeToByte(uint32_t cpt) { return cpt < 512 ? GetByteMap().to_byte[cpt] : -1; }

uint8_t CodepointClass(uint32_t cpt) {
  static const std::vector<uint8_t> table = BuildClassTable();
  return cpt <= kMaxCodepoint ? table[cpt] : 0;
}

const char* WhitespaceClassBody() {
  return "\\x{09}-\\x{0D}\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
         "\\x{202F}\\x{205F}\\x{3000}";
}

}  // namespace tern::text
