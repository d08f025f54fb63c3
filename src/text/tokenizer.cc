#include "text/tokenizer.h"

#include <queue>

#include "text/unicode.h"

namespace tern::text {
namespace {

// Bytes a token decodes to with special=false (see the header).
std::string DecodeTokenText(const std::string& text, TokenType type) {
  switch (type) {
    case TokenType::kNormal:
    case TokenType::kByte:
    case TokenType::kUndefined: {
      std::string out;
      std::vector<uint32_t> cpts;
      if (!DecodeUtf8(text, &cpts, nullptr)) return text;
      for (uint32_t c : cpts) {
        const int b = UnicodeToByte(c);
        // A code point outside the byte alphabet cannot come from a converter; keep it
        // as text rather than lose it.
        if (b >= 0)
          out.push_back(static_cast<char>(b));
        else
          AppendUtf8(c, &out);
      }
      return out;
    }
    case TokenType::kUserDefined:
      return text;
    default:
      return {};
  }
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::Create(std::vector<std::string> tokens,
                                                     const std::vector<std::string>& merges,
                                                     std::vector<TokenType> types,
                                                     PreTokenizerType pre,
                                                     const std::string& name) {
  if (tokens.empty()) return FormatError("%s: the vocabulary is empty", name.c_str());
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) {
    return FormatError("%s: vocabulary of %zu tokens is too large", name.c_str(), tokens.size());
  }
  if (types.empty()) types.assign(tokens.size(), TokenType::kNormal);
  if (types.size() != tokens.size()) {
    return FormatError("%s: %zu token types for %zu tokens", name.c_str(), types.size(),
                       tokens.size());
  }
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  t->name_ = name;
  TERN_ASSIGN_OR_RETURN(t->pre_, PreTokenizer::Create(pre));
  t->tokens_ = std::move(tokens);
  t->types_ = std::move(types);
  t->pieces_.reserve(t->tokens_.size());
  t->token_to_id_.reserve(t->tokens_.size());
  for (size_t i = 0; i < t->tokens_.size(); ++i) {
    const auto ty = t->types_[i];
    if (static_cast<uint8_t>(ty) > static_cast<uint8_t>(TokenType::kByte)) {
      return FormatError("%s: token %zu has unknown type %d", name.c_str(), i,
                         static_cast<int>(ty));
    }
    t->pieces_.push_back(DecodeTokenText(t->tokens_[i], ty));
    t->token_to_id_.emplace(t->tokens_[i], static_cast<int32_t>(i));  // first id wins
  }
  t->merge_rank_.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const std::string& m = merges[r];
    // The separator is the first space after the first character (a token text never
    // contains a raw space: space is 'Ġ' in the byte alphabet).
    const size_t sp = m.find(' ', 1);
    if (sp == std::string::npos || sp + 1 >= m.size()) {
      return FormatError("%s: merge %zu ('%s') is not 'left right'", name.c_str(), r, m.c_str());
    }
    t->merge_rank_.emplace(m, static_cast<int32_t>(r));  // a repeated pair keeps its first rank
  }
  return t;
}

int32_t Tokenizer::Find(std::string_view text) const {
  auto it = token_to_id_.find(text);
  return it == token_to_id_.end() ? -1 : it->second;
}

std::string_view Tokenizer::Piece(int32_t id) const {
  return valid_id(id) ? std::string_view(pieces_[id]) : std::string_view();
}

std::string_view Tokenizer::PieceWithSpecial(int32_t id) const {
  if (!valid_id(id)) return {};
  if (types_[id] == TokenType::kControl) return tokens_[id];
  return pieces_[id];
}

std::string Tokenizer::Decode(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) out.append(Piece(id));
  return out;
}

Result<std::vector<int32_t>> Tokenizer::Encode(std::string_view text) const {
  size_t bad = 0;
  std::vector<uint32_t> cpts;
  if (!DecodeUtf8(text, &cpts, &bad)) {
    return InvalidArgumentError("%s: text is not valid UTF-8 (byte offset %zu)", name_.c_str(),
                                bad);
  }
  std::vector<int32_t> out;
  auto words = pre_.Split(text);
  if (!words.ok()) return words.status().WithPrefix(name_);
  for (std::string_view word : *words) TERN_RETURN_IF_ERROR(EncodeWord(word, &out));
  return out;
}

Status Tokenizer::EncodeWord(std::string_view word, std::vector<int32_t>* out) const {
  std::string enc;  // the word in the byte alphabet
  for (char c : word) enc.append(ByteToUnicode(static_cast<uint8_t>(c)));

  // Symbols form a linked list over `enc`; merged-away symbols keep len 0.
  struct Sym {
    size_t start, len;
    int prev, next;
  };
  std::vector<Sym> syms;
  for (size_t p = 0; p < enc.size();) {
    const size_t n = ValidUtf8SequenceLength(enc, p);
    syms.push_back({p, n, static_cast<int>(syms.size()) - 1, static_cast<int>(syms.size()) + 1});
    p += n;
  }
  if (syms.empty()) return Status::Ok();
  syms.back().next = -1;

  struct Bigram {
    int32_t rank;
    int left, right;
    size_t len;  // combined length when queued: a stale entry no longer matches it
  };
  auto later = [](const Bigram& a, const Bigram& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::priority_queue<Bigram, std::vector<Bigram>, decltype(later)> queue(later);
  std::string key;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Sym &a = syms[left], &b = syms[right];
    key.assign(enc, a.start, a.len);
    key.push_back(' ');
    key.append(enc, b.start, b.len);
    auto it = merge_rank_.find(key);
    if (it != merge_rank_.end()) queue.push({it->second, left, right, a.len + b.len});
  };
  for (size_t i = 0; i + 1 < syms.size(); ++i)
    try_add(static_cast<int>(i), static_cast<int>(i) + 1);

  while (!queue.empty()) {
    const Bigram bg = queue.top();
    queue.pop();
    Sym& a = syms[bg.left];
    Sym& b = syms[bg.right];
    if (a.len == 0 || b.len == 0 || a.next != bg.right || a.len + b.len != bg.len) continue;
    a.len += b.len;
    b.len = 0;
    a.next = b.next;
    if (b.next >= 0) syms[b.next].prev = bg.left;
    try_add(a.prev, bg.left);
    try_add(bg.left, a.next);
  }

  for (int i = 0; i >= 0; i = syms[i].next) {
    const std::string_view s = std::string_view(enc).substr(syms[i].start, syms[i].len);
    const int32_t id = Find(s);
    if (id < 0) {
      return FormatError(
          "%s: no token for BPE symbol '%.*s' (vocabulary lacks a byte or merge "
          "result)",
          name_.c_str(), static_cast<int>(s.size()), s.data());
    }
    out->push_back(id);
  }
  return Status::Ok();
}

}  // namespace tern::text
