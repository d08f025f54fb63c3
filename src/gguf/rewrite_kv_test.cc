// RewriteWithKvs: new keys in a copy whose tensors are byte-identical to the input's.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "gguf/writer.h"

namespace tern::gguf {
namespace {

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 37);
  return b;
}

TEST(RewriteWithKvs, AddsKeysAndKeepsEveryTensorByte) {
  for (const TypeIds ids : {TypeIds::kPublished, TypeIds::kRemapped}) {
    for (const uint32_t alignment : {32u, 64u}) {
      SCOPED_TRACE(::testing::Message()
                   << "alignment " << alignment << " remapped " << (ids == TypeIds::kRemapped));
      Writer w(ids, alignment);
      w.SetString("general.name", "t");
      w.SetBool("tern.trained.context", true);
      ASSERT_TRUE(w.AddTensor("a", DType::kF32, {3}, Pattern(12, 1)).ok());
      ASSERT_TRUE(w.AddTensor("b", DType::kI8_S, {128, 2}, Pattern(256 + 32, 7)).ok());
      ASSERT_TRUE(w.AddTensor("c", DType::kI2_S, {128}, Pattern(32 + 32, 9)).ok());
      const std::string in = ::testing::TempDir() + "rewrite_kv_in.gguf";
      const std::string out = ::testing::TempDir() + "rewrite_kv_out.gguf";
      ASSERT_TRUE(w.WriteTo(in).ok());
      const Status s = RewriteWithKvs(in, out,
                                      {{"tern.trained.context", Value::Bool(false)},
                                       {"tern.trained.max_audio_seconds", Value::F32(9.5f)}});
      ASSERT_TRUE(s.ok()) << s.ToString();
      auto a = File::Open(in);
      auto b = File::Open(out);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ((*b)->alignment(), alignment);
      // The file's keys in their order (the replaced one in its place), then the new one.
      ASSERT_EQ((*b)->kv().size(), (*a)->kv().size() + 1);
      for (size_t k = 0; k < (*a)->kv().size(); ++k)
        EXPECT_EQ((*b)->kv()[k].first, (*a)->kv()[k].first);
      EXPECT_EQ((*b)->Find("tern.trained.context")->u, 0u);
      EXPECT_DOUBLE_EQ((*b)->GetF64("tern.trained.max_audio_seconds").value(), 9.5);
      ASSERT_EQ((*b)->tensors().size(), 3u);
      for (size_t k = 0; k < 3; ++k) {
        const TensorInfo& x = (*a)->tensors()[k];
        const TensorInfo& y = (*b)->tensors()[k];
        EXPECT_EQ(x.type_id, y.type_id);
        EXPECT_EQ(x.offset, y.offset);
        EXPECT_EQ(std::string(x.data, x.data + x.n_bytes), std::string(y.data, y.data + y.n_bytes));
      }
      // The data section is the same bytes: only the header grew.
      const size_t da = (*a)->file_size() - (*a)->data_offset();
      const size_t db = (*b)->file_size() - (*b)->data_offset();
      EXPECT_EQ(da, db);
      // In place works too, and a missing input names itself.
      ASSERT_TRUE(RewriteWithKvs(out, out, {{"x.y", Value::String("z")}}).ok());
      EXPECT_EQ(File::Open(out).value()->GetString("x.y").value(), "z");
      const Status missing = RewriteWithKvs(in + ".none", out, {});
      EXPECT_FALSE(missing.ok());
      EXPECT_NE(missing.message().find(".none"), std::string::npos) << missing.message();
      std::remove(in.c_str());
      std::remove(out.c_str());
    }
  }
}

}  // namespace
}  // namespace tern::gguf
