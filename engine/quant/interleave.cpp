// The 16-row interleaved weight layout (interleave.h): plain scalar code,
// run once per weight at load, and the reference the kernels are tested on.
#include "hearth/engine/quant/interleave.h"

#include <hearth/engine/quant/blocks.h>

#include <cassert>
#include <cstring>
#include <vector>

namespace hearth::quant {
namespace {

constexpr size_t kQ4_0Block = sizeof(BlockQ4_0);                // 18
constexpr size_t kGroupBlock = kQ4_0Block * kInterleaveRows;     // 288
constexpr size_t kScaleBytes = 2 * kInterleaveRows;             // 32
static_assert(kQ4_0Block == 18, "Q4_0 block: fp16 scale and 16 bytes of codes");

void interleave_group(const uint8_t* src, size_t row_bytes, uint8_t* dst, int64_t blocks) {
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* out = dst + static_cast<size_t>(b) * kGroupBlock;
    for (int64_t r = 0; r < kInterleaveRows; ++r) {
      const auto* blk = reinterpret_cast<const BlockQ4_0*>(src + static_cast<size_t>(r) * row_bytes) + b;
      std::memcpy(out + 2 * r, &blk->d, 2);
      for (int j = 0; j < 4; ++j) std::memcpy(out + kScaleBytes + 64 * j + 4 * r, blk->qs + 4 * j, 4);
    }
  }
}

}  // namespace

bool can_interleave(DType type, int64_t rows, int64_t cols) {
  return type == DType::Q4_0 && rows > 0 && rows % kInterleaveRows == 0 && cols > 0 && cols % kQK == 0;
}

void interleave_rows(DType type, const void* src, void* dst, int64_t rows, int64_t cols) {
  assert(can_interleave(type, rows, cols));
  (void)type;
  const int64_t blocks = cols / kQK;
  const size_t row_bytes = static_cast<size_t>(blocks) * kQ4_0Block;
  const size_t group_bytes = row_bytes * kInterleaveRows;
  for (int64_t g = 0; g < rows / kInterleaveRows; ++g) {
    interleave_group(static_cast<const uint8_t*>(src) + static_cast<size_t>(g) * group_bytes, row_bytes,
                     static_cast<uint8_t*>(dst) + static_cast<size_t>(g) * group_bytes, blocks);
  }
}

void interleave_rows_in_place(DType type, void* data, int64_t rows, int64_t cols) {
  assert(can_interleave(type, rows, cols));
  const int64_t blocks = cols / kQK;
  const size_t row_bytes = static_cast<size_t>(blocks) * kQ4_0Block;
  const size_t group_bytes = row_bytes * kInterleaveRows;
  std::vector<uint8_t> plain(group_bytes);
  auto* bytes = static_cast<uint8_t*>(data);
  for (int64_t g = 0; g < rows / kInterleaveRows; ++g) {
    uint8_t* group = bytes + static_cast<size_t>(g) * group_bytes;
    std::memcpy(plain.data(), group, group_bytes);
    interleave_rows(type, plain.data(), group, kInterleaveRows, cols);
  }
}

void deinterleave_row(DType type, const void* group, int64_t r, int64_t cols, void* dst_row) {
  assert(type == DType::Q4_0 && r >= 0 && r < kInterleaveRows);
  (void)type;
  const auto* in = static_cast<const uint8_t*>(group);
  auto* out = static_cast<BlockQ4_0*>(dst_row);
  for (int64_t b = 0; b < cols / kQK; ++b) {
    const uint8_t* blk = in + static_cast<size_t>(b) * kGroupBlock;
    std::memcpy(&out[b].d, blk + 2 * r, 2);
    for (int j = 0; j < 4; ++j) std::memcpy(out[b].qs + 4 * j, blk + kScaleBytes + 64 * j + 4 * r, 4);
  }
}

}  // namespace hearth::quant
