// The machine's streaming read bandwidth, measured rather than assumed: the
// denominator of bench's roofline fraction. A probe owns a buffer far larger
// than the caches (touched once up front, so page faults stay out of the
// timing; on huge pages where the kernel has them, like the weights, so the
// yardstick is the best the memory can do) and can be measured again and
// again, so bench can measure right
// before and right after each generation run: on a shared machine the
// bandwidth other tenants leave over changes within seconds, and a figure
// taken minutes away from the run it divides would mostly measure that.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/model/weight_memory.h>

#include <cstddef>
#include <cstdint>

namespace hearth::measure {

class ReadBandwidthProbe {
 public:
  // `bytes` of buffer split across `threads` readers. Fails (as a value)
  // when the buffer cannot be allocated.
  static Result<ReadBandwidthProbe> create(int threads, size_t bytes = size_t{1} << 30);

  // Best of `passes` timed reads of the whole buffer, in GB/s (1e9 bytes/s):
  // the most the memory system delivered in that moment.
  double measure(int passes) const;

  size_t bytes() const { return words_ * sizeof(uint64_t); }

 private:
  ReadBandwidthProbe(model::HugePageBuffer buf, size_t words, int threads)
      : buf_(std::move(buf)), words_(words), threads_(threads) {}
  model::HugePageBuffer buf_;
  size_t words_ = 0;
  int threads_ = 1;
};

}  // namespace hearth::measure
