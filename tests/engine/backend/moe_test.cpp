// The CPU mixture-of-experts ops: routing against values worked out by hand
// from the definitions (softmax, top-k, renormalization), and products by
// expert id on the fastest kernels (decode: the chosen experts' rows only;
// prefill: tokens grouped by expert) against the dense product of the same
// expert's matrix on the scalar reference kernels.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <random>
#include <vector>

#include "test_kernel_level.h"

namespace hearth::backend {
namespace {

Tensor* f32_input(Graph& g, std::vector<float>& v, int64_t ne0, int64_t ne1) {
  return g.input(DType::F32, {ne0, ne1, 1, 1}, v.data());
}

TEST(MoeRouting, TopKPicksTheLargestWithTiesToTheLowerIndex) {
  std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, /* token 1 */ -1.0f, -4.0f, 0.5f, 0.25f};
  Graph g;
  Tensor* ids = g.top_k(f32_input(g, logits, 4, 2), 2);
  g.output = ids;
  auto be = make_cpu_backend(testing::cpu_options(2));
  ASSERT_TRUE(be->compute(g).ok());
  const int32_t* got = ids->as<const int32_t>();
  EXPECT_EQ(std::vector<int32_t>(got, got + 4), (std::vector<int32_t>{1, 3, 2, 3}));
}

TEST(MoeRouting, GateWeightsFollowTheGatingDefinitions) {
  std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.0f};
  std::vector<int32_t> chosen = {1, 3};
  double total = 0;
  for (float l : logits) total += std::exp(static_cast<double>(l));
  const double p1 = std::exp(2.0) / total, p3 = std::exp(1.0) / total;
  struct Want {
    MoeParams params;
    double w0, w1;
  };
  const Want cases[] = {
      {{MoeGating::Softmax, false, 1.0f}, p1, p3},
      {{MoeGating::Softmax, true, 1.0f}, p1 / (p1 + p3), p3 / (p1 + p3)},
      {{MoeGating::SoftmaxSelected, false, 2.5f}, 2.5 * std::exp(2.0) / (std::exp(2.0) + std::exp(1.0)),
       2.5 * std::exp(1.0) / (std::exp(2.0) + std::exp(1.0))},
  };
  for (const Want& c : cases) {
    Graph g;
    Tensor* ids = g.input(DType::I32, {2, 1, 1, 1}, chosen.data());
    g.output = g.moe_gate(f32_input(g, logits, 4, 1), ids, c.params);
    auto be = make_cpu_backend(testing::cpu_options(1));
    ASSERT_TRUE(be->compute(g).ok());
    EXPECT_NEAR(g.output->as<const float>()[0], c.w0, 1e-6);
    EXPECT_NEAR(g.output->as<const float>()[1], c.w1, 1e-6);
  }
}

TEST(MoeRouting, SumWeighsEachTokensSlots) {
  // Two tokens, two slots each, rows of three.
  std::vector<float> y = {1, 2, 3, 10, 20, 30, -1, 0, 1, 4, 4, 4};
  std::vector<float> w = {0.25f, 0.75f, 1.0f, 0.5f};
  Graph g;
  g.output = g.moe_sum(f32_input(g, y, 3, 4), f32_input(g, w, 2, 2));
  auto be = make_cpu_backend(testing::cpu_options(2));
  ASSERT_TRUE(be->compute(g).ok());
  const float* got = g.output->as<const float>();
  EXPECT_EQ(std::vector<float>(got, got + 6), (std::vector<float>{7.75f, 15.5f, 23.25f, 1.0f, 2.0f, 3.0f}));
}

TEST(MoeRouting, AddIdAddsEachSlotsExpertBias) {
  // Two tokens, two slots each, rows of two; three experts' biases.
  std::vector<float> y = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> bias = {100, 200, 10, 20, 1000, 2000};
  std::vector<int32_t> chosen = {2, 0, 1, 2};
  Graph g;
  Tensor* ids = g.input(DType::I32, {2, 2, 1, 1}, chosen.data());
  g.output = g.add_id(f32_input(g, y, 2, 4), f32_input(g, bias, 2, 3), ids);
  auto be = make_cpu_backend(testing::cpu_options(2));
  ASSERT_TRUE(be->compute(g).ok());
  const float* got = g.output->as<const float>();
  EXPECT_EQ(std::vector<float>(got, got + 8), (std::vector<float>{1001, 2002, 103, 204, 15, 26, 1007, 2008}));
}

struct IdCase {
  DType type;
  int64_t cols;
};

class MatMulById : public ::testing::TestWithParam<IdCase> {};

TEST_P(MatMulById, MatchesTheDenseProductOfEachChosenExpert) {
  const DType type = GetParam().type;
  const int64_t cols = GetParam().cols, rows = 67, n_expert = 6, k = 2;
  std::mt19937 rng(static_cast<unsigned>(cols) * 31u + static_cast<unsigned>(type));
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const size_t rb = *row_bytes(type, cols);
  std::vector<uint8_t> w(rb * static_cast<size_t>(rows * n_expert));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows * n_expert; ++r) {
    for (auto& v : row) v = 0.02f * dist(rng);
    ASSERT_TRUE(quant::quantize_row(type, row.data(), w.data() + r * rb, cols).ok());
  }
  for (int64_t n_tok : {int64_t{1}, int64_t{37}}) {
    for (bool per_slot : {false, true}) {
      const int64_t n_x = per_slot ? k * n_tok : n_tok;
      std::vector<float> x(static_cast<size_t>(cols * n_x));
      for (auto& v : x) v = dist(rng);
      // Expert 5 is never chosen, expert 0 by most tokens.
      std::vector<int32_t> ids(static_cast<size_t>(k * n_tok));
      for (int64_t t = 0; t < n_tok; ++t) {
        ids[static_cast<size_t>(t * k)] = t % 3 == 0 ? 2 : 0;
        ids[static_cast<size_t>(t * k + 1)] = static_cast<int32_t>(1 + t % 4);
      }
      Graph g;
      Tensor* wt = g.input(type, {cols, rows, n_expert, 1}, w.data());
      wt->kind = TensorKind::Weight;
      Tensor* idt = g.input(DType::I32, {k, n_tok, 1, 1}, ids.data());
      g.output = g.matmul_id(wt, f32_input(g, x, cols, n_x), idt);
      auto fast = make_cpu_backend(testing::cpu_options(2));
      ASSERT_TRUE(fast->compute(g).ok());
      const float* got = g.output->as<const float>();

      auto ref = make_cpu_backend(testing::cpu_options(1, KernelChoice::Reference));
      for (int64_t slot = 0; slot < k * n_tok; ++slot) {
        const int32_t e = ids[static_cast<size_t>(slot)];
        const int64_t xr = per_slot ? slot : slot / k;
        Graph d;
        Tensor* we = d.input(type, {cols, rows, 1, 1}, w.data() + rb * static_cast<size_t>(rows * e));
        we->kind = TensorKind::Weight;
        d.output = d.matmul(we, d.input(DType::F32, {cols, 1, 1, 1}, x.data() + xr * cols));
        ASSERT_TRUE(ref->compute(d).ok());
        for (int64_t r = 0; r < rows; ++r) {
          const float want = d.output->as<const float>()[r];
          ASSERT_NEAR(got[slot * rows + r], want, 2e-3 * (std::fabs(want) + 1.0))
              << traits(type).name << " tokens " << n_tok << " slot " << slot << " row " << r;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, MatMulById,
                         ::testing::Values(IdCase{DType::F32, 96}, IdCase{DType::Q8_0, 256}, IdCase{DType::Q4_K, 512},
                                           IdCase{DType::Q6_K, 256}, IdCase{DType::Q5_0, 128}),
                         [](const auto& p) {
                           return std::string(traits(p.param.type).name) + "_" + std::to_string(p.param.cols);
                         });

}  // namespace
}  // namespace hearth::backend
