#include "hearth/core/huge_page_buffer.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace hearth {

Result<HugePageBuffer> HugePageBuffer::allocate(uint64_t size) {
  HugePageBuffer out;
  const uint64_t length = std::max<uint64_t>(kHugePageBytes, (size + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes);
  // One huge page more than needed, trimmed so the start is aligned.
  void* raw = ::mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    return make_error(ErrorCode::OutOfMemory,
                      fmt::format("cannot allocate {:.1f} MB: {}", static_cast<double>(size) / 1e6, std::strerror(errno)));
  }
  const auto begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned > begin) ::munmap(raw, aligned - begin);
  const uintptr_t end = aligned + length, raw_end = begin + length + kHugePageBytes;
  if (raw_end > end) ::munmap(reinterpret_cast<void*>(end), raw_end - end);
  out.data_ = reinterpret_cast<uint8_t*>(aligned);
  out.size_ = size;
  out.mapped_bytes_ = length;
  (void)::madvise(out.data_, length, MADV_HUGEPAGE);
  return out;
}

void fault_in(void* begin, uint64_t bytes) {
  if (begin == nullptr || bytes == 0) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<uintptr_t>(begin);
  const uintptr_t first = start & ~(page - 1), end = start + bytes;
#ifdef MADV_POPULATE_WRITE
  if (::madvise(reinterpret_cast<void*>(first), end - first, MADV_POPULATE_WRITE) == 0) return;
#endif
  for (uintptr_t at = start; at < end; at = (at & ~(page - 1)) + page) {
    volatile uint8_t* byte = reinterpret_cast<volatile uint8_t*>(at);
    *byte = *byte;
  }
}

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept { *this = std::move(other); }

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

HugePageBuffer::~HugePageBuffer() { release(); }

void HugePageBuffer::release() {
  if (data_) ::munmap(data_, mapped_bytes_);
  data_ = nullptr;
  size_ = 0;
  mapped_bytes_ = 0;
}

}  // namespace hearth
