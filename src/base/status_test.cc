#include "base/status.h"

#include <gtest/gtest.h>

#include "base/cpu_features.h"

namespace tern {
namespace {

Result<int> ParsePositive(int v) {
  if (v <= 0) return InvalidArgumentError("value %d is not positive", v);
  return v;
}

Status UsesMacros(int v, int* out) {
  TERN_ASSIGN_OR_RETURN(*out, ParsePositive(v));
  TERN_RETURN_IF_ERROR(Status::Ok());
  return Status::Ok();
}

TEST(Status, CarriesCodeAndMessage) {
  Status s = FormatError("%s: truncated at offset %d", "a.gguf", 12);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kFormat);
  EXPECT_EQ(s.message(), "a.gguf: truncated at offset 12");
  EXPECT_EQ(s.ToString(), "format error: a.gguf: truncated at offset 12");
  EXPECT_EQ(s.WithPrefix("load").message(), "load: a.gguf: truncated at offset 12");
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(Status, MacrosPropagate) {
  int out = 0;
  EXPECT_TRUE(UsesMacros(3, &out).ok());
  EXPECT_EQ(out, 3);
  Status bad = UsesMacros(-1, &out);
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "value -1 is not positive");
}

TEST(CpuFeatures, TiersAreConsistent) {
  const CpuFeatures& f = GetCpuFeatures();
  if (f.HasAvx512Tier()) {
    EXPECT_TRUE(f.HasAvx2Tier());
  }
  EXPECT_FALSE(f.ToString().empty());
}

}  // namespace
}  // namespace tern
