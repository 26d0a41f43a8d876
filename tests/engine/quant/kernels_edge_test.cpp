// Kernel tiles at the extremes of their formats' codes, at every SIMD level
// the CPU supports, against the scalar kernels: what random rows never reach
// (Q8_0 codes of -128, K-quant codes, scales and mins at their maxima).
#include <gtest/gtest.h>
#include <hearth/engine/quant/blocks.h>
#include <hearth/engine/quant/interleave.h>
#include <hearth/engine/quant/kernels.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include "kernels_test_support.h"

namespace hearth::quant {
namespace {

using namespace kernel_tests;

// Random Q8_0 rows with codes of -128 planted every 1 to 3 values (the
// step varies by row; `stagger`: odd rows start one value later).
Matrix q8_0_rows_with_minus_128(int64_t rows, int64_t n, uint32_t seed, bool stagger) {
  Matrix w = random_rows(DType::Q8_0, rows, n, seed);
  for (int64_t r = 0; r < rows; ++r) {
    auto* blocks = reinterpret_cast<BlockQ8_0*>(w.bytes.data() + r * w.row_bytes);
    for (int64_t b = 0; b < n / 32; ++b) {
      const int first = stagger ? static_cast<int>(r % 2) : 0;
      for (int i = first; i < 32; i += 1 + static_cast<int>(r % 3)) blocks[b].qs[i] = -128;
    }
  }
  return w;
}

// Every output of type's gemm of w (rows x n) against a (cols x n) is the
// scalar dot product within tol(r, c, want).
template <typename Tol>
void expect_gemm_matches_scalar(const KernelTable& table, const KernelTable& scalar, DType type, const Matrix& w,
                                const Matrix& a, int64_t n, int64_t rows, int64_t cols, Tol tol) {
  const TypeKernels& k = table.get(type);
  const TypeKernels& ref = scalar.get(type);
  std::vector<float> out(static_cast<size_t>(rows * cols));
  k.gemm(n, w.bytes.data(), w.row_bytes, rows, a.bytes.data(), a.row_bytes, cols, out.data(), rows);
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      const float want = ref.vec_dot(n, w.bytes.data() + r * w.row_bytes, a.bytes.data() + c * a.row_bytes);
      ASSERT_TRUE(std::isfinite(want)) << traits(type).name << " r=" << r << " c=" << c;
      ASSERT_NEAR(out[static_cast<size_t>(c * rows + r)], want, tol(r, c, want))
          << traits(type).name << " r=" << r << " c=" << c << " at " << to_string(k.level);
    }
  }
}

// Q8_0 codes of -128 (the format allows them; the quantizer never writes
// them, a foreign file may): the tiles that take magnitudes and signs apart
// (AVX2) must read 128, not -128 or a saturated sum.
TEST_P(LevelTest, GemmReadsQ8_0CodesOfMinus128) {
  constexpr int64_t n = 160, rows = 16, cols = 5;
  const Matrix w = q8_0_rows_with_minus_128(rows, n, 21, false);
  const Matrix a = random_rows(table_.get(DType::Q8_0).act_type, cols, n, 22);
  expect_gemm_matches_scalar(table_, scalar_, DType::Q8_0, w, a, n, rows, cols,
                             [](int64_t, int64_t, float want) { return 1e-4 * (1 + std::fabs(want)); });
}

// MXFP4 blocks whose exponents span the format (from the smallest scales,
// subnormal as floats, to 2^60), every code in each block: the prompt tiles
// fold the power of two into a float scale and, at the 256-bit levels
// without VNNI, an offset of 16 x that scale; they must give the scalar dot
// products.
TEST_P(LevelTest, GemmMxfp4AcrossItsExponents) {
  constexpr int64_t n = 192, rows = 24, cols = 6;
  Matrix w = random_rows(DType::MXFP4, rows, n, 31);
  const uint8_t exponents[] = {0, 1, 2, 20, 100, 127, 128, 150, 188};
  for (int64_t r = 0; r < rows; ++r) {
    auto* blocks = reinterpret_cast<BlockMXFP4*>(w.bytes.data() + r * w.row_bytes);
    for (int64_t b = 0; b < n / 32; ++b) {
      blocks[b].e = exponents[static_cast<size_t>(r + b) % std::size(exponents)];
      for (int i = 0; i < 16; ++i) blocks[b].qs[i] = static_cast<uint8_t>((i + r + b) % 16 | ((15 - i) % 16) << 4);
    }
  }
  std::vector<float> values(static_cast<size_t>(rows * n));
  ASSERT_TRUE(dequantize_row(DType::MXFP4, w.bytes.data(), values.data(), rows * n).ok());
  const Matrix a = random_rows(table_.get(DType::MXFP4).act_type, cols, n, 32);
  expect_gemm_matches_scalar(table_, scalar_, DType::MXFP4, w, a, n, rows, cols, [&](int64_t r, int64_t c, float) {
    return 2e-5 * magnitude(values.data() + r * n, a.values.data() + c * n, n);
  });
}

// The same codes through the interleaved decode kernels (AVX2 also takes
// magnitudes and signs apart there), the activation at -127 and 127, for
// one token and for several in one pass: two groups and three plain rows.
TEST_P(LevelTest, InterleavedDecodeReadsQ8_0CodesOfMinus128) {
  const DecodeKernels& k = table_.get(DType::Q8_0).interleaved.decode;
  if (!k.rows) GTEST_SKIP() << "no interleaved Q8_0 kernels at this level";
  const TypeKernels& ref = scalar_.get(DType::Q8_0);
  constexpr int64_t n = 96, rows = 35, cols = 4;
  const Matrix w = q8_0_rows_with_minus_128(rows, n, 23, true);
  Matrix a = random_rows(DType::Q8_0, cols, n, 24);
  for (int64_t c = 0; c < 2; ++c) {
    auto* blocks = reinterpret_cast<BlockQ8_0*>(a.bytes.data() + c * a.row_bytes);
    for (int64_t b = 0; b < n / 32; ++b) std::memset(blocks[b].qs, c == 0 ? 0x81 : 0x7F, 32);  // -127, 127
  }
  std::vector<uint8_t> il(w.bytes.size());
  interleave_rows(DType::Q8_0, w.bytes.data(), il.data(), rows, n);
  const size_t stride = k.prepared_bytes(n);
  std::vector<uint8_t> acts(stride * cols);
  for (int64_t c = 0; c < cols; ++c) k.prepare(a.bytes.data() + c * a.row_bytes, acts.data() + c * stride, n);
  std::vector<float> out(static_cast<size_t>(rows * cols));
  k.rows_multi(n, il.data(), w.row_bytes, rows, acts.data(), stride, cols, out.data(), rows);
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) {
      const float want = ref.vec_dot(n, w.bytes.data() + r * w.row_bytes, a.bytes.data() + c * a.row_bytes);
      ASSERT_NEAR(out[static_cast<size_t>(c * rows + r)], want, 1e-4 * (1 + std::fabs(want))) << "r=" << r << " c=" << c;
    }
  }
}

// K-quant rows and Q8_K activations at the extremes of their codes, scales
// and mins: the tiles that keep int16 pair sums and integer scale products
// (AVX2) must neither saturate nor wrap. Rows alternate codes at their
// maximum and mixed codes, activations alternate all -128, all 127 and
// mixed signs; the scalar dot product is the reference.
TEST_P(LevelTest, GemmKQuantsAtTheExtremesOfTheirCodes) {
  constexpr int64_t n = 512, rows = 16, cols = 6;
  Matrix a = random_rows(DType::Q8_K, cols, n, 31);
  for (int64_t c = 0; c < cols; ++c) {
    auto* blocks = reinterpret_cast<BlockQ8_K*>(a.bytes.data() + c * a.row_bytes);
    for (int64_t b = 0; b < n / kQK_K; ++b) {
      for (int i = 0; i < kQK_K; ++i) {
        blocks[b].qs[i] = static_cast<int8_t>(c % 3 == 0 ? -128 : c % 3 == 1 ? 127 : (i % 2 ? 127 : -128));
      }
      for (int s = 0; s < kQK_K / 16; ++s) {
        int sum = 0;
        for (int i = 16 * s; i < 16 * s + 16; ++i) sum += blocks[b].qs[i];
        blocks[b].bsums[s] = static_cast<int16_t>(sum);
      }
    }
  }
  for (DType type : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    Matrix w = random_rows(type, rows, n, 32);
    for (int64_t r = 0; r < rows; ++r) {
      uint8_t* row = w.bytes.data() + r * w.row_bytes;
      const bool all_max = r % 2 == 0;
      for (int64_t b = 0; b < n / kQK_K; ++b) {
        if (type == DType::Q6_K) {
          auto& blk = reinterpret_cast<BlockQ6_K*>(row)[b];
          if (all_max) {
            std::memset(blk.ql, 0xFF, sizeof(blk.ql));
            std::memset(blk.qh, 0xFF, sizeof(blk.qh));
          }
          for (int s = 0; s < kQK_K / 16; ++s) blk.scales[s] = static_cast<int8_t>(s % 2 ? 127 : -128);
        } else {
          // Q4_K and Q5_K share the head: d, dmin, twelve scale bytes (all
          // ones: every six-bit scale and min is 63).
          auto& blk = reinterpret_cast<BlockQ4_K*>(row + b * traits(type).block_bytes)[0];
          std::memset(blk.scales, 0xFF, sizeof(blk.scales));
          if (all_max) {
            if (type == DType::Q5_K) {
              auto& b5 = reinterpret_cast<BlockQ5_K*>(row)[b];
              std::memset(b5.qh, 0xFF, sizeof(b5.qh));
              std::memset(b5.qs, 0xFF, sizeof(b5.qs));
            } else {
              std::memset(blk.qs, 0xFF, sizeof(blk.qs));
            }
          }
        }
      }
    }
    expect_gemm_matches_scalar(table_, scalar_, type, w, a, n, rows, cols,
                               [](int64_t, int64_t, float want) { return 1e-5 * (1 + std::fabs(want)); });
  }
}

}  // namespace
}  // namespace hearth::quant
