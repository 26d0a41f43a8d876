// Every SIMD level the CPU supports against the scalar kernels, for every
// weight format, on random data with several row lengths and odd tile shapes.
#include <gtest/gtest.h>
#include <hearth/engine/quant/blocks.h>
#include <hearth/engine/quant/fp16.h>
#include <hearth/engine/quant/interleave.h>
#include <hearth/engine/quant/kernels.h>
#include <hearth/engine/quant/reference.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels_test_support.h"

namespace hearth::quant {
namespace {

using namespace kernel_tests;

// The scalar dot products against an independent float computation on the
// dequantized rows: checks the integer/bit bookkeeping of each format.
TEST(ScalarDot, MatchesFloatDotOfDequantizedRows) {
  const KernelTable scalar = select_kernels(CpuFeatures{}, KernelLevel::Scalar);
  for (DType type : kWeightTypes) {
    const TypeKernels& k = scalar.get(type);
    ASSERT_NE(k.vec_dot, nullptr) << traits(type).name;
    for (int64_t n : lengths_for(type)) {
      const Matrix w = random_rows(type, 3, n, 11);
      const Matrix a = random_rows(k.act_type, 1, n, 12);
      for (int64_t r = 0; r < 3; ++r) {
        const float got = k.vec_dot(n, w.bytes.data() + r * w.row_bytes, a.bytes.data());
        const double want = exact_dot(w.values.data() + r * n, a.values.data(), n);
        const double tol = 1e-5 * magnitude(w.values.data() + r * n, a.values.data(), n) + 1e-12;
        ASSERT_NEAR(got, want, tol) << traits(type).name << " n=" << n << " row " << r;
      }
    }
  }
}

TEST_P(LevelTest, TableReportsTheRequestedLevel) {
  EXPECT_EQ(table_.level, GetParam());
  // Every format keeps a kernel at every level (a lower one at worst).
  for (DType type : kWeightTypes) {
    ASSERT_TRUE(table_.supports(type)) << traits(type).name;
    EXPECT_LE(table_.get(type).level, GetParam());
    EXPECT_EQ(table_.get(type).act_type, scalar_.get(type).act_type);
  }
  // The NEON levels' own row dots must be installed, not the scalar fallback.
  if (is_neon_level(GetParam())) {
    for (DType type : {DType::F32, DType::F16, DType::BF16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                       DType::Q8_0, DType::IQ4_NL, DType::MXFP4, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K,
                       DType::Q6_K, DType::IQ4_XS}) {
      EXPECT_EQ(table_.get(type).level, GetParam()) << traits(type).name;
    }
    EXPECT_NE(table_.f16_to_f32, scalar_.f16_to_f32) << "the NEON half conversions";
    EXPECT_NE(table_.f32_to_f16, scalar_.f32_to_f16);
    EXPECT_NE(table_.quantize_q8_0, scalar_.quantize_q8_0) << "the NEON activation quantizers";
    EXPECT_NE(table_.quantize_q8_k, scalar_.quantize_q8_k);
  }
}

TEST_P(LevelTest, VecDotMatchesScalar) {
  for (DType type : kWeightTypes) {
    const TypeKernels& k = table_.get(type);
    const TypeKernels& ref = scalar_.get(type);
    for (int64_t n : lengths_for(type)) {
      const Matrix w = random_rows(type, 5, n, static_cast<uint32_t>(n));
      const Matrix a = random_rows(k.act_type, 1, n, static_cast<uint32_t>(n + 1));
      for (int64_t r = 0; r < 5; ++r) {
        const uint8_t* wr = w.bytes.data() + r * w.row_bytes;
        const float got = k.vec_dot(n, wr, a.bytes.data());
        const float want = ref.vec_dot(n, wr, a.bytes.data());
        const double tol = 2e-5 * magnitude(w.values.data() + r * n, a.values.data(), n) + 1e-12;
        ASSERT_NEAR(got, want, tol) << traits(type).name << " at " << to_string(k.level) << " n=" << n;
      }
    }
  }
}

// Tiles of odd shapes, written token-major with a padded output stride.
// 16 rows or more with 4 columns or more take the repacked AVX-512 path.
TEST_P(LevelTest, GemmMatchesScalarVecDot) {
  for (DType type : kWeightTypes) {
    const TypeKernels& k = table_.get(type);
    const TypeKernels& ref = scalar_.get(type);
    for (int64_t n : traits(type).block_elements == 256 ? std::vector<int64_t>{512, 768}
                                                        : std::vector<int64_t>{96, 160}) {
    const int64_t rows = 37, cols = 9;
    const Matrix w = random_rows(type, rows, n, 5);
    const Matrix a = random_rows(k.act_type, cols, n, 6);
    for (int64_t nr : {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{16}, rows}) {
      for (int64_t nc : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{5}, cols}) {
        const size_t out_stride = static_cast<size_t>(nr) + 3;
        std::vector<float> out(out_stride * static_cast<size_t>(nc), -1.0f);
        k.gemm(n, w.bytes.data(), w.row_bytes, nr, a.bytes.data(), a.row_bytes, nc, out.data(), out_stride);
        for (int64_t c = 0; c < nc; ++c) {
          for (int64_t r = 0; r < nr; ++r) {
            const float want = ref.vec_dot(n, w.bytes.data() + r * w.row_bytes, a.bytes.data() + c * a.row_bytes);
            const double tol = 2e-5 * magnitude(w.values.data() + r * n, a.values.data() + c * n, n) + 1e-12;
            ASSERT_NEAR(out[c * out_stride + r], want, tol)
                << traits(type).name << " tile " << nr << "x" << nc << " at r=" << r << " c=" << c;
          }
          for (size_t pad = static_cast<size_t>(nr); pad < out_stride; ++pad) {
            ASSERT_EQ(out[c * out_stride + pad], -1.0f) << "gemm wrote past its rows";
          }
        }
      }
    }
    }
  }
}

// The multi-row decode kernels against the scalar vec_dot on the same
// activation row: odd row counts (the 4-, 2- and 1-row passes), lengths that
// leave a partial 4-block group, and a row stride larger than the row.
TEST_P(LevelTest, DecodeRowsMatchScalarVecDot) {
  int checked = 0;
  for (DType type : kWeightTypes) {
    const TypeKernels& k = table_.get(type);
    const TypeKernels& ref = scalar_.get(type);
    if (!k.decode.rows) continue;
    ASSERT_EQ(k.decode.prepare == nullptr, k.decode.prepared_bytes == nullptr) << traits(type).name;
    const int64_t be = traits(type).block_elements;
    for (int64_t n : {be, 2 * be, 3 * be, 4 * be, 5 * be, 7 * be, 28 * be, 65 * be}) {
      const int64_t rows = 23;  // 8 + 8 + 4 + 2 + 1: every pass width
      const Matrix w = random_rows(type, rows, n, static_cast<uint32_t>(n + 3));
      const Matrix a = random_rows(k.act_type, 1, n, static_cast<uint32_t>(n + 4));
      // Rows copied to a padded stride, as a row range of a wider tensor.
      const size_t stride = w.row_bytes + 6;
      std::vector<uint8_t> padded(stride * static_cast<size_t>(rows), 0xAB);
      for (int64_t r = 0; r < rows; ++r) {
        std::copy_n(w.bytes.data() + r * w.row_bytes, w.row_bytes, padded.data() + r * stride);
      }
      std::vector<uint8_t> prepared = a.bytes;
      if (k.decode.prepare) {
        prepared.assign(k.decode.prepared_bytes(n) + 1, 0x5A);
        k.decode.prepare(a.bytes.data(), prepared.data(), n);
        EXPECT_EQ(prepared.back(), 0x5A) << "prepare wrote past prepared_bytes";
      }
      for (int64_t nr : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{7}, int64_t{8}, rows}) {
        std::vector<float> out(static_cast<size_t>(nr) + 1, -1.0f);
        k.decode.rows(n, padded.data(), stride, nr, prepared.data(), out.data());
        for (int64_t r = 0; r < nr; ++r) {
          const float want = ref.vec_dot(n, w.bytes.data() + r * w.row_bytes, a.bytes.data());
          const double tol = 2e-5 * magnitude(w.values.data() + r * n, a.values.data(), n) + 1e-12;
          ASSERT_NEAR(out[static_cast<size_t>(r)], want, tol)
              << traits(type).name << " n=" << n << " rows=" << nr << " row " << r;
          ++checked;
        }
        EXPECT_EQ(out.back(), -1.0f) << "decode wrote past its rows";
      }
    }
  }
  // Every x86 level must provide them for the formats decode relies on.
  if (GetParam() == KernelLevel::Avx512) {
    for (DType type : {DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::Q4_K, DType::Q6_K, DType::MXFP4}) {
      EXPECT_NE(table_.get(type).decode.rows, nullptr) << traits(type).name;
    }
    EXPECT_GT(checked, 0);
  }
  if (GetParam() == KernelLevel::Avx2 || GetParam() == KernelLevel::AvxVnni) {
    for (DType type : {DType::Q4_0, DType::Q5_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::MXFP4}) {
      EXPECT_NE(table_.get(type).decode.rows, nullptr) << traits(type).name;
    }
    if (GetParam() == KernelLevel::AvxVnni) {
      EXPECT_NE(table_.get(DType::IQ4_NL).decode.rows, nullptr);
    }
    EXPECT_GT(checked, 0);
  }
  if (is_neon_level(GetParam())) {
    for (DType type : {DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::IQ4_NL, DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
      EXPECT_NE(table_.get(type).decode.rows, nullptr) << traits(type).name;
    }
    EXPECT_GT(checked, 0);
  }
}

// The few-token decode kernels (one continuous-batching step) give every
// token exactly, bit for bit, what the single-token kernel gives it alone:
// batched sequences must not drift from their solo runs.
TEST_P(LevelTest, DecodeRowsMultiEqualsRowsBitForBit) {
  int checked = 0;
  for (DType type : kWeightTypes) {
    const TypeKernels& k = table_.get(type);
    if (!k.decode.rows_multi) continue;
    ASSERT_NE(k.decode.rows, nullptr) << traits(type).name;
    const int64_t be = traits(type).block_elements;
    // 13 and 7 rows: every remainder of the kernels' 2-, 4- and 8-row passes.
    for (int64_t n : {be, 3 * be, 5 * be, 19 * be}) for (const int64_t rows : {int64_t{13}, int64_t{7}}) {
      const Matrix w = random_rows(type, rows, n, static_cast<uint32_t>(n + 11));
      const size_t stride = w.row_bytes + 10;
      std::vector<uint8_t> padded(stride * static_cast<size_t>(rows), 0xCD);
      for (int64_t r = 0; r < rows; ++r) {
        std::copy_n(w.bytes.data() + r * w.row_bytes, w.row_bytes, padded.data() + r * stride);
      }
      for (int64_t n_act : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{7}, int64_t{8}}) {
        const Matrix a = random_rows(k.act_type, n_act, n, static_cast<uint32_t>(n + 7 * n_act));
        const size_t act_bytes = a.bytes.size() / static_cast<size_t>(n_act);
        const size_t prep = k.decode.prepare ? k.decode.prepared_bytes(n) : act_bytes;
        const size_t act_stride = prep + 64;  // tokens apart by more than a row, as in the matmul scratch
        std::vector<uint8_t> acts(act_stride * static_cast<size_t>(n_act), 0x11);
        for (int64_t t = 0; t < n_act; ++t) {
          const uint8_t* src = a.bytes.data() + static_cast<size_t>(t) * act_bytes;
          uint8_t* dst = acts.data() + static_cast<size_t>(t) * act_stride;
          if (k.decode.prepare) {
            k.decode.prepare(src, dst, n);
          } else {
            std::copy_n(src, act_bytes, dst);
          }
        }
        const size_t out_stride = static_cast<size_t>(rows) + 3;
        std::vector<float> multi(out_stride * static_cast<size_t>(n_act), -7.0f);
        k.decode.rows_multi(n, padded.data(), stride, rows, acts.data(), act_stride, n_act, multi.data(), out_stride);
        for (int64_t t = 0; t < n_act; ++t) {
          std::vector<float> single(static_cast<size_t>(rows));
          k.decode.rows(n, padded.data(), stride, rows, acts.data() + static_cast<size_t>(t) * act_stride,
                        single.data());
          for (int64_t r = 0; r < rows; ++r) {
            const float got = multi[static_cast<size_t>(t) * out_stride + static_cast<size_t>(r)];
            ASSERT_EQ(std::memcmp(&got, &single[static_cast<size_t>(r)], sizeof(float)), 0)
                << traits(type).name << " n=" << n << " tokens=" << n_act << " token " << t << " row " << r << ": "
                << got << " vs " << single[static_cast<size_t>(r)];
            ++checked;
          }
          for (size_t pad = static_cast<size_t>(rows); pad < out_stride; ++pad) {
            ASSERT_EQ(multi[static_cast<size_t>(t) * out_stride + pad], -7.0f) << "rows_multi wrote past its rows";
          }
        }
      }
    }
  }
  if (GetParam() == KernelLevel::Avx512) {
    for (DType type : {DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::Q4_K, DType::Q6_K, DType::MXFP4}) {
      EXPECT_NE(table_.get(type).decode.rows_multi, nullptr) << traits(type).name;
    }
    EXPECT_GT(checked, 0);
  }
  if (is_neon_level(GetParam())) {
    for (DType type : {DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::IQ4_NL, DType::MXFP4, DType::Q2_K, DType::Q3_K,
                       DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS}) {
      EXPECT_NE(table_.get(type).decode.rows_multi, nullptr) << traits(type).name;
    }
    EXPECT_GT(checked, 0);
  }
}

// The two-step prefill tiles, where a level has them: activations prepared
// in two pieces of whole token groups, then tiles whose token ranges start
// inside the product and whose row counts are not multiples of 16, written
// into a padded output, against the scalar dot products.
TEST_P(LevelTest, PrefillTilesMatchScalarVecDot) {
  int covered = 0;
  for (DType type : kWeightTypes) {
    const TypeKernels& k = table_.get(type);
    if (!k.prefill.gemm) continue;
    ++covered;
    const TypeKernels& ref = scalar_.get(type);
    const int64_t n = traits(type).block_elements == 256 ? 512 : 96;
    const int64_t rows = 37, cols = 29;
    const Matrix w = random_rows(type, rows, n, 7);
    const Matrix a = random_rows(k.act_type, cols, n, 8);
    std::vector<uint8_t> prepared(k.prefill.prepared_bytes(n, cols), 0xAB);
    k.prefill.prepare(n, a.bytes.data(), a.row_bytes, 0, 2 * kPrefillColGroup, prepared.data());
    k.prefill.prepare(n, a.bytes.data(), a.row_bytes, 2 * kPrefillColGroup, cols - 2 * kPrefillColGroup,
                      prepared.data());
    std::vector<uint8_t> scratch(k.prefill.tile_bytes(n));
    struct Tile {
      int64_t r0, nr, c0, nc;
    };
    for (const Tile t : {Tile{0, rows, 0, cols}, Tile{3, 21, 8, 13}, Tile{16, 5, 24, 5}, Tile{0, 1, 16, 1}}) {
      const size_t out_stride = static_cast<size_t>(t.nr) + 3;
      std::vector<float> out(out_stride * static_cast<size_t>(t.nc), -1.0f);
      k.prefill.gemm(n, w.bytes.data() + t.r0 * w.row_bytes, w.row_bytes, t.nr, prepared.data(), t.c0, t.nc,
                     out.data(), out_stride, scratch.data());
      for (int64_t c = 0; c < t.nc; ++c) {
        for (int64_t r = 0; r < t.nr; ++r) {
          const int64_t wr = t.r0 + r, ac = t.c0 + c;
          const float want = ref.vec_dot(n, w.bytes.data() + wr * w.row_bytes, a.bytes.data() + ac * a.row_bytes);
          const double tol = 2e-5 * magnitude(w.values.data() + wr * n, a.values.data() + ac * n, n) + 1e-12;
          ASSERT_NEAR(out[static_cast<size_t>(c) * out_stride + static_cast<size_t>(r)], want, tol)
              << traits(type).name << " tile at row " << t.r0 << " token " << t.c0 << ": r=" << r << " c=" << c;
        }
        for (size_t pad = static_cast<size_t>(t.nr); pad < out_stride; ++pad) {
          ASSERT_EQ(out[static_cast<size_t>(c) * out_stride + pad], -1.0f) << "prefill tile wrote past its rows";
        }
      }
    }
  }
  if (GetParam() == KernelLevel::Avx512) {
    EXPECT_GE(covered, 4) << "the AVX-512 level has prefill tiles for Q4_0, Q8_0 and the K-quants";
  }
  // The ARM tiles: every format with a NEON row dot, at the dot-product
  // level (SDOT) and the matrix-multiply one (SMMLA).
  if (GetParam() == KernelLevel::NeonDotprod || GetParam() == KernelLevel::NeonI8mm) {
    for (DType type : {DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::IQ4_NL, DType::MXFP4, DType::Q2_K, DType::Q3_K,
                       DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS}) {
      EXPECT_NE(table_.get(type).prefill.gemm, nullptr) << traits(type).name;
    }
  }
}

TEST_P(LevelTest, ActivationQuantizersMatchTheReference) {
  std::mt19937 rng(9);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(1280);
  for (auto& v : x) v = dist(rng);
  // Exact rounding ties: with 127 as the block maximum d = 1, so k + 0.5
  // values must round away from zero (Q8_0) or to even (Q8_K: scale -1).
  for (int j = 0; j < 32; ++j) x[static_cast<size_t>(j)] = static_cast<float>(j) - 15.5f;
  x[0] = 127.0f;
  for (int j = 256; j < 512; ++j) x[static_cast<size_t>(j)] = static_cast<float>(j % 64) - 31.5f;
  x[300] = -127.0f;
  for (int j = 512; j < 768; ++j) x[static_cast<size_t>(j)] = 0.0f;  // an all-zero block
  x[900] = -50.0f;  // equal magnitudes: the first one sets the sign
  x[901] = 50.0f;
  x[1278] = 90.0f;   // the largest magnitude twice in a block's last vector:
  x[1279] = -90.0f;  // the first one sets the sign
  for (DType act : {DType::Q8_0, DType::Q8_K}) {
    std::vector<uint8_t> got(*row_bytes(act, 1280)), want(got.size());
    table_.quantize_activation(act, x.data(), got.data(), 1280);
    ASSERT_TRUE(quantize_row(act, x.data(), want.data(), 1280).ok());
    EXPECT_EQ(got, want) << traits(act).name;
  }
}

// Half-precision rows to floats: exact, against the scalar conversion, on
// every class of value (normal, subnormal, zero, infinity) and odd lengths.
TEST_P(LevelTest, HalfToFloatMatchesScalarConversion) {
  ASSERT_NE(table_.f16_to_f32, nullptr);
  std::vector<uint16_t> h;
  for (uint32_t v = 0; v < 0x10000u; v += 7) {
    if ((v & 0x7c00u) == 0x7c00u && (v & 0x3ffu) != 0) continue;  // NaN payloads: compared below by class
    h.push_back(static_cast<uint16_t>(v));
  }
  h.push_back(0x0001);  // smallest subnormal
  h.push_back(0x8000);  // -0
  h.push_back(0x7c00);  // +inf
  for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, static_cast<int64_t>(h.size())}) {
    std::vector<float> got(static_cast<size_t>(n) + 1, 123.0f);
    table_.f16_to_f32(h.data(), got.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float want = fp16_to_fp32(h[static_cast<size_t>(i)]);
      ASSERT_EQ(std::memcmp(&got[static_cast<size_t>(i)], &want, 4), 0) << "half 0x" << std::hex << h[static_cast<size_t>(i)];
    }
    EXPECT_EQ(got.back(), 123.0f) << "wrote past n";
  }
}

// Floats to half precision: the same bits as fp32_to_fp16 on every class of
// value: normal, subnormal results and their rounding ties, overflow to
// infinity, zeros, infinities, and NaNs with payloads (one quiet NaN, as the
// scalar function writes), at lengths around the 8-value steps.
TEST_P(LevelTest, FloatToHalfMatchesScalarConversion) {
  ASSERT_NE(table_.f32_to_f16, nullptr);
  std::vector<float> x;
  std::mt19937 rng(17);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 4000; ++i) {
    // Exponents around half precision's range: 2^-30 .. 2^20.
    const uint32_t exponent = 97 + bits(rng) % 50;
    x.push_back(std::bit_cast<float>((bits(rng) & 0x807fffffu) | exponent << 23));
  }
  for (float v : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, -70000.0f, 5.9604645e-8f, 2.9802322e-8f,
                  std::bit_cast<float>(0x33000001u), std::bit_cast<float>(0x38800000u), 1.0f + 0x1p-11f,
                  1.0f + 0x1p-11f + 0x1p-23f, 1.0f + 3 * 0x1p-11f}) {
    x.push_back(v);
  }
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::bit_cast<float>(0x7fc12345u));  // quiet NaN with a payload
  x.push_back(std::bit_cast<float>(0xff812345u));  // negative signalling NaN
  for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{8}, int64_t{9}, static_cast<int64_t>(x.size())}) {
    // Each length starts where a NaN sits in an 8-value step once.
    const float* src = x.data() + (x.size() - static_cast<size_t>(n));
    std::vector<uint16_t> got(static_cast<size_t>(n) + 1, 0xABCD);
    table_.f32_to_f16(src, got.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[static_cast<size_t>(i)], fp32_to_fp16(src[i]))
          << "float 0x" << std::hex << std::bit_cast<uint32_t>(src[i]);
    }
    EXPECT_EQ(got.back(), 0xABCD) << "wrote past n";
  }
}

// The table's quantizers (SIMD scale searches where present) must write the
// reference quantizer's bytes exactly, on varied data: Gaussian rows of
// several scales, all-positive rows (min clamps to 0), outliers, constants.
TEST_P(LevelTest, QuantizersWriteTheReferenceBytes) {
  std::mt19937 rng(21);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  const int64_t n = 256 * 24;
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t block = i / 256;
    float v = gauss(rng) * (0.001f + 0.01f * static_cast<float>(block % 4));
    if (block % 6 == 1) v = std::fabs(v) + 0.5f;           // all positive
    if (block % 6 == 2 && i % 97 == 0) v *= 50.0f;         // outliers
    if (block % 6 == 3) v = 0.25f;                         // constant
    if (block % 6 == 4 && i % 256 < 128) v = 0.0f;         // half zeros
    x[static_cast<size_t>(i)] = v;
  }
  for (DType type : kWeightTypes) {
    const TypeKernels& k = table_.get(type);
    ASSERT_NE(k.quantize, nullptr) << traits(type).name;
    std::vector<uint8_t> got(*row_bytes(type, n)), want(got.size());
    k.quantize(x.data(), got.data(), n);
    ASSERT_TRUE(quantize_row(type, x.data(), want.data(), n).ok());
    size_t first = got.size();
    for (size_t i = 0; i < got.size() && first == got.size(); ++i) {
      if (got[i] != want[i]) first = i;
    }
    EXPECT_EQ(first, got.size()) << traits(type).name << " differs at byte " << first;
  }
}

// MXFP4 blocks with exponents far apart (a wrong block-to-exponent pairing
// in the kernels shows at once) and the subnormal scales of exponents 0 and
// 1, random codes, at the gpt-oss width (22 groups and a 2-block tail) and
// short rows: decode.rows (and rows_multi, bit for bit) against the scalar
// vec_dot on the same bytes.
TEST_P(LevelTest, DecodeRowsMxfp4WideExponents) {
  const TypeKernels& k = table_.get(DType::MXFP4);
  const TypeKernels& ref = scalar_.get(DType::MXFP4);
  if (!k.decode.rows) GTEST_SKIP() << "no MXFP4 decode kernel at " << to_string(GetParam());
  std::mt19937 rng(77);
  for (int64_t n : {int64_t{32}, int64_t{96}, int64_t{128}, int64_t{2880}}) {
    const int64_t rows = 11, nb = n / 32;
    const size_t rb = *row_bytes(DType::MXFP4, n);
    std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
    std::vector<float> wv(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      auto* b = reinterpret_cast<BlockMXFP4*>(w.data() + static_cast<size_t>(r) * rb);
      for (int64_t i = 0; i < nb; ++i) {
        b[i].e = rng() % 8 == 0 ? static_cast<uint8_t>(rng() % 2) : static_cast<uint8_t>(100 + rng() % 41);
        for (auto& q : b[i].qs) q = static_cast<uint8_t>(rng());
      }
      ASSERT_TRUE(dequantize_row(DType::MXFP4, b, wv.data() + r * n, n).ok());
    }
    const Matrix a = random_rows(k.act_type, 1, n, static_cast<uint32_t>(n));
    std::vector<uint8_t> prepared = a.bytes;
    if (k.decode.prepare) {
      prepared.assign(k.decode.prepared_bytes(n), 0);
      k.decode.prepare(a.bytes.data(), prepared.data(), n);
    }
    std::vector<float> out(static_cast<size_t>(rows));
    k.decode.rows(n, w.data(), rb, rows, prepared.data(), out.data());
    for (int64_t r = 0; r < rows; ++r) {
      const float want = ref.vec_dot(n, w.data() + static_cast<size_t>(r) * rb, a.bytes.data());
      const double tol = 2e-5 * magnitude(wv.data() + r * n, a.values.data(), n) + 1e-30;
      ASSERT_NEAR(out[static_cast<size_t>(r)], want, tol) << "n=" << n << " row " << r;
    }
    if (k.decode.rows_multi) {
      std::vector<float> multi(static_cast<size_t>(rows));
      k.decode.rows_multi(n, w.data(), rb, rows, prepared.data(), prepared.size(), 1, multi.data(),
                          static_cast<size_t>(rows));
      EXPECT_EQ(std::memcmp(multi.data(), out.data(), out.size() * sizeof(float)), 0) << "n=" << n;
    }
  }
}

// The SIMD levels of the architecture the program is built for (aarch64: the
// cross build, label `cross`).
#if defined(__aarch64__)
#define HEARTH_SIMD_LEVELS KernelLevel::Neon, KernelLevel::NeonDotprod, KernelLevel::NeonI8mm
#else
#define HEARTH_SIMD_LEVELS KernelLevel::Avx2, KernelLevel::AvxVnni, KernelLevel::Avx512
#endif

INSTANTIATE_TEST_SUITE_P(AllLevels, LevelTest, ::testing::Values(HEARTH_SIMD_LEVELS),
                         [](const auto& p) {
                           std::string s(to_string(p.param));
                           for (auto& ch : s) ch = ch == '-' ? '_' : ch;
                           return s;
                         });

// Every grouped row and group of `il` (interleave_rows of w) read back to
// the plain bytes, the last rows % 16 rows plain as they were, and the
// in-place conversion equal to `il`.
void expect_round_trips(DType type, const Matrix& w, const std::vector<uint8_t>& il, int64_t rows, int64_t n) {
  const size_t group_bytes = 16 * w.row_bytes;
  const int64_t grouped = grouped_rows(rows);
  for (int64_t g = 0; g < grouped / 16; ++g) {
    const uint8_t* group = il.data() + static_cast<size_t>(g) * group_bytes;
    for (int64_t r = 0; r < 16; ++r) {
      std::vector<uint8_t> back(w.row_bytes);
      deinterleave_row(type, group, r, n, back.data());
      ASSERT_EQ(std::memcmp(back.data(), w.bytes.data() + (16 * g + r) * w.row_bytes, w.row_bytes), 0)
          << traits(type).name << " row " << 16 * g + r;
    }
    std::vector<uint8_t> rows_back(group_bytes);
    deinterleave_group(type, group, n, rows_back.data());
    EXPECT_EQ(std::memcmp(rows_back.data(), w.bytes.data() + static_cast<size_t>(g) * group_bytes, group_bytes), 0)
        << traits(type).name << " group " << g;
  }
  const size_t plain_at = static_cast<size_t>(grouped) * w.row_bytes;
  EXPECT_EQ(std::memcmp(il.data() + plain_at, w.bytes.data() + plain_at, w.bytes.size() - plain_at), 0)
      << traits(type).name << ": the last " << rows - grouped << " rows are plain";
  std::vector<uint8_t> in_place = w.bytes;
  interleave_rows_in_place(type, in_place.data(), rows, n);
  EXPECT_EQ(in_place, il) << traits(type).name;
}

// The 16-row interleaved layout as interleave.h documents it, byte by byte,
// and every row read back from it.
TEST(Interleave, Q4_0LayoutIsTheDocumentedOneAndRoundTrips) {
  const int64_t rows = 32, n = 96;
  const Matrix w = random_rows(DType::Q4_0, rows, n, 41);
  ASSERT_TRUE(can_interleave(DType::Q4_0, rows, n));
  EXPECT_TRUE(can_interleave(DType::Q4_0, 24, n));  // one group, eight plain rows
  EXPECT_FALSE(can_interleave(DType::Q4_0, 8, n));
  EXPECT_FALSE(can_interleave(DType::Q4_0, rows, 48));
  EXPECT_FALSE(can_interleave(DType::Q5_K, rows, 256));
  std::vector<uint8_t> il(w.bytes.size());
  interleave_rows(DType::Q4_0, w.bytes.data(), il.data(), rows, n);
  const size_t group_bytes = w.row_bytes * 16;
  for (int64_t g = 0; g < rows / 16; ++g) {
    for (int64_t b = 0; b < n / 32; ++b) {
      const uint8_t* blk = il.data() + static_cast<size_t>(g) * group_bytes + static_cast<size_t>(b) * 288;
      for (int64_t r = 0; r < 16; ++r) {
        const auto* plain = reinterpret_cast<const BlockQ4_0*>(w.bytes.data() + (16 * g + r) * w.row_bytes) + b;
        ASSERT_EQ(std::memcmp(blk + 2 * r, &plain->d, 2), 0) << "scale of row " << r << " block " << b;
        for (int j = 0; j < 4; ++j) {
          ASSERT_EQ(std::memcmp(blk + 32 + 64 * j + 4 * r, plain->qs + 4 * j, 4), 0)
              << "codes " << 4 * j << ".." << 4 * j + 3 << " of row " << r << " block " << b;
        }
      }
    }
  }
  expect_round_trips(DType::Q4_0, w, il, rows, n);
}

// Q5_0: the scales, then mask j bit 4r + i = row r's fifth bit of value
// 4j + i, then Q4_0's chunks; the last rows % 16 rows stay plain.
TEST(Interleave, Q5_0LayoutIsTheDocumentedOneAndKeepsPlainLastRows) {
  const int64_t rows = 21, n = 64;
  const Matrix w = random_rows(DType::Q5_0, rows, n, 47);
  ASSERT_TRUE(can_interleave(DType::Q5_0, rows, n));
  std::vector<uint8_t> il(w.bytes.size());
  interleave_rows(DType::Q5_0, w.bytes.data(), il.data(), rows, n);
  for (int64_t b = 0; b < n / 32; ++b) {
    const uint8_t* blk = il.data() + static_cast<size_t>(b) * 352;
    for (int64_t r = 0; r < 16; ++r) {
      const auto* plain = reinterpret_cast<const BlockQ5_0*>(w.bytes.data() + r * w.row_bytes) + b;
      ASSERT_EQ(std::memcmp(blk + 2 * r, &plain->d, 2), 0) << "scale of row " << r << " block " << b;
      const uint32_t qh = plain->qh[0] | plain->qh[1] << 8 | plain->qh[2] << 16 | uint32_t{plain->qh[3]} << 24;
      for (int j = 0; j < 8; ++j) {
        uint64_t mask;
        std::memcpy(&mask, blk + 32 + 8 * j, 8);
        for (int i = 0; i < 4; ++i) {
          ASSERT_EQ((mask >> (4 * r + i)) & 1, (qh >> (4 * j + i)) & 1) << "row " << r << " value " << 4 * j + i;
        }
      }
      for (int j = 0; j < 4; ++j) {
        ASSERT_EQ(std::memcmp(blk + 96 + 64 * j + 4 * r, plain->qs + 4 * j, 4), 0) << "row " << r << " chunk " << j;
      }
    }
  }
  expect_round_trips(DType::Q5_0, w, il, rows, n);
}

// Q4_K: d, dmin, the scale and min words as interleave.h documents them
// (the six-bit values read from the 12 packed bytes as GGUF lays them out),
// the 32 code chunks, and every row read back exactly.
TEST(Interleave, Q4_KLayoutIsTheDocumentedOneAndRoundTrips) {
  const int64_t rows = 19, n = 512;
  const Matrix w = random_rows(DType::Q4_K, rows, n, 53);
  ASSERT_TRUE(can_interleave(DType::Q4_K, rows, n));
  EXPECT_FALSE(can_interleave(DType::Q4_K, rows, 384));
  std::vector<uint8_t> il(w.bytes.size());
  interleave_rows(DType::Q4_K, w.bytes.data(), il.data(), rows, n);
  auto word = [](const uint8_t* p) { return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24; };
  for (int64_t b = 0; b < n / 256; ++b) {
    const uint8_t* blk = il.data() + static_cast<size_t>(b) * 2304;
    for (int64_t r = 0; r < 16; ++r) {
      const auto* x = reinterpret_cast<const BlockQ4_K*>(w.bytes.data() + r * w.row_bytes) + b;
      ASSERT_EQ(std::memcmp(blk + 2 * r, &x->d, 2), 0) << "d of row " << r;
      ASSERT_EQ(std::memcmp(blk + 32 + 2 * r, &x->dmin, 2), 0) << "dmin of row " << r;
      const uint8_t* q = x->scales;
      for (int j = 0; j < 8; ++j) {
        const int sc = j < 4 ? q[j] & 63 : (q[j + 4] & 0x0F) | (q[j - 4] >> 6) << 4;
        const int m = j < 4 ? q[j + 4] & 63 : (q[j + 4] >> 4) | (q[j] >> 6) << 4;
        ASSERT_EQ(static_cast<int>(word(blk + 64 + 4 * r) >> (4 * j) & 15), sc & 15) << "row " << r << " scale " << j;
        ASSERT_EQ(static_cast<int>(word(blk + 128 + 4 * r) >> (4 * j) & 15), m & 15) << "row " << r << " min " << j;
        ASSERT_EQ(static_cast<int>(word(blk + 192 + 4 * r) >> (2 * j) & 3), sc >> 4) << "row " << r << " scale " << j;
        ASSERT_EQ(static_cast<int>(word(blk + 192 + 4 * r) >> (16 + 2 * j) & 3), m >> 4) << "row " << r << " min " << j;
      }
      for (int c = 0; c < 32; ++c) {
        ASSERT_EQ(std::memcmp(blk + 256 + 64 * c + 4 * r, x->qs + 4 * c, 4), 0) << "row " << r << " chunk " << c;
      }
    }
  }
  expect_round_trips(DType::Q4_K, w, il, rows, n);
}

// Q6_K: d, the int8 scales, ql and qh as word arrays as interleave.h
// documents them, the code of every value read from the chunks the header
// names, and every row read back exactly.
TEST(Interleave, Q6_KLayoutIsTheDocumentedOneAndRoundTrips) {
  const int64_t rows = 35, n = 512;
  const Matrix w = random_rows(DType::Q6_K, rows, n, 59);
  ASSERT_TRUE(can_interleave(DType::Q6_K, rows, n));
  EXPECT_FALSE(can_interleave(DType::Q6_K, rows, 384));
  std::vector<uint8_t> il(w.bytes.size());
  interleave_rows(DType::Q6_K, w.bytes.data(), il.data(), rows, n);
  const size_t group_bytes = w.row_bytes * 16;
  for (int64_t g = 0; g < rows / 16; ++g) {
    for (int64_t b = 0; b < n / 256; ++b) {
      const uint8_t* blk = il.data() + static_cast<size_t>(g) * group_bytes + static_cast<size_t>(b) * 3360;
      for (int64_t r = 0; r < 16; ++r) {
        const auto* x = reinterpret_cast<const BlockQ6_K*>(w.bytes.data() + (16 * g + r) * w.row_bytes) + b;
        ASSERT_EQ(std::memcmp(blk + 2 * r, &x->d, 2), 0) << "d of row " << r;
        for (int c = 0; c < 4; ++c) {
          ASSERT_EQ(std::memcmp(blk + 32 + 64 * c + 4 * r, x->scales + 4 * c, 4), 0) << "row " << r << " scales " << c;
        }
        // Value 128h + 32g + 4i + e from the chunks, against the code the
        // GGUF block gives it (low/high nibble of ql, two bits of qh).
        for (int v = 0; v < 256; ++v) {
          const int h = v / 128, q = v % 128 / 32, i = v % 32 / 4, e = v % 4;
          const uint8_t low = blk[288 + 64 * (16 * h + 8 * (q % 2) + i) + 4 * r + e];
          const uint8_t high = blk[2336 + 64 * (8 * h + i) + 4 * r + e];
          const int got = (q < 2 ? low & 15 : low >> 4) | ((high >> (2 * q)) & 3) << 4;
          const int l = v % 32;
          const uint8_t ql = x->ql[64 * h + l + (q % 2 ? 32 : 0)];
          const int want = (q < 2 ? ql & 15 : ql >> 4) | ((x->qh[32 * h + l] >> (2 * q)) & 3) << 4;
          ASSERT_EQ(got, want) << "row " << r << " value " << v;
        }
      }
    }
  }
  expect_round_trips(DType::Q6_K, w, il, rows, n);
}

TEST(Interleave, Q8_0LayoutIsTheDocumentedOneAndRoundTrips) {
  const int64_t rows = 16, n = 64;
  const Matrix w = random_rows(DType::Q8_0, rows, n, 43);
  ASSERT_TRUE(can_interleave(DType::Q8_0, rows, n));
  std::vector<uint8_t> il(w.bytes.size());
  interleave_rows(DType::Q8_0, w.bytes.data(), il.data(), rows, n);
  for (int64_t b = 0; b < n / 32; ++b) {
    const uint8_t* blk = il.data() + static_cast<size_t>(b) * 544;
    for (int64_t r = 0; r < 16; ++r) {
      const auto* plain = reinterpret_cast<const BlockQ8_0*>(w.bytes.data() + r * w.row_bytes) + b;
      ASSERT_EQ(std::memcmp(blk + 2 * r, &plain->d, 2), 0) << "scale of row " << r << " block " << b;
      for (int j = 0; j < 8; ++j) {
        ASSERT_EQ(std::memcmp(blk + 32 + 64 * j + 4 * r, plain->qs + 4 * j, 4), 0) << "row " << r << " word " << j;
      }
    }
  }
  expect_round_trips(DType::Q8_0, w, il, rows, n);
}

// The interleaved decode kernels against the scalar vec_dot on the plain
// rows, and every token of a multi-token call bit for bit against a call
// with that token alone (chunks of eight tokens and their remainders).
TEST_P(LevelTest, InterleavedDecodeMatchesScalarAndIsBitIdenticalPerToken) {
  int checked = 0;
  for (DType type : kWeightTypes) {
    const DecodeKernels& k = table_.get(type).interleaved.decode;
    if (!k.rows) continue;
    ASSERT_TRUE(k.rows_multi && k.prepare && k.prepared_bytes) << traits(type).name;
    const TypeKernels& ref = scalar_.get(type);
    const int64_t be = traits(type).block_elements;
    for (int64_t n : {be, 3 * be, (be == kQK ? 65 : 9) * be}) {
      // Three groups and five plain last rows (interleave.h).
      const int64_t rows = 53;
      const Matrix w = random_rows(type, rows, n, static_cast<uint32_t>(n + 5));
      std::vector<uint8_t> il(w.bytes.size());
      interleave_rows(type, w.bytes.data(), il.data(), rows, n);
      for (int64_t n_act : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{8}, int64_t{11}}) {
        const Matrix a = random_rows(table_.get(type).act_type, n_act, n, static_cast<uint32_t>(n + 9 * n_act));
        const size_t act_bytes = a.bytes.size() / static_cast<size_t>(n_act);
        const size_t act_stride = k.prepared_bytes(n) + 24;
        std::vector<uint8_t> acts(act_stride * static_cast<size_t>(n_act), 0x33);
        for (int64_t t = 0; t < n_act; ++t) {
          k.prepare(a.bytes.data() + static_cast<size_t>(t) * act_bytes, acts.data() + static_cast<size_t>(t) * act_stride, n);
        }
        const size_t out_stride = static_cast<size_t>(rows) + 5;
        std::vector<float> multi(out_stride * static_cast<size_t>(n_act), -7.0f);
        k.rows_multi(n, il.data(), w.row_bytes, rows, acts.data(), act_stride, n_act, multi.data(), out_stride);
        for (int64_t t = 0; t < n_act; ++t) {
          std::vector<float> single(static_cast<size_t>(rows) + 1, -1.0f);
          k.rows(n, il.data(), w.row_bytes, rows, acts.data() + static_cast<size_t>(t) * act_stride, single.data());
          EXPECT_EQ(single.back(), -1.0f) << "rows wrote past its rows";
          for (int64_t r = 0; r < rows; ++r) {
            const uint8_t* act = a.bytes.data() + static_cast<size_t>(t) * act_bytes;
            const float want = ref.vec_dot(n, w.bytes.data() + r * w.row_bytes, act);
            const double tol = 2e-5 * magnitude(w.values.data() + r * n, a.values.data() + t * n, n) + 1e-12;
            ASSERT_NEAR(single[static_cast<size_t>(r)], want, tol) << traits(type).name << " n=" << n << " row " << r;
            const float got = multi[static_cast<size_t>(t) * out_stride + static_cast<size_t>(r)];
            ASSERT_EQ(std::memcmp(&got, &single[static_cast<size_t>(r)], sizeof(float)), 0)
                << traits(type).name << " n=" << n << " tokens=" << n_act << " token " << t << " row " << r;
            ++checked;
          }
          for (size_t pad = static_cast<size_t>(rows); pad < out_stride; ++pad) {
            ASSERT_EQ(multi[static_cast<size_t>(t) * out_stride + pad], -7.0f) << "rows_multi wrote past its rows";
          }
        }
      }
    }
  }
  if (GetParam() == KernelLevel::Avx2 || GetParam() == KernelLevel::AvxVnni || GetParam() == KernelLevel::Avx512) {
    EXPECT_NE(table_.get(DType::Q4_0).interleaved.decode.rows, nullptr);
    EXPECT_NE(table_.get(DType::Q5_0).interleaved.decode.rows, nullptr);
    EXPECT_NE(table_.get(DType::Q8_0).interleaved.decode.rows, nullptr);
    EXPECT_NE(table_.get(DType::Q4_K).interleaved.decode.rows, nullptr);
    EXPECT_NE(table_.get(DType::Q6_K).interleaved.decode.rows, nullptr);
    EXPECT_GT(checked, 0);
  }
}

// The prefill tiles on interleaved groups give the plain layout's tiles bit
// for bit (same packed words, scales and corrections), for whole and partial
// row ranges of groups and token ranges.
TEST_P(LevelTest, InterleavedPrefillEqualsPlainPrefillBitForBit) {
  int checked = 0;
  for (DType type : kWeightTypes) {
    const TypeKernels& k = table_.get(type);
    const PrefillKernels& il = k.interleaved.prefill;
    if (!il.gemm) continue;
    ASSERT_NE(k.prefill.gemm, nullptr) << traits(type).name;
    // Four groups and five plain last rows; five blocks of 32 or two of 256.
    const int64_t n = traits(type).block_elements == kQK ? 160 : 512, rows = 69, cols = 29;
    const Matrix w = random_rows(type, rows, n, 17);
    std::vector<uint8_t> grouped(w.bytes.size());
    interleave_rows(type, w.bytes.data(), grouped.data(), rows, n);
    const Matrix a = random_rows(k.act_type, cols, n, 18);
    std::vector<uint8_t> prepared(il.prepared_bytes(n, cols));
    il.prepare(n, a.bytes.data(), a.row_bytes, 0, cols, prepared.data());
    std::vector<uint8_t> scratch(std::max(il.tile_bytes(n), k.prefill.tile_bytes(n)));
    for (const int64_t r0 : {int64_t{0}, int64_t{16}}) {
      for (const int64_t nr : {int64_t{16}, int64_t{48}, rows - r0}) {
        for (const int64_t c0 : {int64_t{0}, int64_t{8}}) {
        const int64_t nc = cols - c0;
        std::vector<float> plain(static_cast<size_t>(nr * nc)), got(plain.size(), -1.0f);
        k.prefill.gemm(n, w.bytes.data() + r0 * w.row_bytes, w.row_bytes, nr, prepared.data(), c0, nc, plain.data(),
                       static_cast<size_t>(nr), scratch.data());
        il.gemm(n, grouped.data() + r0 * w.row_bytes, w.row_bytes, nr, prepared.data(), c0, nc, got.data(),
                static_cast<size_t>(nr), scratch.data());
        ASSERT_EQ(std::memcmp(plain.data(), got.data(), plain.size() * sizeof(float)), 0)
            << traits(type).name << " rows " << r0 << "+" << nr << " tokens " << c0 << "+" << nc;
        ++checked;
        }
      }
    }
  }
  if (GetParam() == KernelLevel::Avx512) {
    EXPECT_NE(table_.get(DType::Q4_K).interleaved.prefill.gemm, nullptr);
    EXPECT_NE(table_.get(DType::Q6_K).interleaved.prefill.gemm, nullptr);
    EXPECT_GT(checked, 0);
  }
}

TEST(CpuFeatures, LevelsAreOrderedAndIncludeScalar) {
  const auto levels = supported_levels(detect_cpu_features());
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), KernelLevel::Scalar);
  for (size_t i = 1; i < levels.size(); ++i) EXPECT_LT(levels[i - 1], levels[i]);
  EXPECT_EQ(best_level(detect_cpu_features()), levels.back());
  // No features: only the scalar kernels, whatever the cap.
  EXPECT_EQ(select_kernels(CpuFeatures{}, KernelLevel::Avx512).level, KernelLevel::Scalar);
#if defined(__aarch64__)
  // Advanced SIMD is part of every aarch64 CPU.
  EXPECT_TRUE(detect_cpu_features().neon);
  EXPECT_GE(best_level(detect_cpu_features()), KernelLevel::Neon);
#endif
}

// Level names as --cpu-kernels spells them, each level below the x86 ones
// for the ARM levels so that the default cap (Avx512) keeps them.
TEST(CpuFeatures, LevelNamesAndOrder) {
  EXPECT_EQ(to_string(KernelLevel::Neon), "neon");
  EXPECT_EQ(to_string(KernelLevel::NeonDotprod), "neon-dotprod");
  EXPECT_EQ(to_string(KernelLevel::NeonI8mm), "neon-i8mm");
  EXPECT_LT(KernelLevel::NeonDotprod, KernelLevel::NeonI8mm);
  EXPECT_LT(KernelLevel::NeonI8mm, KernelLevel::Avx2);
  CpuFeatures arm;
  arm.neon = true;
  arm.dotprod = true;
  EXPECT_EQ(supported_levels(arm),
            (std::vector<KernelLevel>{KernelLevel::Scalar, KernelLevel::Neon, KernelLevel::NeonDotprod}));
  arm.i8mm = true;
  EXPECT_EQ(supported_levels(arm), (std::vector<KernelLevel>{KernelLevel::Scalar, KernelLevel::Neon,
                                                             KernelLevel::NeonDotprod, KernelLevel::NeonI8mm}));
  // SMMLA without SDOT is not a level (every I8MM CPU has the dot product).
  arm.dotprod = false;
  EXPECT_EQ(supported_levels(arm), (std::vector<KernelLevel>{KernelLevel::Scalar, KernelLevel::Neon}));
}

}  // namespace
}  // namespace hearth::quant
