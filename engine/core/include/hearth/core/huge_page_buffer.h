// Anonymous memory for the large buffers the CPU streams through on every
// token: a model's weight copy and the KV cache. It starts on a 2 MiB
// boundary and is advised for transparent huge pages (advice a kernel
// without them ignores), so reading it walks few page tables; pages are
// faulted in on first touch, 2 MiB at a time where the kernel grants them.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>

namespace hearth {

inline constexpr uint64_t kHugePageBytes = uint64_t{2} << 20;

// Unmapped when destroyed; move-only.
class HugePageBuffer {
 public:
  // `size` zeroed bytes (whole huge pages behind them); OutOfMemory when
  // the memory cannot be had.
  static Result<HugePageBuffer> allocate(uint64_t size);

  HugePageBuffer() = default;
  HugePageBuffer(HugePageBuffer&& other) noexcept;
  HugePageBuffer& operator=(HugePageBuffer&& other) noexcept;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  ~HugePageBuffer();

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  void release();
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  uint64_t mapped_bytes_ = 0;  // whole huge pages
};

// Maps the pages of [begin, begin + bytes) now, writable, keeping what they
// hold, so the first pass that writes there takes no page faults: a fresh
// huge page is cleared on its first touch, 2 MiB at a time, inside whatever
// touched it (a first request's prompt spent a sixth of its time clearing the
// KV cache's pages). For memory no other thread uses yet: where the kernel
// lacks MADV_POPULATE_WRITE (before Linux 5.14) each page is touched by
// reading a byte and writing it back.
void fault_in(void* begin, uint64_t bytes);

}  // namespace hearth
