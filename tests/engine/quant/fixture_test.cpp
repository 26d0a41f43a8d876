// Hearth's quantizers against the reference engine's quantized fixture
// files: same bytes for Q8_0 and Q4_0, same error for the K-quants.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/quant/kernels.h>
#include <hearth/engine/quant/reference.h>

#include <random>

#include <cmath>
#include <string>
#include <vector>

namespace hearth::quant {
namespace {

std::string model_path(const char* name) { return std::string(HEARTH_TEST_DATA_DIR) + "/models/" + name; }

struct Pair {
  gguf::GgufFile f32;
  gguf::GgufFile quant;
};

Pair open_pair(const char* quant_name) {
  auto f32 = gguf::GgufFile::open(model_path("tiny-llama-f32.gguf"));
  auto q = gguf::GgufFile::open(model_path(quant_name));
  EXPECT_TRUE(f32.ok()) << (f32.ok() ? "" : f32.error().message);
  EXPECT_TRUE(q.ok()) << (q.ok() ? "" : q.error().message);
  return Pair{std::move(f32).value(), std::move(q).value()};
}

// Quantizes every F32 tensor that the fixture stores as `type` and compares bytes.
void expect_byte_identical(const char* quant_name, DType type) {
  const Pair p = open_pair(quant_name);
  int compared = 0;
  for (const auto& t : p.quant.tensors()) {
    const gguf::TensorInfo* src = p.f32.find_tensor(t.name);
    ASSERT_NE(src, nullptr) << t.name;
    if (t.type != type || src->type != DType::F32) continue;
    const auto in = p.f32.tensor_data(*src);
    const auto want = p.quant.tensor_data(t);
    std::vector<uint8_t> got(want.size());
    const size_t rb = *row_bytes(type, t.row_length());
    for (int64_t r = 0; r < t.rows(); ++r) {
      const auto* x = reinterpret_cast<const float*>(in.data()) + r * t.row_length();
      ASSERT_TRUE(quantize_row(type, x, got.data() + r * rb, t.row_length()).ok());
    }
    size_t first_diff = got.size();
    for (size_t i = 0; i < got.size() && first_diff == got.size(); ++i) {
      if (got[i] != want[i]) first_diff = i;
    }
    EXPECT_EQ(first_diff, got.size()) << t.name << ": first differing byte " << first_diff;
    ++compared;
  }
  EXPECT_GT(compared, 0) << "no " << traits(type).name << " tensors in " << quant_name;
}

TEST(FixtureQuantization, Q8_0IsByteIdentical) { expect_byte_identical("tiny-llama-q8_0.gguf", DType::Q8_0); }
TEST(FixtureQuantization, Q4_0IsByteIdentical) { expect_byte_identical("tiny-llama-q4_0.gguf", DType::Q4_0); }

// For each tensor the fixture stores in a K-quant, Hearth's quantization of
// the F32 weights must have an RMS error within 5% of the fixture's own.
void expect_error_within_5_percent(const char* quant_name) {
  const Pair p = open_pair(quant_name);
  int compared = 0;
  for (const auto& t : p.quant.tensors()) {
    const gguf::TensorInfo* src = p.f32.find_tensor(t.name);
    ASSERT_NE(src, nullptr) << t.name;
    if (!traits(t.type).quantized || src->type != DType::F32) continue;
    const int64_t n = t.row_length();
    const size_t rb = *row_bytes(t.type, n);
    const auto in = p.f32.tensor_data(*src);
    const auto ref = p.quant.tensor_data(t);
    std::vector<uint8_t> mine(rb);
    std::vector<float> y_mine(static_cast<size_t>(n)), y_ref(static_cast<size_t>(n));
    double e_mine = 0, e_ref = 0;
    for (int64_t r = 0; r < t.rows(); ++r) {
      const auto* x = reinterpret_cast<const float*>(in.data()) + r * n;
      ASSERT_TRUE(quantize_row(t.type, x, mine.data(), n).ok());
      ASSERT_TRUE(dequantize_row(t.type, mine.data(), y_mine.data(), n).ok());
      ASSERT_TRUE(dequantize_row(t.type, ref.data() + r * rb, y_ref.data(), n).ok());
      for (int64_t i = 0; i < n; ++i) {
        e_mine += (y_mine[i] - x[i]) * (y_mine[i] - x[i]);
        e_ref += (y_ref[i] - x[i]) * (y_ref[i] - x[i]);
      }
    }
    const double ratio = std::sqrt(e_mine / e_ref);
    EXPECT_LT(ratio, 1.05) << t.name << " (" << traits(t.type).name << ")";
    // The fixture's dequantization must itself be close to F32 (a wrong
    // layout gives errors of the order of the weights).
    double norm = 0;
    for (int64_t i = 0; i < t.elements(); ++i) norm += reinterpret_cast<const float*>(in.data())[i] * reinterpret_cast<const float*>(in.data())[i];
    EXPECT_LT(std::sqrt(e_ref / norm), 0.2) << t.name;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

TEST(FixtureQuantization, Q4_K_MErrorMatchesTheReference) { expect_error_within_5_percent("tiny-llama-q4_k_m.gguf"); }
TEST(FixtureQuantization, Q6_KErrorMatchesTheReference) { expect_error_within_5_percent("tiny-llama-q6_k.gguf"); }

// The fastest kernels on the reference engine's own quantized tensors: the
// dot of each row with a quantized random activation must match the float
// dot of the fixture's dequantized row with the float activation, up to the
// activation's 8-bit rounding (well under 1% of sum |w a|).
TEST(FixtureKernels, DotProductsOnReferenceTensorsMatchFloat) {
  const KernelTable kt = select_kernels(detect_cpu_features());
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  int checked = 0;
  for (const char* name : {"tiny-llama-q8_0.gguf", "tiny-llama-q4_0.gguf", "tiny-llama-q4_k_m.gguf",
                           "tiny-llama-q6_k.gguf", "tiny-llama-f16.gguf"}) {
    auto file = gguf::GgufFile::open(model_path(name));
    ASSERT_TRUE(file.ok()) << name;
    for (const auto& t : file->tensors()) {
      if (t.n_dims != 2 || !kt.supports(t.type)) continue;
      const TypeKernels& k = kt.get(t.type);
      const int64_t n = t.row_length();
      std::vector<float> x(static_cast<size_t>(n)), w(static_cast<size_t>(n));
      for (auto& v : x) v = dist(rng);
      std::vector<uint8_t> act(*row_bytes(k.act_type, n));
      kt.quantize_activation(k.act_type, x.data(), act.data(), n);
      const auto data = file->tensor_data(t);
      const size_t rb = *row_bytes(t.type, n);
      for (int64_t r = 0; r < std::min<int64_t>(t.rows(), 16); ++r) {
        ASSERT_TRUE(dequantize_row(t.type, data.data() + r * rb, w.data(), n).ok());
        double want = 0, mag = 0;
        for (int64_t i = 0; i < n; ++i) {
          want += static_cast<double>(w[i]) * x[i];
          mag += std::fabs(static_cast<double>(w[i]) * x[i]);
        }
        const float got = k.vec_dot(n, data.data() + r * rb, act.data());
        EXPECT_NEAR(got, want, 0.01 * mag) << name << " " << t.name << " row " << r;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

}  // namespace
}  // namespace hearth::quant
