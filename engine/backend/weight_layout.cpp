#include "hearth/engine/backend/weight_layout.h"

#include <hearth/engine/quant/interleave.h>

#include <cstring>

namespace hearth::backend {

void copy_plain_rows(const Tensor& w, int64_t r0, int64_t n, void* dst) {
  const size_t rb = w.row_bytes();
  const auto* src = static_cast<const uint8_t*>(w.data);
  auto* out = static_cast<uint8_t*>(dst);
  if (w.layout == WeightLayout::Plain) {
    std::memcpy(out, src + static_cast<size_t>(r0) * rb, static_cast<size_t>(n) * rb);
    return;
  }
  // Whole groups at once, the rest row by row; rows past the last group are
  // stored plain.
  const int64_t grouped = quant::grouped_rows(w.ne[1]);
  int64_t i = 0;
  for (; r0 % quant::kInterleaveRows == 0 && i + quant::kInterleaveRows <= n && r0 + i + quant::kInterleaveRows <= grouped;
       i += quant::kInterleaveRows) {
    quant::deinterleave_group(w.type, src + static_cast<size_t>(r0 + i) * rb, w.cols(), out + static_cast<size_t>(i) * rb);
  }
  for (; i < n; ++i) {
    const int64_t r = r0 + i;
    if (r >= grouped) {
      std::memcpy(out + static_cast<size_t>(i) * rb, src + static_cast<size_t>(r) * rb, rb);
      continue;
    }
    const int64_t first = r / quant::kInterleaveRows * quant::kInterleaveRows;
    quant::deinterleave_row(w.type, src + static_cast<size_t>(first) * rb, r - first, w.cols(),
                            out + static_cast<size_t>(i) * rb);
  }
}

const uint8_t* plain_rows(const Tensor& w, int64_t r0, int64_t n, uint8_t* scratch) {
  if (w.layout == WeightLayout::Plain) return static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r0) * w.row_bytes();
  copy_plain_rows(w, r0, n, scratch);
  return scratch;
}

}  // namespace hearth::backend
