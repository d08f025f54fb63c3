// Round trips Writer -> File::Parse: every KV type (nested arrays too), every DType,
// alignments 32 and 64, getters, and the type-id rewrite used by `tern-dev convert`.
#include "gguf/gguf.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "base/mapped_file.h"
#include "gguf/writer.h"

namespace tern::gguf {
namespace {

std::unique_ptr<File> ParseOk(const std::string& image, const std::string& name = "t.gguf") {
  auto r = File::Parse(reinterpret_cast<const uint8_t*>(image.data()), image.size(), name);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 8));
  return v;
}

// Every value type, including strings with UTF-8 and NUL, and arrays nested 3 deep.
std::vector<std::pair<std::string, Value>> AllValues() {
  std::vector<std::pair<std::string, Value>> kv = {
      {"u8", Value::U8(250)},
      {"i8", Value::I8(-128)},
      {"u16", Value::U16(65535)},
      {"i16", Value::I16(-32768)},
      {"u32", Value::U32(4000000000u)},
      {"i32", Value::I32(std::numeric_limits<int32_t>::min())},
      {"f32", Value::F32(1.5e-6f)},
      {"bool", Value::Bool(true)},
      {"string", Value::String(std::string("h\xc3\xa9llo\0x", 8))},
      {"empty_string", Value::String("")},
      {"u64", Value::U64(std::numeric_limits<uint64_t>::max())},
      {"i64", Value::I64(std::numeric_limits<int64_t>::min())},
      {"f64", Value::F64(-2.25e300)},
      {"arr.u8", Value::Array(ValueType::kU8, {Value::U8(1), Value::U8(2)})},
      {"arr.empty", Value::Array(ValueType::kF64, {})},
      {"arr.bool", Value::Array(ValueType::kBool, {Value::Bool(false), Value::Bool(true)})},
      {"arr.str", Value::Array(ValueType::kString, {Value::String("a"), Value::String("")})},
      {"arr.nested",
       Value::Array(ValueType::kArray,
                    {Value::Array(ValueType::kI16, {Value::I16(-1), Value::I16(7)}),
                     Value::Array(ValueType::kArray,
                                  {Value::Array(ValueType::kString, {Value::String("deep")})})})},
  };
  return kv;
}

TEST(GgufRoundTrip, EveryValueType) {
  Writer w;
  const auto kv = AllValues();
  for (const auto& [k, v] : kv) w.SetValue(k, v);
  auto f = ParseOk(w.Serialize());
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  ASSERT_EQ(f->kv().size(), kv.size());
  for (size_t i = 0; i < kv.size(); ++i) {
    EXPECT_EQ(f->kv()[i].first, kv[i].first);
    EXPECT_TRUE(f->kv()[i].second == kv[i].second) << kv[i].first;
    ASSERT_NE(f->Find(kv[i].first), nullptr);
  }
  EXPECT_EQ(f->Find("missing"), nullptr);
  EXPECT_EQ(f->Find("f32")->f, static_cast<double>(1.5e-6f));
}

TEST(GgufRoundTrip, SetReplacesInPlace) {
  Writer w;
  w.SetU32("a", 1);
  w.SetString("b", "x");
  w.SetU32("a", 2);
  auto f = ParseOk(w.Serialize());
  ASSERT_EQ(f->kv().size(), 2u);
  EXPECT_EQ(f->kv()[0].first, "a");
  EXPECT_EQ(*f->GetU64("a"), 2u);
}

TEST(GgufGetters, TypedAccess) {
  Writer w;
  w.SetString("s", "qwen2");
  w.SetU32("u", 7);
  w.SetI32("neg", -3);
  w.SetU64("big", std::numeric_limits<uint64_t>::max());
  w.SetF32("f", 0.25f);
  w.SetBool("b", true);
  w.SetStringArray("sa", {"x", "yz"});
  w.SetI32Array("ia", {3, -1, 8});
  w.SetF32Array("fa", {0.5f, -2.0f});
  w.SetValue("ua", Value::Array(ValueType::kU64, {Value::U64(1), Value::U64(~0ull)}));
  auto f = ParseOk(w.Serialize(), "g.gguf");
  EXPECT_EQ(*f->GetString("s"), "qwen2");
  EXPECT_EQ(*f->GetU64("u"), 7u);
  EXPECT_EQ(*f->GetI64("u"), 7);
  EXPECT_EQ(*f->GetI64("neg"), -3);
  EXPECT_EQ(*f->GetF64("u"), 7.0);
  EXPECT_EQ(*f->GetF64("f"), 0.25);
  EXPECT_EQ(*f->GetU64("big"), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(*f->GetStringArray("sa"), (std::vector<std::string>{"x", "yz"}));
  EXPECT_EQ(*f->GetIntArray("ia"), (std::vector<int64_t>{3, -1, 8}));
  EXPECT_EQ(*f->GetFloatArray("fa"), (std::vector<double>{0.5, -2.0}));
  EXPECT_EQ(*f->GetFloatArray("ia"), (std::vector<double>{3, -1, 8}));

  auto missing = f->GetString("nope");
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.status().message().find("g.gguf"), std::string::npos);
  auto wrong = f->GetString("u");
  EXPECT_EQ(wrong.status().code(), ErrorCode::kFormat);
  // The offset is where the key's record starts: header 24, then key "s" (9), its type (4)
  // and its value "qwen2" (13).
  const uint64_t u_at = 24 + (8 + 1) + 4 + (8 + 5);
  EXPECT_EQ(wrong.status().message(),
            StrFormat("g.gguf: key 'u' at offset %llu: expected string, got u32",
                      static_cast<unsigned long long>(u_at)));
  EXPECT_EQ(f->GetU64("neg").status().code(), ErrorCode::kFormat);
  EXPECT_EQ(f->GetI64("big").status().code(), ErrorCode::kFormat);
  EXPECT_EQ(f->GetU64("s").status().code(), ErrorCode::kFormat);
  EXPECT_EQ(f->GetF64("b").status().code(), ErrorCode::kFormat);
  EXPECT_EQ(f->GetStringArray("ia").status().code(), ErrorCode::kFormat);
  EXPECT_EQ(f->GetIntArray("fa").status().code(), ErrorCode::kFormat);
  EXPECT_EQ(f->GetIntArray("ua").status().code(), ErrorCode::kFormat);  // 2^64-1 > int64
  EXPECT_EQ(f->GetFloatArray("sa").status().code(), ErrorCode::kFormat);
}

struct DTypeCase {
  DType type;
  std::vector<int64_t> ne;
  uint32_t published_id, remapped_id;
  int64_t stored;  // spec 1.2-2: I8_S n+32, I2_S n/4+32, Q6_K 210/256, Q8_0 34/32
};

std::vector<DTypeCase> DTypeCases() {
  return {
      {DType::kF32, {3, 5}, 0, 0, 60},
      {DType::kF16, {7}, 1, 1, 14},
      {DType::kBF16, {2, 2, 2}, 30, 30, 16},
      {DType::kQ8_0, {64, 3}, 8, 8, 6 * 34},
      {DType::kQ6_K, {512, 2}, 14, 14, 4 * 210},
      {DType::kI8_S, {5, 3, 2, 1}, 37, 42, 30 + 32},
      {DType::kI2_S, {256, 3}, 36, 43, 768 / 4 + 32},
  };
}

class GgufDTypes : public ::testing::TestWithParam<std::tuple<int, bool>> {};

// Every DType at alignment 32 and 64, under both id numberings: shape, ids, sizes,
// offsets and payload bytes come back exactly.
TEST_P(GgufDTypes, RoundTrip) {
  const uint32_t alignment = std::get<0>(GetParam());
  const TypeIds ids = std::get<1>(GetParam()) ? TypeIds::kRemapped : TypeIds::kPublished;
  Writer w(ids, alignment);
  w.SetString("general.architecture", "test");
  const auto cases = DTypeCases();
  std::vector<std::vector<uint8_t>> payloads;
  for (size_t i = 0; i < cases.size(); ++i) {
    payloads.push_back(Pattern(static_cast<size_t>(cases[i].stored), static_cast<uint8_t>(i)));
    ASSERT_TRUE(w.AddTensor(StrFormat("t%zu", i), cases[i].type, cases[i].ne, payloads[i]).ok());
  }
  const std::string image = w.Serialize();
  auto f = ParseOk(image);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->alignment(), alignment);
  EXPECT_EQ(f->data_offset() % alignment, 0u);
  ASSERT_EQ(f->tensors().size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const TensorInfo& t = f->tensors()[i];
    const DTypeCase& c = cases[i];
    EXPECT_EQ(t.name, StrFormat("t%zu", i));
    EXPECT_EQ(t.type, c.type);
    EXPECT_EQ(t.type_id, ids == TypeIds::kPublished ? c.published_id : c.remapped_id);
    EXPECT_EQ(t.n_dims, static_cast<int>(c.ne.size()));
    int64_t n = 1;
    for (int d = 0; d < 4; ++d) {
      const int64_t want = d < static_cast<int>(c.ne.size()) ? c.ne[d] : 1;
      EXPECT_EQ(t.ne[d], want);
      n *= want;
    }
    EXPECT_EQ(t.n_elements, n);
    EXPECT_EQ(t.n_bytes, static_cast<uint64_t>(c.stored)) << DTypeName(c.type);
    EXPECT_EQ(t.offset % alignment, 0u);
    EXPECT_EQ(t.data, reinterpret_cast<const uint8_t*>(image.data()) + f->data_offset() + t.offset);
    EXPECT_EQ(std::memcmp(t.data, payloads[i].data(), payloads[i].size()), 0);
    uint32_t id_in_file;
    std::memcpy(&id_in_file, image.data() + t.type_field_offset, 4);
    EXPECT_EQ(id_in_file, t.type_id);
    EXPECT_EQ(f->FindTensor(t.name), &t);
  }
  EXPECT_EQ(f->FindTensor("nope"), nullptr);
  // The data section ends padded to the alignment.
  EXPECT_EQ(image.size() % alignment, 0u);
}

INSTANTIATE_TEST_SUITE_P(Alignments, GgufDTypes,
                         ::testing::Combine(::testing::Values(32, 64), ::testing::Bool()));

TEST(GgufTypeIds, Mapping) {
  for (uint32_t id = 0; id < 64; ++id) {
    auto r = DTypeFromGgufId(id);
    const bool known = id == 0 || id == 1 || id == 8 || id == 14 || id == 30 || id == 36 ||
                       id == 37 || id == 42 || id == 43;
    EXPECT_EQ(r.ok(), known) << id;
    if (!known) {
      EXPECT_EQ(r.status().code(), ErrorCode::kUnsupported) << id;
    }
  }
  EXPECT_EQ(*DTypeFromGgufId(36), DType::kI2_S);
  EXPECT_EQ(*DTypeFromGgufId(43), DType::kI2_S);
  EXPECT_EQ(*DTypeFromGgufId(37), DType::kI8_S);
  EXPECT_EQ(*DTypeFromGgufId(42), DType::kI8_S);
  for (int i = 0; i < kNumDTypes; ++i) {
    const DType t = static_cast<DType>(i);
    EXPECT_EQ(*DTypeFromGgufId(GgufIdFromDType(t, TypeIds::kPublished)), t);
    EXPECT_EQ(*DTypeFromGgufId(GgufIdFromDType(t, TypeIds::kRemapped)), t);
  }
}

TEST(GgufWriter, RejectsBadTensors) {
  Writer w;
  EXPECT_TRUE(w.AddTensor("a", DType::kF32, {2}, std::vector<uint8_t>(8)).ok());
  EXPECT_EQ(w.AddTensor("a", DType::kF32, {2}, std::vector<uint8_t>(8)).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_FALSE(w.AddTensor("", DType::kF32, {2}, std::vector<uint8_t>(8)).ok());
  EXPECT_FALSE(w.AddTensor("b", DType::kF32, {}, std::vector<uint8_t>(4)).ok());
  EXPECT_FALSE(w.AddTensor("b", DType::kF32, {1, 1, 1, 1, 1}, std::vector<uint8_t>(4)).ok());
  EXPECT_FALSE(w.AddTensor("b", DType::kF32, {0}, {}).ok());
  EXPECT_FALSE(w.AddTensor("b", DType::kF32, {3}, std::vector<uint8_t>(8)).ok());
  EXPECT_FALSE(w.AddTensor("b", DType::kI2_S, {64}, std::vector<uint8_t>(16 + 32)).ok());
  EXPECT_FALSE(w.AddTensor("b", DType::kI8_S, {4}, std::vector<uint8_t>(4)).ok());  // no tail
  EXPECT_EQ(w.n_tensors(), 1u);
}

TEST(GgufWriterDeathTest, MismatchedArrayElementIsAProgrammerError) {
  Writer w;
  EXPECT_DEATH(w.SetValue("a", Value::Array(ValueType::kU8, {Value::String("x")})), "TERN_CHECK");
}

TEST(GgufWriter, WriteToMatchesSerializeAndOpenMaps) {
  Writer w(TypeIds::kPublished, 64);
  w.SetString("general.architecture", "qwen2");
  ASSERT_TRUE(w.AddTensor("x", DType::kI8_S, {3, 3}, Pattern(9 + 32, 1)).ok());
  ASSERT_TRUE(w.AddTensor("y", DType::kF32, {5}, Pattern(20, 2)).ok());
  const std::string path = ::testing::TempDir() + "/gguf_writeto_" + std::to_string(getpid());
  ASSERT_TRUE(w.WriteTo(path).ok());
  auto bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, w.Serialize());
  auto f = File::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->path(), path);
  EXPECT_EQ(std::memcmp((*f)->FindTensor("y")->data, Pattern(20, 2).data(), 20), 0);
  unlink(path.c_str());
  auto gone = File::Open(path);
  EXPECT_EQ(gone.status().code(), ErrorCode::kNotFound);
}

// Releasing the pages of a tensor (after packing it) must never change what it reads: a
// mapped file pages the bytes back in; Parse'd memory belongs to the caller and is untouched.
TEST(GgufRelease, BytesStayReadable) {
  Writer w;
  const std::vector<uint8_t> big = Pattern(3 * 4096 * 4, 7);
  ASSERT_TRUE(w.AddTensor("big", DType::kF32, {3 * 4096}, big).ok());
  ASSERT_TRUE(w.AddTensor("tail", DType::kF32, {5}, Pattern(20, 3)).ok());
  const std::string path = ::testing::TempDir() + "/gguf_release_" + std::to_string(getpid());
  ASSERT_TRUE(w.WriteTo(path).ok());
  auto f = File::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const TensorInfo* t = (*f)->FindTensor("big");
  (*f)->ReleasePages(*t);
  (*f)->ReleasePages(t->data + 100, 5000);
  EXPECT_EQ(std::memcmp(t->data, big.data(), big.size()), 0);
  EXPECT_EQ(std::memcmp((*f)->FindTensor("tail")->data, Pattern(20, 3).data(), 20), 0);
  unlink(path.c_str());

  std::string bytes = w.Serialize();
  auto p = File::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "mem");
  ASSERT_TRUE(p.ok());
  (*p)->ReleasePages(*(*p)->FindTensor("big"));
  EXPECT_EQ(std::memcmp((*p)->FindTensor("big")->data, big.data(), big.size()), 0);
}

// The convert rewrite changes exactly the type fields of I2_S/I8_S tensors.
TEST(GgufRetype, OnlyTypeFieldsChange) {
  Writer w(TypeIds::kPublished);
  w.SetString("general.architecture", "qwen2");
  ASSERT_TRUE(w.AddTensor("q", DType::kI2_S, {128, 2}, Pattern(64 + 32, 3)).ok());
  ASSERT_TRUE(w.AddTensor("n", DType::kF32, {4}, Pattern(16, 4)).ok());
  ASSERT_TRUE(w.AddTensor("v", DType::kI8_S, {8}, Pattern(8 + 32, 5)).ok());
  const std::string image = w.Serialize();
  auto f = ParseOk(image);
  auto patches = PlanTypeIdRewrite(*f, TypeIds::kRemapped);
  ASSERT_EQ(patches.size(), 2u);
  EXPECT_EQ(patches[0].tensor, "q");
  EXPECT_EQ(patches[0].old_id, 36u);
  EXPECT_EQ(patches[0].new_id, 43u);
  EXPECT_EQ(patches[1].old_id, 37u);
  EXPECT_EQ(patches[1].new_id, 42u);
  std::string out = image;
  ASSERT_TRUE(ApplyTypeIdPatches(patches, reinterpret_cast<uint8_t*>(out.data()), out.size()).ok());
  size_t differing = 0;
  for (size_t i = 0; i < image.size(); ++i) {
    if (image[i] == out[i]) continue;
    ++differing;
    bool in_field = false;
    for (const auto& p : patches) in_field |= i >= p.field_offset && i < p.field_offset + 4;
    EXPECT_TRUE(in_field) << "byte " << i;
  }
  EXPECT_EQ(differing, 2u);  // 36->43 and 37->42 differ in the low byte only
  auto g = ParseOk(out);
  EXPECT_TRUE(PlanTypeIdRewrite(*g, TypeIds::kRemapped).empty());
  auto back = PlanTypeIdRewrite(*g, TypeIds::kPublished);
  ASSERT_TRUE(ApplyTypeIdPatches(back, reinterpret_cast<uint8_t*>(out.data()), out.size()).ok());
  EXPECT_EQ(out, image);
  std::vector<TypeIdPatch> bad = {{"x", image.size() - 2, 0, 1}};
  EXPECT_FALSE(ApplyTypeIdPatches(bad, reinterpret_cast<uint8_t*>(out.data()), out.size()).ok());
}

TEST(GgufRetype, FileInPlaceAndCopy) {
  Writer w(TypeIds::kRemapped);
  ASSERT_TRUE(w.AddTensor("q", DType::kI2_S, {128}, Pattern(32 + 32, 3)).ok());
  const std::string dir = ::testing::TempDir();
  const std::string in = dir + "/retype_in_" + std::to_string(getpid());
  const std::string copy = in + ".copy";
  ASSERT_TRUE(w.WriteTo(in).ok());
  auto n = RewriteTypeIds(in, copy, TypeIds::kPublished);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ((*File::Open(copy))->tensors()[0].type_id, 36u);
  EXPECT_EQ((*File::Open(in))->tensors()[0].type_id, 43u);  // input untouched
  n = RewriteTypeIds(in, in, TypeIds::kPublished);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*ReadFileToString(in), *ReadFileToString(copy));
  n = RewriteTypeIds(in, in, TypeIds::kPublished);  // already published: nothing to do
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
  // In place through a symlink: the target file changes, the link stays a link.
  const std::string link = in + ".link";
  ASSERT_EQ(symlink(in.c_str(), link.c_str()), 0);
  n = RewriteTypeIds(link, link, TypeIds::kRemapped);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ((*File::Open(in))->tensors()[0].type_id, 43u);
  char buf[4096];
  EXPECT_GT(readlink(link.c_str(), buf, sizeof(buf)), 0);
  unlink(link.c_str());
  EXPECT_FALSE(RewriteTypeIds(in + ".missing", copy, TypeIds::kPublished).ok());
  EXPECT_FALSE(RewriteTypeIds(in, dir + "/no/such/dir/x.gguf", TypeIds::kPublished).ok());
  unlink(in.c_str());
  unlink(copy.c_str());
}

}  // namespace
}  // namespace tern::gguf
