// The 16-row interleaved weight layout (interleave.h): plain scalar code,
// run once per weight at load, and the reference the kernels are tested on.
#include "hearth/engine/quant/interleave.h"

#include <hearth/engine/quant/blocks.h>

#include <cassert>
#include <cstddef>
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

// The formats with a layout: three of 32-value blocks, and Q4_K and Q6_K
// (their own code below).
bool has_layout(DType type) {
  return type == DType::Q4_0 || type == DType::Q5_0 || type == DType::Q8_0 || type == DType::Q4_K ||
         type == DType::Q6_K;
}

BlockShape shape_of(DType type) {
  static_assert(sizeof(BlockQ4_0) == 2 + kQK / 2 && sizeof(BlockQ8_0) == 2 + kQK, "fp16 scale, then the codes");
  static_assert(sizeof(BlockQ5_0) == 2 + 4 + kQK / 2, "fp16 scale, fifth bits, then the codes");
  switch (type) {
    case DType::Q8_0: return {sizeof(BlockQ8_0), 0, kQK};
    case DType::Q5_0: return {sizeof(BlockQ5_0), 4, kQK / 2};
    default: return {sizeof(BlockQ4_0), 0, kQK / 2};
  }
}

// A little-endian 32-bit word (Q5_0's qh, Q4_K's packed scale words).
uint32_t read_u32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24; }
void write_u32(uint32_t v, uint8_t* p) {
  for (int k = 0; k < 4; ++k) p[k] = static_cast<uint8_t>(v >> (8 * k));
}

// Q5_0's fifth bits: mask j (j = 0..7), bit 4r + i, is row r's qh bit 4j + i,
// so nibble r % 2 of mask byte r / 2 is qh nibble j.
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
  if (s.high_bytes) masks_from_qh(read_u32(row_blk + 2), r, group_blk + kScaleBytes);
  const uint8_t* codes = row_blk + 2 + s.high_bytes;
  uint8_t* chunks = group_blk + s.chunks_at();
  for (size_t j = 0; j < s.code_bytes / 4; ++j) std::memcpy(chunks + 64 * j + 4 * r, codes + 4 * j, 4);
}
void from_group(const uint8_t* group_blk, int64_t r, BlockShape s, uint8_t* row_blk) {
  std::memcpy(row_blk, group_blk + 2 * r, 2);
  if (s.high_bytes) write_u32(qh_from_masks(group_blk + kScaleBytes, r), row_blk + 2);
  uint8_t* codes = row_blk + 2 + s.high_bytes;
  const uint8_t* chunks = group_blk + s.chunks_at();
  for (size_t j = 0; j < s.code_bytes / 4; ++j) std::memcpy(codes + 4 * j, chunks + 64 * j + 4 * r, 4);
}

// Q4_K (interleave.h): the 12 scale bytes hold 8 six-bit scales and 8
// six-bit mins, every bit used, so they unpack and pack back exactly.
struct ScalesQ4_K {
  uint8_t sc[8], m[8];
};
ScalesQ4_K unpack_scales(const uint8_t* q) {
  ScalesQ4_K s;
  for (int j = 0; j < 4; ++j) {
    s.sc[j] = q[j] & 63;
    s.m[j] = q[j + 4] & 63;
    s.sc[j + 4] = static_cast<uint8_t>((q[j + 8] & 0x0F) | (q[j] >> 6) << 4);
    s.m[j + 4] = static_cast<uint8_t>((q[j + 8] >> 4) | (q[j + 4] >> 6) << 4);
  }
  return s;
}
void pack_scales(const ScalesQ4_K& s, uint8_t* q) {
  for (int j = 0; j < 4; ++j) {
    q[j] = static_cast<uint8_t>(s.sc[j] | (s.sc[j + 4] >> 4) << 6);
    q[j + 4] = static_cast<uint8_t>(s.m[j] | (s.m[j + 4] >> 4) << 6);
    q[j + 8] = static_cast<uint8_t>((s.sc[j + 4] & 0x0F) | (s.m[j + 4] & 0x0F) << 4);
  }
}

constexpr size_t kQ4KScalesLo = 64, kQ4KMinsLo = 128, kQ4KHigh = 192, kQ4KChunks = 256;


void q4k_to_group(const BlockQ4_K& x, int64_t r, uint8_t* g) {
  std::memcpy(g + 2 * r, &x.d, 2);
  std::memcpy(g + 32 + 2 * r, &x.dmin, 2);
  const ScalesQ4_K s = unpack_scales(x.scales);
  uint32_t sc_lo = 0, m_lo = 0, high = 0;
  for (int j = 0; j < 8; ++j) {
    sc_lo |= static_cast<uint32_t>(s.sc[j] & 0x0F) << (4 * j);
    m_lo |= static_cast<uint32_t>(s.m[j] & 0x0F) << (4 * j);
    high |= static_cast<uint32_t>(s.sc[j] >> 4) << (2 * j) | static_cast<uint32_t>(s.m[j] >> 4) << (16 + 2 * j);
  }
  write_u32(sc_lo, g + kQ4KScalesLo + 4 * r);
  write_u32(m_lo, g + kQ4KMinsLo + 4 * r);
  write_u32(high, g + kQ4KHigh + 4 * r);
  for (int c = 0; c < 32; ++c) std::memcpy(g + kQ4KChunks + 64 * c + 4 * r, x.qs + 4 * c, 4);
}
void q4k_from_group(const uint8_t* g, int64_t r, BlockQ4_K& x) {
  std::memcpy(&x.d, g + 2 * r, 2);
  std::memcpy(&x.dmin, g + 32 + 2 * r, 2);
  const uint32_t sc_lo = read_u32(g + kQ4KScalesLo + 4 * r), m_lo = read_u32(g + kQ4KMinsLo + 4 * r);
  const uint32_t high = read_u32(g + kQ4KHigh + 4 * r);
  ScalesQ4_K s;
  for (int j = 0; j < 8; ++j) {
    s.sc[j] = static_cast<uint8_t>((sc_lo >> (4 * j) & 0x0F) | (high >> (2 * j) & 3) << 4);
    s.m[j] = static_cast<uint8_t>((m_lo >> (4 * j) & 0x0F) | (high >> (16 + 2 * j) & 3) << 4);
  }
  pack_scales(s, x.scales);
  for (int c = 0; c < 32; ++c) std::memcpy(x.qs + 4 * c, g + kQ4KChunks + 64 * c + 4 * r, 4);
}

// Q6_K (interleave.h): every field is whole 4-byte words, so the group
// block is four word arrays side by side, each word of row r at 4r.
constexpr size_t kQ6KScales = 32, kQ6KLow = 288, kQ6KHigh = 2336;

// Row block fields by offset: a row block need not be aligned for BlockQ6_K.
constexpr size_t kQ6KRowQl = offsetof(BlockQ6_K, ql), kQ6KRowQh = offsetof(BlockQ6_K, qh),
                 kQ6KRowScales = offsetof(BlockQ6_K, scales), kQ6KRowD = offsetof(BlockQ6_K, d);

void q6k_to_group(const uint8_t* x, int64_t r, uint8_t* g) {
  std::memcpy(g + 2 * r, x + kQ6KRowD, 2);
  for (int c = 0; c < 4; ++c) std::memcpy(g + kQ6KScales + 64 * c + 4 * r, x + kQ6KRowScales + 4 * c, 4);
  for (int c = 0; c < 32; ++c) std::memcpy(g + kQ6KLow + 64 * c + 4 * r, x + kQ6KRowQl + 4 * c, 4);
  for (int c = 0; c < 16; ++c) std::memcpy(g + kQ6KHigh + 64 * c + 4 * r, x + kQ6KRowQh + 4 * c, 4);
}
void q6k_from_group(const uint8_t* g, int64_t r, uint8_t* x) {
  std::memcpy(x + kQ6KRowD, g + 2 * r, 2);
  for (int c = 0; c < 4; ++c) std::memcpy(x + kQ6KRowScales + 4 * c, g + kQ6KScales + 64 * c + 4 * r, 4);
  for (int c = 0; c < 32; ++c) std::memcpy(x + kQ6KRowQl + 4 * c, g + kQ6KLow + 64 * c + 4 * r, 4);
  for (int c = 0; c < 16; ++c) std::memcpy(x + kQ6KRowQh + 4 * c, g + kQ6KHigh + 64 * c + 4 * r, 4);
}

// Values per block and bytes per block of a type with a layout.
int64_t block_values(DType type) { return type == DType::Q4_K || type == DType::Q6_K ? kQK_K : kQK; }
size_t block_bytes(DType type) {
  if (type == DType::Q4_K) return sizeof(BlockQ4_K);
  if (type == DType::Q6_K) return sizeof(BlockQ6_K);
  return shape_of(type).block_bytes;
}

// Row r's block b of a group, either direction, whatever the type.
void row_to_group(DType type, const uint8_t* row_blk, int64_t r, uint8_t* group_blk) {
  if (type == DType::Q6_K) {
    q6k_to_group(row_blk, r, group_blk);
  } else if (type == DType::Q4_K) {
    BlockQ4_K x;
    std::memcpy(&x, row_blk, sizeof x);
    q4k_to_group(x, r, group_blk);
  } else {
    to_group(row_blk, r, shape_of(type), group_blk);
  }
}
void row_from_group(DType type, const uint8_t* group_blk, int64_t r, uint8_t* row_blk) {
  if (type == DType::Q6_K) {
    q6k_from_group(group_blk, r, row_blk);
  } else if (type == DType::Q4_K) {
    BlockQ4_K x;
    q4k_from_group(group_blk, r, x);
    std::memcpy(row_blk, &x, sizeof x);
  } else {
    from_group(group_blk, r, shape_of(type), row_blk);
  }
}

}  // namespace

bool can_interleave(DType type, int64_t rows, int64_t cols) {
  return has_layout(type) && rows >= kInterleaveRows && cols > 0 &&
         cols % block_values(type) == 0;
}

void interleave_rows(DType type, const void* src, void* dst, int64_t rows, int64_t cols) {
  assert(can_interleave(type, rows, cols));
  const int64_t blocks = cols / block_values(type);
  const size_t bb = block_bytes(type);
  const size_t row_bytes = static_cast<size_t>(blocks) * bb;
  const int64_t grouped = grouped_rows(rows);
  const auto* in = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t g = 0; g < grouped; g += kInterleaveRows) {
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t* group_blk = out + static_cast<size_t>(g) * row_bytes + static_cast<size_t>(b) * bb * kInterleaveRows;
      for (int64_t r = 0; r < kInterleaveRows; ++r) {
        row_to_group(type, in + static_cast<size_t>(g + r) * row_bytes + static_cast<size_t>(b) * bb, r, group_blk);
      }
    }
  }
  // The last rows % 16 rows stay plain.
  std::memcpy(out + static_cast<size_t>(grouped) * row_bytes, in + static_cast<size_t>(grouped) * row_bytes,
              static_cast<size_t>(rows - grouped) * row_bytes);
}

void interleave_rows_in_place(DType type, void* data, int64_t rows, int64_t cols) {
  assert(can_interleave(type, rows, cols));
  const size_t group_bytes = static_cast<size_t>(cols / block_values(type)) * block_bytes(type) * kInterleaveRows;
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
  const int64_t blocks = cols / block_values(type);
  const size_t bb = block_bytes(type);
  const size_t row_bytes = static_cast<size_t>(blocks) * bb;
  const auto* in = static_cast<const uint8_t*>(group);
  auto* out = static_cast<uint8_t*>(dst_rows);
  // Block by block: each group block is read once, as one contiguous piece.
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* blk = in + static_cast<size_t>(b) * bb * kInterleaveRows;
    for (int64_t r = 0; r < kInterleaveRows; ++r) {
      row_from_group(type, blk, r, out + static_cast<size_t>(r) * row_bytes + static_cast<size_t>(b) * bb);
    }
  }
}

void deinterleave_row(DType type, const void* group, int64_t r, int64_t cols, void* dst_row) {
  assert(has_layout(type) && r >= 0 && r < kInterleaveRows);
  const size_t bb = block_bytes(type);
  const auto* in = static_cast<const uint8_t*>(group);
  auto* out = static_cast<uint8_t*>(dst_row);
  for (int64_t b = 0; b < cols / block_values(type); ++b) {
    row_from_group(type, in + static_cast<size_t>(b) * bb * kInterleaveRows, r, out + static_cast<size_t>(b) * bb);
  }
}

}  // namespace hearth::quant
