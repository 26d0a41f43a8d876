// Hearth's quantizers against the reference engine's quantized fixture
// files: same bytes for Q8_0 and Q4_0, same error for the K-quants.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/quant/reference.h>

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

}  // namespace
}  // namespace hearth::quant
