// The CPU backend's op timings (hearth-cli bench --profile): one entry per
// node it ran, in graph order, labelled with the op (a product's with its
// weight type), only when the backend was made to time them, and only for
// the last graph.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>

#include <string>
#include <vector>

#include "random_values.h"
#include "test_kernel_level.h"

namespace hearth::backend {
namespace {

using testing::random_vec;

struct Small {
  std::vector<float> x = random_vec(32 * 3, 1), norm = random_vec(32, 2), w = random_vec(32 * 16, 3),
                     other = random_vec(16 * 3, 4);
  std::vector<int32_t> pos{0, 1, 2};
};

// rms_norm -> product (F32 weights, 3 tokens) -> add -> rope.
void norm_product_add_rope(Graph& g, Small& s) {
  Tensor* x = g.input(DType::F32, {32, 3, 1, 1}, s.x.data());
  Tensor* n = g.rms_norm(x, g.input(DType::F32, {32, 1, 1, 1}, s.norm.data()), 1e-6f);
  Tensor* y = g.matmul(g.input(DType::F32, {32, 16, 1, 1}, s.w.data()), n);
  Tensor* z = g.add(y, g.input(DType::F32, {16, 3, 1, 1}, s.other.data()));
  RopeParams p;
  p.n_dims = 8;
  p.head_dim = 8;
  g.output = g.rope(z, g.input(DType::I32, {3, 1, 1, 1}, s.pos.data()), p);
}

TEST(CpuOpTimings, OneEntryPerNodeInOrderWhenAskedFor) {
  CpuBackendOptions o = testing::cpu_options(2);
  o.time_ops = true;
  auto be = make_cpu_backend(o);
  Small s;
  Graph g;
  norm_product_add_rope(g, s);
  ASSERT_TRUE(be->compute(g).ok());
  const auto t = be->op_timings();
  const std::vector<std::string> want{"rms_norm", "matmul F32", "add", "rope"};
  ASSERT_EQ(t.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(t[i].first, want[i]) << i;
    EXPECT_GE(t[i].second, 0.0) << want[i];
  }
  // The next graph replaces them.
  Graph norm_only;
  norm_only.output =
      norm_only.rms_norm(norm_only.input(DType::F32, {32, 3, 1, 1}, s.x.data()),
                         norm_only.input(DType::F32, {32, 1, 1, 1}, s.norm.data()), 1e-6f);
  ASSERT_TRUE(be->compute(norm_only).ok());
  ASSERT_EQ(be->op_timings().size(), 1u);
  EXPECT_EQ(be->op_timings()[0].first, "rms_norm");
}

TEST(CpuOpTimings, NoneUnlessAskedFor) {
  auto be = make_cpu_backend(testing::cpu_options(2));
  Small s;
  Graph g;
  norm_product_add_rope(g, s);
  ASSERT_TRUE(be->compute(g).ok());
  EXPECT_TRUE(be->op_timings().empty());
}

}  // namespace
}  // namespace hearth::backend
