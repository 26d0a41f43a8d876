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
constexpr size_t kMaskBytes = 8 * 8;                 // Q5_0: eight 64-bit masks of fifth bits

// A format with one fp16 scale per block of 32 values, then (Q5_0 only) 4
// bytes of fifth bits, then `code_bytes` bytes of codes.
struct BlockShape {
  size_t block_bytes;
  size_t high_bytes;  // 4 for Q5_0's qh, else 0
  size_t code_bytes;
  // Where a group block's code chunks start.
  size_t chunks_at() const { return kScaleBytes + (high_bytes ? kMaskBytes : 0); }
};

bool has_layout(DType type) { return type == DType::Q4_0 || type == DType::Q5_0 || type == DType::Q8_0; }

BlockShape shape_of(DType type) {
  static_assert(sizeof(BlockQ4_0) == 2 + kQK / 2 && sizeof(BlockQ8_0) == 2 + kQK, "fp16 scale, then the codes");
  static_assert(sizeof(BlockQ5_0) == 2 + 4 + kQK / 2, "fp16 scale, fifth bits, then the codes");
  switch (type) {
    case DType::Q8_0: return {sizeof(BlockQ8_0), 0, kQK};
    case DType::Q5_0: return {sizeof(BlockQ5_0), 4, kQK / 2};
    default: return {sizeof(BlockQ4_0), 0, kQK / 2};
  }
}

// Q5_0's fifth bits: mask j (j = 0..7), bit 4r + i, is row r's qh bit 4j + i,
// so nibble r % 2 of mask byte r / 2 is qh nibble j.
uint32_t read_qh(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }
void write_qh(uint32_t qh, uint8_t* p) {
  for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(qh >> (8 * k));
}
void masks_from_qh(uint32_t qh, int64_t r, uint8_t* masks) {
  const int shift = 4 * static_cast<int>(r % 2);
  for (int j = 0; j < 8; ++j) {
    uint8_t& byte = masks[8 * j + r / 2];
    byte = static_cast<uint8_t>((byte & ~(0x0F << shift)) | ((qh >> (4 * j)) & 0x0F) << shift);
  }
}
uint32_t qh_from_masks(const uint8_t* masks, int64_t r) {
  const int shift = 4 * static_cast<int>(r % 2);
  uint32_t qh = 0;
  for (int j = 0; j < 8; ++j) qh |= static_cast<uint32_t>((masks[8 * j + r / 2] >> shift) & 0x0F) << (4 * j);
  return qh;
}

// Row r's block (plain bytes at row_blk) and its place in the group block
// at group_blk, in either direction.
void to_group(const uint8_t* row_blk, int64_t r, BlockShape s, uint8_t* group_blk) {
  std::memcpy(group_blk + 2 * r, row_blk, 2);
  if (s.high_bytes) masks_from_qh(read_qh(row_blk + 2), r, group_blk + kScaleBytes);
  const uint8_t* codes = row_blk + 2 + s.high_bytes;
  uint8_t* chunks = group_blk + s.chunks_at();
  for (size_t j = 0; j < s.code_bytes / 4; ++j) std::memcpy(chunks + 64 * j + 4 * r, codes + 4 * j, 4);
}
void from_group(const uint8_t* group_blk, int64_t r, BlockShape s, uint8_t* row_blk) {
  std::memcpy(row_blk, group_blk + 2 * r, 2);
  if (s.high_bytes) write_qh(qh_from_masks(group_blk + kScaleBytes, r), row_blk + 2);
  uint8_t* codes = row_blk + 2 + s.high_bytes;
  const uint8_t* chunks = group_blk + s.chunks_at();
  for (size_t j = 0; j < s.code_bytes / 4; ++j) std::memcpy(codes + 4 * j, chunks + 64 * j + 4 * r, 4);
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
  return has_layout(type) && rows >= kInterleaveRows && cols > 0 && cols % kQK == 0;
}

void interleave_rows(DType type, const void* src, void* dst, int64_t rows, int64_t cols) {
  assert(can_interleave(type, rows, cols));
  const BlockShape s = shape_of(type);
  const int64_t blocks = cols / kQK;
  const size_t row_bytes = static_cast<size_t>(blocks) * s.block_bytes;
  const size_t group_bytes = row_bytes * kInterleaveRows;
  const int64_t grouped = grouped_rows(rows);
  for (int64_t g = 0; g < grouped / kInterleaveRows; ++g) {
    interleave_group(static_cast<const uint8_t*>(src) + static_cast<size_t>(g) * group_bytes, row_bytes,
                     static_cast<uint8_t*>(dst) + static_cast<size_t>(g) * group_bytes, blocks, s);
  }
  // The last rows % 16 rows stay plain.
  std::memcpy(static_cast<uint8_t*>(dst) + static_cast<size_t>(grouped) * row_bytes,
              static_cast<const uint8_t*>(src) + static_cast<size_t>(grouped) * row_bytes,
              static_cast<size_t>(rows - grouped) * row_bytes);
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
  assert(has_layout(type));
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
  assert(has_layout(type) && r >= 0 && r < kInterleaveRows);
  const BlockShape s = shape_of(type);
  const auto* in = static_cast<const uint8_t*>(group);
  auto* out = static_cast<uint8_t*>(dst_row);
  for (int64_t b = 0; b < cols / kQK; ++b) {
    from_group(in + static_cast<size_t>(b) * s.block_bytes * kInterleaveRows, r, s,
               out + static_cast<size_t>(b) * s.block_bytes);
  }
}

}  // namespace hearth::quant
