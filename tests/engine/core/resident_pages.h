// How many pages of a range are resident, by mincore: anonymous pages that
// were never touched are not. For tests of what is mapped when.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace hearth::testing {

inline size_t page_bytes() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

// Resident pages of [p, p + bytes); p page-aligned.
inline size_t resident_pages(uint8_t* p, size_t bytes) {
  std::vector<unsigned char> flags((bytes + page_bytes() - 1) / page_bytes());
  EXPECT_EQ(::mincore(p, bytes, flags.data()), 0);
  size_t n = 0;
  for (unsigned char f : flags) n += f & 1u;
  return n;
}

}  // namespace hearth::testing
