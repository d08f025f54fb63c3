#include "base/huge_buffer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace tern {
namespace {

bool AllZero(const HugeBuffer& b) {
  for (size_t i = 0; i < b.size(); ++i)
    if (b.data()[i] != 0) return false;
  return true;
}

TEST(HugeBuffer, SizesAreExactZeroFilledAndWritable) {
  for (size_t bytes : {size_t{1}, size_t{4095}, HugeBuffer::kHugePage - 1, HugeBuffer::kHugePage,
                       HugeBuffer::kHugePage + 1, 3 * HugeBuffer::kHugePage + 12345}) {
    HugeBuffer b = HugeBuffer::Allocate(bytes);
    ASSERT_EQ(b.size(), bytes);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_TRUE(AllZero(b)) << bytes;
    b.data()[0] = 1;
    b.data()[bytes - 1] = 2;  // the last byte is ours (ASan would see a heap overflow)
    EXPECT_EQ(b.data()[bytes - 1], 2);
    if (bytes >= HugeBuffer::kHugePage) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % HugeBuffer::kHugePage, 0u) << bytes;
    }
  }
}

TEST(HugeBuffer, EmptyAndImpossibleSizesGiveAnEmptyBuffer) {
  HugeBuffer none = HugeBuffer::Allocate(0);
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.data(), nullptr);
  HugeBuffer absurd = HugeBuffer::Allocate(SIZE_MAX - 100);
  EXPECT_TRUE(absurd.empty());
  EXPECT_EQ(absurd.data(), nullptr);
}

TEST(HugeBuffer, MovesOwnership) {
  HugeBuffer a = HugeBuffer::Allocate(HugeBuffer::kHugePage + 7);
  uint8_t* p = a.data();
  p[5] = 42;
  HugeBuffer b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), p);
  HugeBuffer c = HugeBuffer::Allocate(10);
  c = std::move(b);  // frees c's heap bytes, takes b's mapping
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.data()[5], 42);
  EXPECT_EQ(c.size(), HugeBuffer::kHugePage + 7);
}

}  // namespace
}  // namespace tern
