// End-to-end tests of `tern-dev inspect` and `tern-dev convert`: files made with the Writer,
// the built binary (TERN_DEV_BINARY) run through the shell, outputs and bytes checked.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "base/mapped_file.h"
#include "base/test_util.h"
#include "gguf/gguf.h"
#include "gguf/writer.h"

#ifndef TERN_DEV_BINARY
#error "TERN_DEV_BINARY must name the tern-dev executable"
#endif

namespace tern {
namespace {

using tern::testutil::CommandRun;

// Runs `tern-dev ARGS` (ARGS already shell-quoted where needed).
CommandRun TernDev(const std::string& args) {
  return testutil::RunCommand(std::string("'") + TERN_DEV_BINARY + "' " + args);
}

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class CliGguf : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/cli_gguf_" + std::to_string(getpid());
    ASSERT_EQ(system(("mkdir -p '" + dir_ + "'").c_str()), 0);
    path_ = dir_ + "/model.gguf";
    gguf::Writer w(gguf::TypeIds::kPublished);
    w.SetString("general.architecture", "qwen2");
    w.SetU32("qwen2.block_count", 28);
    w.SetStringArray("tokenizer.ggml.tokens", {"!", "\"", "#", "$", "%", "&", "'", "(", ")"});
    w.SetF32("qwen2.rope.freq_base", 1e6f);
    std::vector<uint8_t> i2(256 / 4 + 32), i8(6 + 32), f32(16);
    for (size_t k = 0; k < i2.size(); ++k) i2[k] = static_cast<uint8_t>(k * 13);
    for (size_t k = 0; k < i8.size(); ++k) i8[k] = static_cast<uint8_t>(k * 7 + 1);
    ASSERT_TRUE(w.AddTensor("blk.0.attn_q.weight", DType::kI2_S, {128, 2}, i2).ok());
    ASSERT_TRUE(w.AddTensor("output_norm.weight", DType::kF32, {4}, f32).ok());
    ASSERT_TRUE(w.AddTensor("enc.fc1.weight", DType::kI8_S, {3, 2}, i8).ok());
    ASSERT_TRUE(w.WriteTo(path_).ok());
  }
  void TearDown() override { ASSERT_EQ(system(("rm -rf '" + dir_ + "'").c_str()), 0); }

  std::string Q(const std::string& p) { return "'" + p + "'"; }
  std::string dir_, path_;
};

TEST_F(CliGguf, InspectPrintsHeaderKvAndTensors) {
  CommandRun r = TernDev("inspect " + Q(path_));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "architecture: qwen2")) << r.out;
  EXPECT_TRUE(Has(r.out, "version:      3")) << r.out;
  EXPECT_TRUE(Has(r.out, "alignment:    32 (default)")) << r.out;
  EXPECT_TRUE(Has(r.out, "qwen2.block_count")) << r.out;
  EXPECT_TRUE(Has(r.out, "[string x 9] \"!\", \"\\\"\"")) << r.out;  // summarized array
  EXPECT_TRUE(Has(r.out, ", ...")) << r.out;
  EXPECT_TRUE(Has(r.out, "1000000")) << r.out;
  EXPECT_TRUE(Has(r.out, "blk.0.attn_q.weight")) << r.out;
  EXPECT_TRUE(Has(r.out, "I2_S(36)")) << r.out;
  EXPECT_TRUE(Has(r.out, "I8_S(37)")) << r.out;
  EXPECT_TRUE(Has(r.out, "{128, 2}")) << r.out;
  EXPECT_TRUE(Has(r.out, "96")) << r.out;  // I2_S stored bytes: 256/4 + 32
  EXPECT_TRUE(Has(r.out, "totals: 3 tensors, 266 elements, 150 bytes")) << r.out;
}

TEST_F(CliGguf, InspectErrors) {
  CommandRun missing = TernDev("inspect " + Q(dir_ + "/nope.gguf"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Has(missing.err, "nope.gguf")) << missing.err;
  EXPECT_TRUE(missing.out.empty());
  const std::string bad = dir_ + "/bad.gguf";
  auto image = ReadFileToString(path_);
  ASSERT_TRUE(image.ok());
  ASSERT_TRUE(WriteStringToFile(bad, image->substr(0, 100)).ok());
  CommandRun trunc = TernDev("inspect " + Q(bad));
  EXPECT_EQ(trunc.exit_code, 1);
  EXPECT_TRUE(Has(trunc.err, "bad.gguf: offset ")) << trunc.err;
  EXPECT_EQ(TernDev("inspect").exit_code, 2);
  EXPECT_EQ(TernDev("inspect " + Q(path_) + " --bogus").exit_code, 2);
  EXPECT_EQ(TernDev("inspect --help").exit_code, 0);
}

// Several files: each printed in turn, as it would be alone, a blank line between; one that
// cannot be read is reported by name and the others are still printed (exit 1).
TEST_F(CliGguf, InspectSeveralFiles) {
  const std::string second = dir_ + "/second.gguf";
  gguf::Writer w(gguf::TypeIds::kRemapped);
  w.SetString("general.architecture", "vibeasr-vae");
  std::vector<uint8_t> f32(8);
  ASSERT_TRUE(w.AddTensor("enc.norm.weight", DType::kF32, {2}, f32).ok());
  ASSERT_TRUE(w.WriteTo(second).ok());
  CommandRun one = TernDev("inspect " + Q(path_));
  CommandRun other = TernDev("inspect " + Q(second));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(other.exit_code, 0) << other.err;
  CommandRun both = TernDev("inspect " + Q(path_) + " " + Q(second));
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(both.out, one.out + "\n" + other.out);
  EXPECT_TRUE(Has(both.out, "architecture: vibeasr-vae")) << both.out;

  CommandRun partial =
      TernDev("inspect " + Q(path_) + " " + Q(dir_ + "/nope.gguf") + " " + Q(second));
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_EQ(partial.out, one.out + "\n" + other.out);
  EXPECT_TRUE(Has(partial.err, "nope.gguf")) << partial.err;
  EXPECT_TRUE(Has(partial.err, "1 of 3 inputs failed")) << partial.err;
}

TEST_F(CliGguf, ConvertListAndCheck) {
  CommandRun list = TernDev("convert --input " + Q(path_) + " --list");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(Has(list.out, "blk.0.attn_q.weight\tI2_S\t36\tpublished")) << list.out;
  EXPECT_TRUE(Has(list.out, "enc.fc1.weight\tI8_S\t37\tpublished")) << list.out;
  EXPECT_FALSE(Has(list.out, "output_norm")) << list.out;
  EXPECT_TRUE(Has(list.out, "2 I2_S/I8_S tensors: 2 with published ids, 0 with remapped ids"));
  // Default target is remapped: a published file needs conversion.
  EXPECT_EQ(TernDev("convert --input " + Q(path_) + " --check").exit_code, 3);
  EXPECT_EQ(TernDev("convert --input " + Q(path_) + " --check --ids published").exit_code, 0);
}

TEST_F(CliGguf, ConvertChangesOnlyTypeFields) {
  const std::string out = dir_ + "/remapped.gguf";
  CommandRun r = TernDev("convert --input " + Q(path_) + " --output " + Q(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "2 type fields rewritten")) << r.out;
  auto a = ReadFileToString(path_);
  auto b = ReadFileToString(out);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  auto fa = gguf::File::Open(path_);
  auto fb = gguf::File::Open(out);
  ASSERT_TRUE(fa.ok() && fb.ok());
  // Every byte outside the I2_S/I8_S type fields is identical.
  std::vector<bool> field(a->size(), false);
  for (const auto& t : (*fa)->tensors()) {
    if (t.type == DType::kI2_S || t.type == DType::kI8_S) {
      for (int k = 0; k < 4; ++k) field[t.type_field_offset + k] = true;
    }
  }
  for (size_t i = 0; i < a->size(); ++i) {
    if (!field[i]) {
      ASSERT_EQ((*a)[i], (*b)[i]) << "byte " << i;
    }
  }
  // Same tensors, new ids.
  ASSERT_EQ((*fa)->tensors().size(), (*fb)->tensors().size());
  for (size_t k = 0; k < (*fa)->tensors().size(); ++k) {
    const auto& ta = (*fa)->tensors()[k];
    const auto& tb = (*fb)->tensors()[k];
    EXPECT_EQ(ta.name, tb.name);
    EXPECT_EQ(ta.type, tb.type);
    EXPECT_EQ(ta.offset, tb.offset);
    EXPECT_EQ(ta.n_bytes, tb.n_bytes);
    EXPECT_EQ(std::memcmp(ta.data, tb.data, ta.n_bytes), 0);
    EXPECT_EQ(tb.type_id, gguf::GgufIdFromDType(tb.type, gguf::TypeIds::kRemapped));
  }
  EXPECT_EQ(TernDev("convert --input " + Q(out) + " --check").exit_code, 0);
  EXPECT_EQ(TernDev("convert --input " + Q(out) + " --check --ids published").exit_code, 3);
}

TEST_F(CliGguf, ConvertInPlaceRoundTrips) {
  auto original = ReadFileToString(path_);
  ASSERT_TRUE(original.ok());
  CommandRun r = TernDev("convert -i " + Q(path_) + " --in-place --ids remapped");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(*ReadFileToString(path_), *original);
  EXPECT_EQ(TernDev("convert -i " + Q(path_) + " --check").exit_code, 0);
  r = TernDev("convert -i " + Q(path_) + " --in-place --ids published");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(*ReadFileToString(path_), *original);
  // No temporary files are left behind.
  CommandRun ls = TernDev("inspect " + Q(path_));  // still a valid file
  EXPECT_EQ(ls.exit_code, 0);
  const std::string names = testutil::RunCommand("ls -A '" + dir_ + "'").out;
  EXPECT_EQ(names, "model.gguf\n");
}

TEST_F(CliGguf, ConvertUsageErrors) {
  const std::string in = " --input " + Q(path_);
  EXPECT_EQ(TernDev("convert" + in).exit_code, 2);                          // no mode
  EXPECT_EQ(TernDev("convert" + in + " --list --check").exit_code, 2);      // two modes
  EXPECT_EQ(TernDev("convert" + in + " --list --ids bogus").exit_code, 2);  // bad ids
  EXPECT_EQ(TernDev("convert --list").exit_code, 2);                        // no input
  CommandRun help = TernDev("convert --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Has(help.out, "--in-place")) << help.out;
  CommandRun missing = TernDev("convert --input " + Q(dir_ + "/nope.gguf") + " --list");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Has(missing.err, "nope.gguf")) << missing.err;
  CommandRun nodir = TernDev("convert" + in + " --output " + Q(dir_ + "/no/such/x.gguf"));
  EXPECT_EQ(nodir.exit_code, 1);
  EXPECT_TRUE(Has(nodir.err, "no/such/x.gguf")) << nodir.err;
}

}  // namespace
}  // namespace tern
