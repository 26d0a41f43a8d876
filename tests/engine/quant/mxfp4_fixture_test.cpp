// MXFP4 against the reference engine's own file: its MXFP4_MOE quantization
// of the tiny gpt-oss model. Hearth's quantizer, on the same F32 tensors,
// must write the same bytes; the reference's blocks, dequantized here, must
// be within MXFP4's error of the F32 values; and the dot product kernels of
// every level must agree with a plain float dot product over those blocks.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/quant/kernels.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace hearth::quant {
namespace {

std::string model_path(const char* name) { return std::string(HEARTH_TEST_DATA_DIR) + "/models/" + name; }

struct Files {
  gguf::GgufFile f32;
  gguf::GgufFile mxfp4;
};

Files open_files() {
  auto f32 = gguf::GgufFile::open(model_path("tiny-gpt-oss-f32.gguf"));
  auto q = gguf::GgufFile::open(model_path("tiny-gpt-oss-mxfp4_moe.gguf"));
  EXPECT_TRUE(f32.ok()) << (f32.ok() ? "" : f32.error().message);
  EXPECT_TRUE(q.ok()) << (q.ok() ? "" : q.error().message);
  return Files{std::move(f32).value(), std::move(q).value()};
}

TEST(Mxfp4Fixture, TheFileCarriesExpertTensorsInMxfp4) {
  const Files f = open_files();
  int experts = 0;
  for (const auto& t : f.mxfp4.tensors()) {
    if (t.type != DType::MXFP4) continue;
    ++experts;
    EXPECT_NE(t.name.find("_exps"), std::string::npos) << t.name;
    EXPECT_EQ(t.bytes, static_cast<uint64_t>(t.elements() / 32 * 17)) << t.name;
  }
  EXPECT_GT(experts, 0);
}

TEST(Mxfp4Fixture, QuantizerWritesTheReferencesBytes) {
  const Files f = open_files();
  int compared = 0;
  for (const auto& t : f.mxfp4.tensors()) {
    if (t.type != DType::MXFP4) continue;
    const gguf::TensorInfo* src = f.f32.find_tensor(t.name);
    ASSERT_NE(src, nullptr) << t.name;
    ASSERT_EQ(src->type, DType::F32) << t.name;
    const auto in = f.f32.tensor_data(*src);
    const auto want = f.mxfp4.tensor_data(t);
    std::vector<uint8_t> got(want.size());
    const size_t rb = *row_bytes(DType::MXFP4, t.row_length());
    for (int64_t r = 0; r < t.rows(); ++r) {
      const auto* x = reinterpret_cast<const float*>(in.data()) + r * t.row_length();
      ASSERT_TRUE(quantize_row(DType::MXFP4, x, got.data() + r * rb, t.row_length()).ok());
    }
    size_t first_diff = got.size();
    for (size_t i = 0; i < got.size() && first_diff == got.size(); ++i) {
      if (got[i] != want[i]) first_diff = i;
    }
    EXPECT_EQ(first_diff, got.size()) << t.name << ": first differing byte " << first_diff;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

TEST(Mxfp4Fixture, DequantizedBlocksAreWithinMxfp4ErrorOfTheF32Values) {
  const Files f = open_files();
  for (const auto& t : f.mxfp4.tensors()) {
    if (t.type != DType::MXFP4) continue;
    const gguf::TensorInfo* src = f.f32.find_tensor(t.name);
    ASSERT_NE(src, nullptr) << t.name;
    const auto* x = reinterpret_cast<const float*>(f.f32.tensor_data(*src).data());
    const auto q = f.mxfp4.tensor_data(t);
    std::vector<float> y(static_cast<size_t>(t.elements()));
    ASSERT_TRUE(dequantize_row(DType::MXFP4, q.data(), y.data(), t.elements()).ok());
    double err = 0, ref = 0, worst_block = 0;
    for (int64_t b = 0; b < t.elements() / 32; ++b) {
      double amax = 0, block_err = 0;
      for (int64_t j = b * 32; j < b * 32 + 32; ++j) {
        const double d = static_cast<double>(y[static_cast<size_t>(j)]) - x[j];
        err += d * d;
        ref += static_cast<double>(x[j]) * x[j];
        amax = std::max(amax, std::fabs(static_cast<double>(x[j])));
        block_err = std::max(block_err, std::fabs(d));
      }
      // The scale is 2^(floor(log2 amax) - 2) (before the table's doubling):
      // E2M1's widest step, 2 units at the top of the range, bounds the
      // rounding error at one unit, amax / 4 at most; amax itself may be
      // clipped to 6 units, which is within amax / 4 as well.
      if (amax > 0) worst_block = std::max(worst_block, block_err / amax);
    }
    EXPECT_LE(worst_block, 0.25 + 1e-6) << t.name;
    EXPECT_LT(std::sqrt(err / ref), 0.15) << t.name;  // 4-bit floating point on Gaussian-like data
    EXPECT_GT(err, 0.0) << t.name;
  }
}

TEST(Mxfp4Fixture, EveryKernelLevelMatchesAFloatDotProduct) {
  const Files f = open_files();
  const gguf::TensorInfo* t = nullptr;
  for (const auto& ti : f.mxfp4.tensors()) {
    if (ti.type == DType::MXFP4) t = &ti;
  }
  ASSERT_NE(t, nullptr);
  const int64_t n = t->row_length();
  const size_t rb = *row_bytes(DType::MXFP4, n);
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(n)), w(static_cast<size_t>(n));
  for (auto& v : a) v = dist(rng);
  std::vector<uint8_t> act(*row_bytes(DType::Q8_0, n));
  ASSERT_TRUE(quantize_row(DType::Q8_0, a.data(), act.data(), n).ok());
  std::vector<float> aq(static_cast<size_t>(n));
  ASSERT_TRUE(dequantize_row(DType::Q8_0, act.data(), aq.data(), n).ok());
  const auto* rows = f.mxfp4.tensor_data(*t).data();
  for (KernelLevel level : supported_levels(detect_cpu_features())) {
    const KernelTable kt = select_kernels(detect_cpu_features(), level);
    ASSERT_TRUE(kt.supports(DType::MXFP4)) << to_string(level);
    const TypeKernels& k = kt.get(DType::MXFP4);
    EXPECT_EQ(k.act_type, DType::Q8_0);
    for (int64_t r = 0; r < std::min<int64_t>(t->rows(), 64); ++r) {
      ASSERT_TRUE(dequantize_row(DType::MXFP4, rows + r * rb, w.data(), n).ok());
      double want = 0, mag = 0;
      for (int64_t i = 0; i < n; ++i) {
        want += static_cast<double>(w[static_cast<size_t>(i)]) * aq[static_cast<size_t>(i)];
        mag += std::fabs(static_cast<double>(w[static_cast<size_t>(i)]) * aq[static_cast<size_t>(i)]);
      }
      const float got = k.vec_dot(n, rows + r * rb, act.data());
      ASSERT_NEAR(got, want, 1e-5 * mag + 1e-7) << to_string(level) << " row " << r;
    }
  }
}

}  // namespace
}  // namespace hearth::quant
