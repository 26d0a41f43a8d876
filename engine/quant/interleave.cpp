// The 16-row interleaved weight layout (interleave.h): plain scalar code,
// run once per weight at load, and the reference the kernels are tested on.
#include "hearth/engine/quant/interleave.h"

#include <hearth/engine/quant/blocks.h>

#include <cassert>
#include <cstring>
#include <vector>

namespace hearth::quant {
namespace {

constexpr size_t kScaleBytes = 2 * kInterleaveRows;  // the 16 rows' fp16 scales

// A format with one fp16 scale followed by `code_bytes` bytes of codes per
// block of 32 values.
struct BlockShape {
  size_t block_bytes;
  size_t code_bytes;
};

BlockShape shape_of(DType type) {
  static_assert(sizeof(BlockQ4_0) == 2 + kQK / 2 && sizeof(BlockQ8_0) == 2 + kQK, "fp16 scale, then the codes");
  return type == DType::Q8_0 ? BlockShape{sizeof(BlockQ8_0), kQK} : BlockShape{sizeof(BlockQ4_0), kQK / 2};
}

// Row r's block (plain bytes at row_blk) and its place in the group block
// at group_blk, in either direction.
void to_group(const uint8_t* row_blk, int64_t r, BlockShape s, uint8_t* group_blk) {
  std::memcpy(group_blk + 2 * r, row_blk, 2);
  for (size_t j = 0; j < s.code_bytes / 4; ++j) std::memcpy(group_blk + kScaleBytes + 64 * j + 4 * r, row_blk + 2 + 4 * j, 4);
}
void from_group(const uint8_t* group_blk, int64_t r, BlockShape s, uint8_t* row_blk) {
  std::memcpy(row_blk, group_blk + 2 * r, 2);
  for (size_t j = 0; j < s.code_bytes / 4; ++j) std::memcpy(row_blk + 2 + 4 * j, group_blk + kScaleBytes + 64 * j + 4 * r, 4);
}

void interleave_group(const uint8_t* src, size_t row_bytes, uint8_t* dst, int64_t blocks, BlockShape s) {
  for (int64_t b = 0; b < blocks; ++b) {
    uint8_t* out = dst + static_cast<size_t>(b) * s.block_bytes * kInterleaveRows;
    for (int64_t r = 0; r < kInterleaveRows; ++r) {
      to_group(src + static_cast<size_t>(r) * row_bytes + static_cast<size_t>(b) * s.block_bytes, r, s, out);
    }
  }
}

}  // namespace

bool can_interleave(DType type, int64_t rows, int64_t cols) {
  return (type == DType::Q4_0 || type == DType::Q8_0) && rows > 0 && rows % kInterleaveRows == 0 && cols > 0 &&
         cols % kQK == 0;
}

void interleave_rows(DType type, const void* src, void* dst, int64_t rows, int64_t cols) {
  assert(can_interleave(type, rows, cols));
  const BlockShape s = shape_of(type);
  const int64_t blocks = cols / kQK;
  const size_t row_bytes = static_cast<size_t>(blocks) * s.block_bytes;
  const size_t group_bytes = row_bytes * kInterleaveRows;
  for (int64_t g = 0; g < rows / kInterleaveRows; ++g) {
    interleave_group(static_cast<const uint8_t*>(src) + static_cast<size_t>(g) * group_bytes, row_bytes,
                     static_cast<uint8_t*>(dst) + static_cast<size_t>(g) * group_bytes, blocks, s);
  }
}

void interleave_rows_in_place(DType type, void* data, int64_t rows, int64_t cols) {
  assert(can_interleave(type, rows, cols));
  const size_t group_bytes = static_cast<size_t>(cols / kQK) * shape_of(type).block_bytes * kInterleaveRows;
  std::vector<uint8_t> plain(group_bytes);
  auto* bytes = static_cast<uint8_t*>(data);
  for (int64_t g = 0; g < rows / kInterleaveRows; ++g) {
    uint8_t* group = bytes + static_cast<size_t>(g) * group_bytes;
    std::memcpy(plain.data(), group, group_bytes);
    interleave_rows(type, plain.data(), group, kInterleaveRows, cols);
  }
}

void deinterleave_group(DType type, const void* group, int64_t cols, void* dst_rows) {
  assert(type == DType::Q4_0 || type == DType::Q8_0);
  const BlockShape s = shape_of(type);
  const int64_t blocks = cols / kQK;
  const size_t row_bytes = static_cast<size_t>(blocks) * s.block_bytes;
  const auto* in = static_cast<const uint8_t*>(group);
  auto* out = static_cast<uint8_t*>(dst_rows);
  // Block by block: each group block is read once, as one contiguous piece.
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* blk = in + static_cast<size_t>(b) * s.block_bytes * kInterleaveRows;
    for (int64_t r = 0; r < kInterleaveRows; ++r) {
      from_group(blk, r, s, out + static_cast<size_t>(r) * row_bytes + static_cast<size_t>(b) * s.block_bytes);
    }
  }
}

void deinterleave_row(DType type, const void* group, int64_t r, int64_t cols, void* dst_row) {
  assert((type == DType::Q4_0 || type == DType::Q8_0) && r >= 0 && r < kInterleaveRows);
  const BlockShape s = shape_of(type);
  const auto* in = static_cast<const uint8_t*>(group);
  auto* out = static_cast<uint8_t*>(dst_row);
  for (int64_t b = 0; b < cols / kQK; ++b) {
    from_group(in + static_cast<size_t>(b) * s.block_bytes * kInterleaveRows, r, s,
               out + static_cast<size_t>(b) * s.block_bytes);
  }
}

}  // namespace hearth::quant
