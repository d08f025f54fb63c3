// Hostile GGUF inputs: every malformed case the reader must refuse returns kFormat or
// kUnsupported with a message naming the file, the byte offset and the key/tensor at fault.
// Files are built byte by byte (Bytes) or made by the Writer and then patched.
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>

#include "gguf/gguf.h"
#include "gguf/writer.h"

namespace tern::gguf {
namespace {

constexpr const char* kName = "hostile.gguf";

// A little-endian byte builder for hand-made files.
struct Bytes {
  std::string s;
  Bytes& U8(uint8_t v) { return Raw(&v, 1); }
  Bytes& U32(uint32_t v) { return Raw(&v, 4); }
  Bytes& U64(uint64_t v) { return Raw(&v, 8); }
  Bytes& Str(const std::string& v) {
    U64(v.size());
    s += v;
    return *this;
  }
  Bytes& Raw(const void* p, size_t n) {
    s.append(static_cast<const char*>(p), n);
    return *this;
  }
  Bytes& Header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    return U32(0x46554747).U32(version).U64(n_tensors).U64(n_kv);
  }
  // A tensor info record.
  Bytes& Tensor(const std::string& name, std::initializer_list<uint64_t> ne, uint32_t type,
                uint64_t offset) {
    Str(name).U32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) U64(d);
    return U32(type).U64(offset);
  }
  Bytes& PadTo(size_t a) {
    s.resize((s.size() + a - 1) / a * a, '\0');
    return *this;
  }
  Bytes& Zeros(size_t n) {
    s.append(n, '\0');
    return *this;
  }
};

Result<std::unique_ptr<File>> ParseImage(const std::string& image) {
  return File::Parse(reinterpret_cast<const uint8_t*>(image.data()), image.size(), kName);
}

// Expects `image` to fail with `code` and a message holding the file name, "offset <at>"
// and every string in `parts`.
void ExpectRejected(const std::string& image, ErrorCode code, uint64_t at,
                    std::initializer_list<const char*> parts) {
  auto r = ParseImage(image);
  ASSERT_FALSE(r.ok()) << "accepted a malformed file";
  const std::string& msg = r.status().message();
  EXPECT_EQ(r.status().code(), code) << msg;
  EXPECT_EQ(msg.rfind(kName, 0), 0u) << msg;
  EXPECT_NE(msg.find(StrFormat("offset %llu:", static_cast<unsigned long long>(at))),
            std::string::npos)
      << msg;
  for (const char* p : parts)
    EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' in: " << msg;
}

// One F32 tensor {4} at offset 0 with the given name/ids; a valid file unless patched.
std::string OneTensor(const std::string& name = "w", uint32_t type = 0,
                      std::initializer_list<uint64_t> ne = {4}, uint64_t offset = 0,
                      size_t data_bytes = 32) {
  Bytes b;
  b.Header(1, 0).Tensor(name, ne, type, offset).PadTo(32).Zeros(data_bytes);
  return b.s;
}

TEST(GgufHostile, HandMadeValidFileParses) {
  auto r = ParseImage(OneTensor());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->tensors()[0].n_bytes, 16u);
  Bytes v2;
  v2.Header(0, 1, /*version=*/2).Str("k").U32(4).U32(9).PadTo(32);
  auto r2 = ParseImage(v2.s);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ((*r2)->version(), 2u);
  EXPECT_TRUE(ParseImage(Bytes().Header(0, 0).PadTo(32).s).ok());
}

TEST(GgufHostile, Header) {
  ExpectRejected("", ErrorCode::kFormat, 0, {"truncated", "magic"});
  ExpectRejected("GGUF\x03", ErrorCode::kFormat, 4, {"truncated", "version"});
  ExpectRejected(Bytes().U32(0x46554746).U32(3).s, ErrorCode::kFormat, 0, {"bad magic"});
  ExpectRejected(Bytes().Header(0, 0, 1).s, ErrorCode::kUnsupported, 4, {"version 1"});
  ExpectRejected(Bytes().Header(0, 0, 4).s, ErrorCode::kUnsupported, 4, {"version 4"});
  ExpectRejected(Bytes().Header(0, 0, 0).s, ErrorCode::kFormat, 4, {"bad GGUF version 0"});
  ExpectRejected(Bytes().Header(0, 0, 0x03000000).s, ErrorCode::kUnsupported, 4, {"big-endian"});
  ExpectRejected(Bytes().U32(0x46554747).U32(3).U64(0).U32(0).s, ErrorCode::kFormat, 16,
                 {"truncated", "KV count"});
}

TEST(GgufHostile, AbsurdCounts) {
  // Counts the remaining bytes cannot hold are refused before anything is reserved.
  ExpectRejected(Bytes().Header(0, uint64_t{1} << 62).Zeros(64).s, ErrorCode::kFormat, 16,
                 {"KV count"});
  ExpectRejected(Bytes().Header(~uint64_t{0}, 0).Zeros(64).s, ErrorCode::kFormat, 8,
                 {"tensor count"});
  ExpectRejected(Bytes().Header(2, 0).Zeros(40).s, ErrorCode::kFormat, 8, {"tensor count"});
}

TEST(GgufHostile, LyingLengths) {
  ExpectRejected(Bytes().Header(0, 1).U64(~uint64_t{0}).Zeros(16).s, ErrorCode::kFormat, 24,
                 {"key length"});
  Bytes s;
  s.Header(0, 1).Str("k").U32(8).U64(uint64_t{1} << 40).Zeros(8);
  ExpectRejected(s.s, ErrorCode::kFormat, 37, {"string value length", "key 'k'"});
  Bytes a;  // 2^61 u64 elements
  a.Header(0, 1).Str("k").U32(9).U32(10).U64(uint64_t{1} << 61).Zeros(16);
  ExpectRejected(a.s, ErrorCode::kFormat, 41, {"array of", "cannot fit", "key 'k'"});
  Bytes n;  // tensor name length
  n.Header(1, 0).U64(1000).Zeros(40);
  ExpectRejected(n.s, ErrorCode::kFormat, 24, {"tensor name length"});
}

TEST(GgufHostile, BadValues) {
  ExpectRejected(Bytes().Header(0, 1).Str("k").U32(13).Zeros(8).s, ErrorCode::kFormat, 33,
                 {"unknown value type 13", "key 'k'"});
  ExpectRejected(Bytes().Header(0, 1).Str("k").U32(9).U32(77).U64(0).Zeros(8).s, ErrorCode::kFormat,
                 37, {"unknown array element type 77"});
  ExpectRejected(Bytes().Header(0, 1).Str("k").U32(7).U8(2).Zeros(12).s, ErrorCode::kFormat, 37,
                 {"bool value 2"});
  ExpectRejected(Bytes().Header(0, 1).Str("k").U32(6).U8(0).s, ErrorCode::kFormat, 37,
                 {"truncated", "f32 value", "key 'k'"});
}

TEST(GgufHostile, ArrayElementsAreCapped) {
  // Legal at the cap, refused one past it (summed over keys).
  const uint64_t half = kMaxKvArrayElements / 2;
  Bytes ok;
  ok.Header(0, 2).Str("a").U32(9).U32(0).U64(half).Zeros(half);
  ok.Str("b").U32(9).U32(0).U64(half).Zeros(half).PadTo(32);
  auto r = ParseImage(ok.s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->Find("b")->arr.size(), half);
  Bytes over;
  over.Header(0, 2).Str("a").U32(9).U32(0).U64(half).Zeros(half);
  const uint64_t at = over.s.size() + 9 + 4 + 4;
  over.Str("b").U32(9).U32(0).U64(half + 1).Zeros(half + 1).PadTo(32);
  ExpectRejected(over.s, ErrorCode::kUnsupported, at, {"array elements", "key 'b'"});
}

std::string NestedArrays(int depth) {
  Bytes b;
  b.Header(0, 1).Str("deep").U32(9);
  for (int d = 0; d < depth - 1; ++d) b.U32(9).U64(1);  // array of one array ...
  b.U32(4).U64(0);                                      // ... of zero u32
  return b.PadTo(32).s;
}

TEST(GgufHostile, NestingDepthIsCapped) {
  auto ok = ParseImage(NestedArrays(kMaxArrayDepth));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  const Value* v = (*ok)->Find("deep");
  for (int d = 1; d < kMaxArrayDepth; ++d) v = &v->arr.at(0);
  EXPECT_EQ(v->elem_type, ValueType::kU32);
  // header 24 + key "deep" 12 + type 4, then 12 bytes per array level.
  const uint64_t at = 24 + 12 + 4 + static_cast<uint64_t>(kMaxArrayDepth) * 12;
  ExpectRejected(NestedArrays(kMaxArrayDepth + 1), ErrorCode::kFormat, at, {"nested deeper"});
  // Thousands of levels must not recurse: refused at the cap.
  Bytes b;
  b.Header(0, 1).Str("k").U32(9);
  for (int d = 0; d < 100000; ++d) b.U32(9).U64(1);
  auto r = ParseImage(b.s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nested deeper"), std::string::npos);
}

TEST(GgufHostile, KeysAndNames) {
  ExpectRejected(Bytes().Header(0, 1).Str("").U32(4).U32(1).s, ErrorCode::kFormat, 24,
                 {"empty key"});
  ExpectRejected(Bytes().Header(0, 1).Str("a\xff").U32(4).U32(1).s, ErrorCode::kFormat, 24,
                 {"key is not valid UTF-8", "byte 1"});
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82", "a\0b"}) {
    const std::string key(bad, bad[0] == 'a' ? 3 : std::strlen(bad));
    ExpectRejected(Bytes().Header(0, 1).Str(key).U32(4).U32(1).s, ErrorCode::kFormat, 24,
                   {"not valid UTF-8"});
  }
  auto good =
      ParseImage(Bytes().Header(0, 1).Str("\xf0\x9f\x90\xa6.\xc3\xa9").U32(4).U32(1).PadTo(32).s);
  EXPECT_TRUE(good.ok()) << good.status().ToString();
  Bytes dup;
  dup.Header(0, 2).Str("k").U32(4).U32(1).Str("k").U32(4).U32(2);
  ExpectRejected(dup.s, ErrorCode::kFormat, 24 + 17, {"duplicate key 'k'"});

  ExpectRejected(OneTensor("bad\xc3"), ErrorCode::kFormat, 24, {"tensor name is not valid UTF-8"});
  ExpectRejected(OneTensor(""), ErrorCode::kFormat, 24, {"empty tensor name"});
  Bytes two;
  two.Header(2, 0).Tensor("w", {4}, 0, 0).Tensor("w", {4}, 0, 32).PadTo(32).Zeros(64);
  ExpectRejected(two.s, ErrorCode::kFormat, 24 + 33, {"duplicate tensor name 'w'"});
}

std::string WithAlignment(uint32_t type, uint64_t value) {
  Bytes b;
  b.Header(0, 1).Str("general.alignment").U32(type);
  if (type == 4)
    b.U32(static_cast<uint32_t>(value));
  else
    b.U64(value);
  return b.PadTo(64).s;
}

TEST(GgufHostile, Alignment) {
  const uint64_t at = 24 + 8 + 17 + 4;
  ExpectRejected(WithAlignment(10, 32), ErrorCode::kFormat, at, {"must be u32"});
  for (uint64_t a : {0, 48, 4, 1 << 20}) {
    ExpectRejected(WithAlignment(4, a), ErrorCode::kFormat, at, {"not a power of two"});
  }
  auto r = ParseImage(WithAlignment(4, 64));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->alignment(), 64u);
  EXPECT_EQ((*r)->data_offset(), 64u);
}

TEST(GgufHostile, Dimensions) {
  const uint64_t dims_at = 24 + 9;  // after the 1-byte name "w"
  ExpectRejected(OneTensor("w", 0, {}), ErrorCode::kFormat, dims_at, {"tensor 'w'", "n_dims 0"});
  ExpectRejected(OneTensor("w", 0, {1, 1, 1, 1, 1}), ErrorCode::kFormat, dims_at,
                 {"tensor 'w'", "n_dims 5"});
  ExpectRejected(OneTensor("w", 0, {4, 0}), ErrorCode::kFormat, dims_at + 12,
                 {"tensor 'w'", "ne[1] = 0"});
  ExpectRejected(OneTensor("w", 0, {uint64_t{1} << 63}), ErrorCode::kFormat, dims_at + 4,
                 {"tensor 'w'", "ne[0]"});
  ExpectRejected(OneTensor("w", 0, {1u << 31, 1u << 31, 1u << 31}), ErrorCode::kFormat,
                 dims_at + 12, {"tensor 'w'", "overflows"});
  ExpectRejected(OneTensor("w", 0, {~0ull, 2}), ErrorCode::kFormat, dims_at + 4, {"ne[0]"});
}

TEST(GgufHostile, RowLengthMustFillBlocks) {
  ExpectRejected(OneTensor("q8", 8, {16}), ErrorCode::kFormat, 24 + 10,
                 {"tensor 'q8'", "ne[0] = 16", "Q8_0", "32"});
  ExpectRejected(OneTensor("t", 36, {64, 2}), ErrorCode::kFormat, 24 + 9,
                 {"tensor 't'", "I2_S", "128"});
  ExpectRejected(OneTensor("k", 14, {128}), ErrorCode::kFormat, 24 + 9, {"Q6_K", "256"});
}

TEST(GgufHostile, TypeIds) {
  const uint64_t type_at = 24 + 9 + 4 + 8;
  for (uint32_t id : {38u, 39u}) {
    ExpectRejected(OneTensor("w", id), ErrorCode::kUnsupported, type_at, {"tensor 'w'", "TL1/TL2"});
  }
  for (uint32_t id : {2u, 40u, 41u, 44u, 1000u, 0xffffffffu}) {
    ExpectRejected(OneTensor("w", id), ErrorCode::kUnsupported, type_at,
                   {"tensor 'w'", "unknown GGUF type id"});
  }
  for (uint32_t id : {36u, 43u}) {  // I2_S: 128 values -> 32 + 32 bytes
    auto r = ParseImage(OneTensor("w", id, {128}, 0, 64));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->tensors()[0].type, DType::kI2_S);
    EXPECT_EQ((*r)->tensors()[0].n_bytes, 64u);
  }
  for (uint32_t id : {37u, 42u}) {  // I8_S: 4 values -> 4 + 32 bytes (padded file: 64)
    auto r = ParseImage(OneTensor("w", id, {4}, 0, 64));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ((*r)->tensors()[0].type, DType::kI8_S);
    EXPECT_EQ((*r)->tensors()[0].n_bytes, 36u);
  }
}

TEST(GgufHostile, Placement) {
  const uint64_t offset_at = 24 + 9 + 4 + 8 + 4;
  ExpectRejected(OneTensor("w", 0, {4}, 4), ErrorCode::kFormat, offset_at,
                 {"tensor 'w'", "not a multiple of the alignment 32"});
  ExpectRejected(OneTensor("w", 0, {4}, uint64_t{1} << 62), ErrorCode::kFormat, offset_at,
                 {"tensor 'w'", "past the end"});
  ExpectRejected(OneTensor("w", 0, {4}, 0, 15), ErrorCode::kFormat, offset_at,
                 {"tensor 'w'", "past the end", "15 bytes"});
  // The in-band tail counts: an I8_S tensor of 4 values needs 36 bytes, not 4.
  ExpectRejected(OneTensor("s", 37, {4}, 0, 32), ErrorCode::kFormat, offset_at, {"past the end"});
  ExpectRejected(OneTensor("t", 36, {128}, 0, 63), ErrorCode::kFormat, offset_at, {"past the end"});
  Bytes overlap;  // b starts inside a (a is 64 bytes of F32, b at 32)
  overlap.Header(2, 0).Tensor("a", {16}, 0, 0).Tensor("b", {4}, 0, 32).PadTo(32).Zeros(96);
  ExpectRejected(overlap.s, ErrorCode::kFormat, 24 + 33 + 9 + 4 + 8 + 4,
                 {"tensor 'b'", "overlaps tensor 'a'"});
  Bytes same;  // identical offsets, listed in reverse order of size
  same.Header(2, 0).Tensor("a", {4}, 0, 32).Tensor("b", {4}, 0, 32).PadTo(32).Zeros(96);
  auto r = ParseImage(same.s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("overlaps"), std::string::npos);
  Bytes ok;  // out-of-order offsets are fine (no packing is assumed)
  ok.Header(2, 0).Tensor("a", {4}, 0, 64).Tensor("b", {4}, 0, 0).PadTo(32).Zeros(96);
  EXPECT_TRUE(ParseImage(ok.s).ok());
  // Data section start past the end of a short file.
  Bytes nodata;
  nodata.Header(1, 0).Tensor("w", {4}, 0, 0);
  ExpectRejected(nodata.s, ErrorCode::kFormat, nodata.s.size(), {"data section"});
}

// The stored sizes of the published LM's tensors (spec 1.4), read back from the reader's
// own bookkeeping: a file holding only the tensor info reports the size it needed.
TEST(GgufHostile, StoredSizesOfThePublishedShapes) {
  struct Case {
    uint32_t id;
    std::initializer_list<uint64_t> ne;
    const char* bytes;
  };
  const Case cases[] = {
      {14, {1536, 151936}, "191439360 bytes"},   // token_embd.weight Q6_K
      {1, {1536, 151936}, "466747392 bytes"},    // output.weight F16
      {36, {1536, 1536}, "589856 bytes"},        // attn_q / attn_output I2_S
      {36, {1536, 256}, "98336 bytes"},          // attn_k / attn_v
      {43, {1536, 8960}, "3440672 bytes"},       // ffn_gate / ffn_up (remapped id)
      {36, {8960, 1536}, "3440672 bytes"},       // ffn_down
      {37, {16, 1024, 2048}, "33554464 bytes"},  // VAE downsample 6 I8_S: n + 32
      {42, {1536, 1536}, "2359328 bytes"},       // connector fc2 I8_S (remapped id)
      {8, {64, 3}, "204 bytes"},                 // Q8_0: 34 bytes per 32
  };
  for (const Case& c : cases) {
    auto r = ParseImage(OneTensor("w", c.id, c.ne, 0, 0));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find(c.bytes), std::string::npos) << r.status().message();
  }
}

// Every prefix of a valid file shorter than its last tensor's end is an error; a longer
// one (cut in the final padding) is still a complete file.
TEST(GgufHostile, TruncationAtEveryByte) {
  Writer w(TypeIds::kPublished, 64);
  w.SetString("general.architecture", "qwen2");
  w.SetValue("nested", Value::Array(ValueType::kArray,
                                    {Value::Array(ValueType::kString, {Value::String("ab")})}));
  w.SetF32Array("scores", {1.0f, -1.0f});
  std::vector<uint8_t> i2(128 / 4 + 32, 0x55), i8(6 + 32, 1), f32(8, 0);
  ASSERT_TRUE(w.AddTensor("blk.0.attn_q.weight", DType::kI2_S, {128}, i2).ok());
  ASSERT_TRUE(w.AddTensor("enc.w", DType::kI8_S, {3, 2}, i8).ok());
  ASSERT_TRUE(w.AddTensor("norm", DType::kF32, {2}, f32).ok());
  const std::string image = w.Serialize();
  auto full = ParseImage(image);
  ASSERT_TRUE(full.ok());
  uint64_t needed = 0;
  for (const TensorInfo& t : (*full)->tensors()) {
    needed = std::max(needed, (*full)->data_offset() + t.end_offset());
  }
  for (size_t n = 0; n < image.size(); ++n) {
    // A private copy, so reading one byte past `n` would show under ASan.
    std::vector<uint8_t> prefix(image.begin(), image.begin() + static_cast<long>(n));
    auto r = File::Parse(prefix.empty() ? nullptr : prefix.data(), n, kName);
    EXPECT_EQ(r.ok(), n >= needed) << "prefix of " << n << " bytes";
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), ErrorCode::kFormat) << n;
      EXPECT_NE(r.status().message().find("offset "), std::string::npos) << n;
    }
  }
}

// Flipping any single byte of the header never crashes; errors keep the message contract.
TEST(GgufHostile, EveryByteFlipped) {
  Writer w;
  w.SetU32("qwen2.block_count", 1);
  w.SetStringArray("tokenizer.ggml.tokens", {"a", "b"});
  ASSERT_TRUE(w.AddTensor("x", DType::kI8_S, {4}, std::vector<uint8_t>(36, 3)).ok());
  const std::string image = w.Serialize();
  auto f = ParseImage(image);
  ASSERT_TRUE(f.ok());
  const size_t header = (*f)->data_offset();
  for (size_t i = 0; i < header; ++i) {
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      std::string bad = image;
      bad[i] = static_cast<char>(bad[i] ^ x);
      auto r = ParseImage(bad);
      if (!r.ok()) {
        EXPECT_TRUE(r.status().code() == ErrorCode::kFormat ||
                    r.status().code() == ErrorCode::kUnsupported);
        EXPECT_EQ(r.status().message().rfind(kName, 0), 0u);
      }
    }
  }
}

}  // namespace
}  // namespace tern::gguf
