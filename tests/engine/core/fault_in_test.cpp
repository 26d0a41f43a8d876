// fault_in maps a range's pages at once and keeps what they hold. mincore
// tells which pages of anonymous memory are resident: never-touched ones are
// not, so each check below fails if fault_in does nothing.
#include <gtest/gtest.h>
#include <hearth/core/huge_page_buffer.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace hearth {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

// How many of the pages of [p, p + bytes) are resident (p page-aligned).
size_t resident_pages(uint8_t* p, uint64_t bytes) {
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> flags((bytes + page - 1) / page);
  EXPECT_EQ(::mincore(p, bytes, flags.data()), 0);
  size_t n = 0;
  for (unsigned char f : flags) n += f & 1u;
  return n;
}

TEST(FaultIn, MapsEveryPageOfTheRangeAndNothingBeyondItsHugePages) {
  auto buf = HugePageBuffer::allocate(8 * kMiB);
  ASSERT_TRUE(buf.ok()) << buf.error().message;
  uint8_t* p = buf->data();
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  ASSERT_EQ(resident_pages(p, 8 * kMiB), 0u) << "fresh anonymous memory starts unmapped";
  // An unaligned start: the page holding it is mapped too.
  fault_in(p + 2 * kMiB + 1, 2 * kMiB - 1);
  EXPECT_EQ(resident_pages(p + 2 * kMiB, 2 * kMiB), 2 * kMiB / page);
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
