// The CPU matmul's single-token (decode) path on the fastest kernels against
// the scalar reference kernels, through the backend: row ranges split across
// threads, multi-row decode kernels where the level has them, row counts
// that leave partial passes and chunks, and row lengths that leave a partial
// block group.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <random>
#include <vector>

#include "test_kernel_level.h"

namespace hearth::backend {
namespace {

struct Case {
  DType type;
  int64_t cols;
};

class DecodeMatMul : public ::testing::TestWithParam<Case> {};

TEST_P(DecodeMatMul, MatchesTheReferenceKernels) {
  const DType type = GetParam().type;
  const int64_t cols = GetParam().cols;
  std::mt19937 rng(static_cast<unsigned>(cols) + static_cast<unsigned>(type));
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int64_t rows : {int64_t{1}, int64_t{7}, int64_t{301}}) {
    const size_t rb = *row_bytes(type, cols);
    std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
    std::vector<float> wf(static_cast<size_t>(rows * cols)), row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (auto& v : row) v = 0.02f * dist(rng);
      ASSERT_TRUE(quant::quantize_row(type, row.data(), w.data() + r * rb, cols).ok());
      ASSERT_TRUE(quant::dequantize_row(type, w.data() + r * rb, wf.data() + r * cols, cols).ok());
    }
    std::vector<float> x(static_cast<size_t>(cols));
    for (auto& v : x) v = dist(rng);

    std::vector<float> got, want;
    for (auto [choice, threads] : {std::pair{KernelChoice::Fastest, 2}, std::pair{KernelChoice::Reference, 1}}) {
      Graph g;
      Tensor* wt = g.input(type, {cols, rows, 1, 1}, w.data());
      wt->kind = TensorKind::Weight;
      Tensor* xt = g.input(DType::F32, {cols, 1, 1, 1}, x.data());
      g.output = g.matmul(wt, xt);
      auto be = make_cpu_backend(testing::cpu_options(threads, choice));
      ASSERT_TRUE(be->compute(g).ok());
      const float* y = g.output->as<const float>();
      (choice == KernelChoice::Fastest ? got : want).assign(y, y + rows);
    }
    for (int64_t r = 0; r < rows; ++r) {
      double mag = 0;
      for (int64_t c = 0; c < cols; ++c) mag += std::fabs(static_cast<double>(wf[static_cast<size_t>(r * cols + c)]) * x[static_cast<size_t>(c)]);
      ASSERT_NEAR(got[static_cast<size_t>(r)], want[static_cast<size_t>(r)], 2e-5 * mag + 1e-9)
          << traits(type).name << " cols=" << cols << " rows=" << rows << " row " << r;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, DecodeMatMul,
                         ::testing::Values(Case{DType::Q4_0, 2080}, Case{DType::Q4_0, 896}, Case{DType::Q5_0, 2080},
                                           Case{DType::Q5_0, 896}, Case{DType::Q8_0, 2080}, Case{DType::Q8_0, 896},
                                           Case{DType::Q4_K, 2304}, Case{DType::Q6_K, 2304}, Case{DType::Q4_1, 2080},
                                           Case{DType::F16, 200}),
                         [](const auto& p) {
                           return std::string(traits(p.param.type).name) + "_" + std::to_string(p.param.cols);
                         });

}  // namespace
}  // namespace hearth::backend
