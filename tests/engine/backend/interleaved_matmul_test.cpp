// Weights in the 16-row interleaved layout (tensor.h WeightLayout) through
// the CPU backend, against the same weights in the plain layout: one token
// and a few (the decode kernels, or the row dots and plain copies where the
// level has no kernels for the layout), a prompt (the prefill tiles), and
// embedding lookups.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/quant/interleave.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "test_kernel_level.h"

namespace hearth::backend {
namespace {

struct Weights {
  std::vector<uint8_t> plain, interleaved;
  std::vector<float> values;  // dequantized, row-major
};

Weights random_weights(DType type, int64_t rows, int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  const size_t rb = *row_bytes(type, cols);
  Weights w;
  w.plain.resize(rb * static_cast<size_t>(rows));
  w.values.resize(static_cast<size_t>(rows * cols));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = dist(rng);
    EXPECT_TRUE(quant::quantize_row(type, row.data(), w.plain.data() + r * rb, cols).ok());
    EXPECT_TRUE(quant::dequantize_row(type, w.plain.data() + r * rb, w.values.data() + r * cols, cols).ok());
  }
  w.interleaved.resize(w.plain.size());
  quant::interleave_rows(type, w.plain.data(), w.interleaved.data(), rows, cols);
  return w;
}

// W x for n_tok tokens on a backend, the weight in `layout`.
std::vector<float> product(DType type, const Weights& w, WeightLayout layout, int64_t rows, int64_t cols,
                           const std::vector<float>& x, int64_t n_tok, KernelChoice choice) {
  Graph g;
  auto& bytes = layout == WeightLayout::Plain ? w.plain : w.interleaved;
  Tensor* wt = g.input(type, {cols, rows, 1, 1}, const_cast<uint8_t*>(bytes.data()));
  wt->kind = TensorKind::Weight;
  wt->layout = layout;
  Tensor* xt = g.input(DType::F32, {cols, n_tok, 1, 1}, const_cast<float*>(x.data()));
  g.output = g.matmul(wt, xt);
  auto be = make_cpu_backend(testing::cpu_options(2, choice));
  const Status st = be->compute(g);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  const float* y = g.output->as<const float>();
  return {y, y + rows * n_tok};
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class InterleavedMatMul : public ::testing::TestWithParam<DType> {};

TEST_P(InterleavedMatMul, EqualsThePlainLayoutOnEveryPath) {
  const DType type = GetParam();
  const int64_t rows = 165;  // ten groups and five plain last rows
  const quant::KernelTable table = quant::select_kernels(quant::detect_cpu_features(), testing::kMaxKernelLevel);
  const quant::TypeKernels& k = table.get(type);
  const bool k_quant = traits(type).block_elements == 256;
  for (const int64_t cols : {k_quant ? int64_t{1024} : int64_t{896}, int64_t{2304}}) {
    const Weights w = random_weights(type, rows, cols, static_cast<unsigned>(cols));
    std::mt19937 rng(5);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    // Up to 16 tokens (the backend's kMaxRowsBatch) run the decode kernels,
    // more the prefill tiles.
    for (const int64_t n_tok : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{16}, int64_t{40}}) {
      std::vector<float> x(static_cast<size_t>(cols * n_tok));
      for (auto& v : x) v = dist(rng);
      const auto want = product(type, w, WeightLayout::Plain, rows, cols, x, n_tok, KernelChoice::Reference);
      // Plain copies of the rows under the reference kernels: the same sums.
      EXPECT_TRUE(same_bits(product(type, w, WeightLayout::Interleaved16, rows, cols, x, n_tok, KernelChoice::Reference), want))
          << "cols=" << cols << " tokens=" << n_tok;
      const auto fast = product(type, w, WeightLayout::Interleaved16, rows, cols, x, n_tok, KernelChoice::Fastest);
      for (int64_t t = 0; t < n_tok; ++t) {
        for (int64_t r = 0; r < rows; ++r) {
          double mag = 0;
          for (int64_t c = 0; c < cols; ++c) {
            mag += std::fabs(static_cast<double>(w.values[static_cast<size_t>(r * cols + c)]) * x[static_cast<size_t>(t * cols + c)]);
          }
          const size_t at = static_cast<size_t>(t * rows + r);
          ASSERT_NEAR(fast[at], want[at], 2e-5 * mag + 1e-9) << "cols=" << cols << " tokens=" << n_tok << " token " << t
                                                              << " row " << r;
        }
      }
      if (n_tok > 16 && (k.interleaved.prefill.gemm != nullptr || k.prefill.gemm == nullptr)) {
        // The same tiles run on either layout: the prefill tiles pack the
        // same words from the groups, or the plain tiles get plain copies.
        EXPECT_TRUE(same_bits(fast, product(type, w, WeightLayout::Plain, rows, cols, x, n_tok, KernelChoice::Fastest)))
            << "cols=" << cols << " tokens=" << n_tok;
      } else if (n_tok <= 16) {
        // A few tokens: each gets exactly what it gets alone.
        for (int64_t t = 0; t < n_tok; ++t) {
          const std::vector<float> one(x.begin() + t * cols, x.begin() + (t + 1) * cols);
          const auto alone = product(type, w, WeightLayout::Interleaved16, rows, cols, one, 1, KernelChoice::Fastest);
          EXPECT_TRUE(same_bits(alone, std::vector<float>(fast.begin() + t * rows, fast.begin() + (t + 1) * rows)))
              << "cols=" << cols << " tokens=" << n_tok << " token " << t;
        }
      }
    }
  }
}

TEST_P(InterleavedMatMul, EmbeddingLookupsReadPlainRows) {
  const DType type = GetParam();
  const int64_t rows = 53, cols = traits(type).block_elements == 256 ? 256 : 96;
  const Weights w = random_weights(type, rows, cols, 3);
  std::vector<int32_t> ids{0, 17, 47, 16, 15, 52, 48};
  std::vector<float> got[2];
  for (const WeightLayout layout : {WeightLayout::Plain, WeightLayout::Interleaved16}) {
    Graph g;
    auto& bytes = layout == WeightLayout::Plain ? w.plain : w.interleaved;
    Tensor* wt = g.input(type, {cols, rows, 1, 1}, const_cast<uint8_t*>(bytes.data()));
    wt->kind = TensorKind::Weight;
    wt->layout = layout;
    Tensor* it = g.input(DType::I32, {static_cast<int64_t>(ids.size()), 1, 1, 1}, ids.data());
    g.output = g.get_rows(wt, it);
    auto be = make_cpu_backend(testing::cpu_options(2));
    ASSERT_TRUE(be->compute(g).ok());
    const float* y = g.output->as<const float>();
    got[layout == WeightLayout::Plain ? 0 : 1].assign(y, y + cols * static_cast<int64_t>(ids.size()));
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    for (int64_t c = 0; c < cols; ++c) {
      ASSERT_EQ(got[1][i * cols + static_cast<size_t>(c)], w.values[static_cast<size_t>(ids[i] * cols + c)])
          << "token " << i << " value " << c;
    }
  }
  EXPECT_EQ(got[0], got[1]);
}

INSTANTIATE_TEST_SUITE_P(Types, InterleavedMatMul, ::testing::Values(DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::Q4_K, DType::Q6_K),
                         [](const auto& p) { return std::string(traits(p.param).name); });

}  // namespace
}  // namespace hearth::backend
