// Weight rows interleaved in groups of 16 for the CPU's few-token decode
// kernels (TypeKernels::interleaved in kernels.h).
//
// In the plain layout a weight row is contiguous, so a kernel that computes
// 16 rows at once needs 16 activation loads per block of each row, or a
// transpose of the codes per block. In the interleaved layout, block b of a
// group of 16 rows is 16 * block_bytes contiguous bytes laid out so that one
// 512-bit load gives the same 4 code bytes of all 16 rows: one int32 lane per
// row, the activation's 4 matching bytes broadcast to every lane, and the
// 16 lanes end as the 16 rows' sums with no horizontal reduction. The group
// keeps its plain size (16 rows x row bytes), so row r of a tensor still
// starts its group at r * row_bytes for r a multiple of 16.
//
// Q4_0 group block (288 bytes = 16 x 18):
//   bytes   0..31   the 16 rows' fp16 scales, row order
//   bytes  32..287  four 64-byte chunks: chunk j, bytes 4r..4r+3 are row r's
//                   qs[4j..4j+3] (values 4j..4j+3 in the low nibbles,
//                   16+4j..16+4j+3 in the high nibbles)
// Q8_0 group block (544 bytes = 16 x 34): the 16 scales, then eight 64-byte
// chunks: chunk j, bytes 4r..4r+3 are row r's qs[4j..4j+3].
// Q5_0 group block (352 bytes = 16 x 22): the 16 scales; then eight 64-bit
// masks of fifth bits, mask j bit 4r + i = row r's qh bit 4j + i (the fifth
// bit of value 4j + i: chunk j's low nibbles for j < 4, chunk j - 4's high
// nibbles after), so a masked byte add puts them on the codes of a chunk;
// then four 64-byte chunks of low bits as in Q4_0.
// Q4_K group block (2304 bytes = 16 x 144, one per 256 values):
//   bytes    0..31   the 16 rows' fp16 d, row order; 32..63 their fp16 dmin
//   bytes   64..127  word r: row r's eight scales' low 4 bits, scale j in bits 4j..4j+3
//   bytes  128..191  word r: the same for the eight mins
//   bytes  192..255  word r: bits 2j..2j+1 scale j's high 2 bits, 16+2j.. min j's
//   bytes  256..2303 32 chunks: chunk c, bytes 4r..4r+3 are row r's
//                    qs[4c..4c+3] (chunk 8k + i: values 4i..4i+3 of
//                    sub-block 2k in the low nibbles, of 2k+1 in the high)
// The 12 packed scale bytes of a row use every bit, so they are rebuilt
// exactly from these words.
// Q6_K group block (3360 bytes = 16 x 210, one per 256 values):
//   bytes    0..31   the 16 rows' fp16 d, row order
//   bytes   32..287  4 chunks: chunk c, bytes 4r..4r+3 are row r's int8
//                    scales[4c..4c+3]
//   bytes  288..2335 32 chunks: chunk c, bytes 4r..4r+3 are row r's ql[4c..4c+3]
//   bytes 2336..3359 16 chunks: chunk c, bytes 4r..4r+3 are row r's qh[4c..4c+3]
// so values 128h + 32g + 4i..+3 (h = 0, 1; g = 0..3; i = 0..7) of the 16
// rows are low (g < 2) or high nibbles of ql chunk 16h + 8(g % 2) + i and
// bits 2g..2g+1 of qh chunk 8h + i.
//
// A matrix whose row count is not a multiple of 16 keeps its last rows % 16
// rows plain, after the groups (a vocabulary of 151669 tokens, say): the
// kernels compute those rows one at a time.
#pragma once

#include <hearth/engine/quant/types.h>

#include <cstdint>

namespace hearth::quant {

inline constexpr int64_t kInterleaveRows = 16;

// Whether a rows x cols matrix of `type` has an interleaved layout: Q4_0,
// Q5_0, Q8_0, Q4_K or Q6_K with at least one 16-row group.
bool can_interleave(DType type, int64_t rows, int64_t cols);

// The rows of a `rows`-row matrix that are in whole groups; the rest follow
// in the plain layout.
constexpr int64_t grouped_rows(int64_t rows) { return rows / kInterleaveRows * kInterleaveRows; }

// Plain rows (src, row_bytes(type, cols) apart) -> interleaved groups at dst,
// and the last rows % 16 rows copied as they are. src and dst must not
// overlap; can_interleave(type, rows, cols) must hold.
void interleave_rows(DType type, const void* src, void* dst, int64_t rows, int64_t cols);

// The same in place, through one group's worth of temporary memory.
void interleave_rows_in_place(DType type, void* data, int64_t rows, int64_t cols);

// The 16 rows of the interleaved group at `group`, in the plain layout
// (row r at dst_rows + r * row bytes); faster than 16 deinterleave_row calls.
void deinterleave_group(DType type, const void* group, int64_t cols, void* dst_rows);

// Row `r` (0..15) of the interleaved group at `group`, in the plain layout.
void deinterleave_row(DType type, const void* group, int64_t r, int64_t cols, void* dst_row);

}  // namespace hearth::quant
