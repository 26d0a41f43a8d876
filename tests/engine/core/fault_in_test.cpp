// fault_in maps a range's pages at once and keeps what they hold. mincore
// tells which pages of anonymous memory are resident: never-touched ones are
// not, so each check below fails if fault_in does nothing.
#include <gtest/gtest.h>
#include <hearth/core/huge_page_buffer.h>

#include <cstdint>

#include "resident_pages.h"

namespace hearth {
namespace {

using testing::page_bytes;
using testing::resident_pages;

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST(FaultIn, MapsEveryPageOfTheRangeAndNothingBeyondItsHugePages) {
  auto buf = HugePageBuffer::allocate(8 * kMiB);
  ASSERT_TRUE(buf.ok()) << buf.error().message;
  uint8_t* p = buf->data();
  ASSERT_EQ(resident_pages(p, 8 * kMiB), 0u) << "fresh anonymous memory starts unmapped";
  // An unaligned start: the page holding it is mapped too.
  fault_in(p + 2 * kMiB + 1, 2 * kMiB - 1);
  EXPECT_EQ(resident_pages(p + 2 * kMiB, 2 * kMiB), 2 * kMiB / page_bytes());
  EXPECT_EQ(resident_pages(p + 6 * kMiB, 2 * kMiB), 0u) << "another huge page, never asked for";
}

TEST(FaultIn, KeepsWhatTheRangeHolds) {
  auto buf = HugePageBuffer::allocate(4 * kMiB);
  ASSERT_TRUE(buf.ok()) << buf.error().message;
  uint8_t* p = buf->data();
  for (uint64_t i = 0; i < 4 * kMiB; i += 4093) p[i] = static_cast<uint8_t>(i % 251 + 1);
  fault_in(p, 4 * kMiB);
  for (uint64_t i = 0; i < 4 * kMiB; i += 4093) ASSERT_EQ(p[i], static_cast<uint8_t>(i % 251 + 1)) << i;
  EXPECT_EQ(p[1], 0);
  fault_in(nullptr, 100);  // nothing to map
  fault_in(p, 0);
}

}  // namespace
}  // namespace hearth
