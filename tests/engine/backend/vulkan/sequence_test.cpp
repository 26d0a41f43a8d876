// Command sequences: recorded once and resubmitted with new inputs, barriers
// only between dependent dispatches, timestamps behind the profiling flag.
#include <cmath>
#include <cstring>
#include <random>

#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using testing::Gpu;

// y = W * rmsnorm(x) + bias, computed on the host.
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& norm_w,
                             const std::vector<float>& w, const std::vector<float>& bias, uint32_t rows) {
  const size_t cols = x.size();
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double inv = 1.0 / std::sqrt(ss / cols + 1e-6);
  std::vector<float> out(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (size_t c = 0; c < cols; ++c) acc += double(w[r * cols + c]) * x[c] * inv * norm_w[c];
    out[r] = static_cast<float>(acc + bias[r]);
  }
  return out;
}

TEST(VulkanSequence, RecordedOnceResubmittedWithNewInputs) {
  auto gpu = Gpu::create();
  ASSERT_TRUE(gpu);
  const uint32_t cols = 96, rows = 19;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto fill = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& e : v) e = dist(rng);
    return v;
  };
  const auto norm_w = fill(cols), w = fill(size_t{rows} * cols), bias = fill(rows);
  Buffer bnw = gpu->upload(norm_w), bw = gpu->upload(w), bb = gpu->upload(bias);
  // Input and output live in host-visible memory: written and read per token.
  Buffer bx = gpu->buffer(4 * cols, MemoryUsage::Upload);
  Buffer bnorm = gpu->buffer(4 * cols), bmv = gpu->buffer(4 * rows);
  Buffer bout = gpu->buffer(4 * rows, MemoryUsage::Readback);
  ASSERT_NE(bx.mapped(), nullptr);
  ASSERT_NE(bout.mapped(), nullptr);

  auto& k = *gpu->kernels;
  auto& s = *gpu->seq;
  ASSERT_TRUE(s.begin().ok());
  ASSERT_TRUE(k.rms_norm(s, BufferView::whole(bx), BufferView::whole(bnw), BufferView::whole(bnorm), cols, 1, 1e-6f).ok());
  ASSERT_TRUE(k.matvec(s, DType::F32, BufferView::whole(bw), BufferView::whole(bnorm), BufferView::whole(bmv), cols, rows).ok());
  ASSERT_TRUE(k.add(s, BufferView::whole(bmv), BufferView::whole(bb), BufferView::whole(bout), rows, rows).ok());
  ASSERT_TRUE(s.end().ok());
  EXPECT_EQ(s.stats().dispatches, 3u);
  EXPECT_EQ(s.stats().barriers, 2u);  // each op reads the previous one's output

  for (int token = 0; token < 3; ++token) {
    const auto x = fill(cols);
    std::memcpy(bx.mapped(), x.data(), 4 * cols);
    ASSERT_TRUE(s.submit_and_wait().ok());
    std::vector<float> got(rows);
    std::memcpy(got.data(), bout.mapped(), 4 * rows);
    const auto want = reference(x, norm_w, w, bias, rows);
    for (uint32_t r = 0; r < rows; ++r) ASSERT_NEAR(got[r], want[r], 1e-4f + 1e-4f * std::fabs(want[r])) << "token " << token;
  }
  EXPECT_EQ(s.stats().submits, 3u);
}

TEST(VulkanSequence, WriteAfterReadGetsABarrierDisjointRangesDoNot) {
  auto gpu = Gpu::create();
  ASSERT_TRUE(gpu);
  const uint32_t n = 64;
  std::vector<float> ones(2 * n, 1.0f);
  Buffer a = gpu->upload(ones), b = gpu->buffer(8 * n);
  const BufferView lo = BufferView::whole(b).sub(0, 4 * n), hi = BufferView::whole(b).sub(4 * n, 4 * n);
  auto& k = *gpu->kernels;
  auto& s = *gpu->seq;
  ASSERT_TRUE(s.begin().ok());
  // Two writes to disjoint halves of one buffer: independent.
  ASSERT_TRUE(k.scale(s, BufferView::whole(a).sub(0, 4 * n), lo, n, 2.0f).ok());
  ASSERT_TRUE(k.scale(s, BufferView::whole(a).sub(4 * n, 4 * n), hi, n, 3.0f).ok());
  EXPECT_EQ(s.stats().barriers, 0u);
  // Overwriting `a`, which both read: write-after-read needs a barrier.
  ASSERT_TRUE(k.add(s, lo, hi, BufferView::whole(a).sub(0, 4 * n), n, n).ok());
  EXPECT_EQ(s.stats().barriers, 1u);
  ASSERT_TRUE(s.end().ok());
  ASSERT_TRUE(s.submit_and_wait().ok());
  const auto out = gpu->download<float>(a, 2 * n);
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], 5.0f);
    ASSERT_EQ(out[n + i], 1.0f);
  }
}

TEST(VulkanSequence, TimestampsPerDispatchWhenProfiling) {
  auto gpu = Gpu::create(ProfilingMode::Timestamps);
  ASSERT_TRUE(gpu);
  ASSERT_GT(gpu->ctx->limits().timestamp_period_ns, 0.0f) << "the test device has no compute timestamps";
  const uint32_t n = 4096;
  std::vector<float> x(n, 0.5f);
  Buffer bx = gpu->upload(x), by = gpu->buffer(4 * n), bz = gpu->buffer(4 * n);
  gpu->run([&](Kernels& k, CommandSequence& s) -> Status {
    HEARTH_CHECK(k.softcap(s, BufferView::whole(bx), BufferView::whole(by), n, 30.0f));
    return k.scale(s, BufferView::whole(by), BufferView::whole(bz), n, 2.0f);
  });
  const auto t = gpu->seq->timings();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].label, "softcap");
  EXPECT_EQ(t[1].label, "scale");
  for (const auto& op : t) {
    EXPECT_GE(op.ms, 0.0);
    EXPECT_TRUE(std::isfinite(op.ms));
  }
}

TEST(VulkanSequence, NoTimestampsWithoutProfiling) {
  auto gpu = Gpu::create(ProfilingMode::Off);
  ASSERT_TRUE(gpu);
  std::vector<float> x(16, 1.0f);
  Buffer bx = gpu->upload(x), by = gpu->buffer(64);
  gpu->run([&](Kernels& k, CommandSequence& s) { return k.scale(s, BufferView::whole(bx), BufferView::whole(by), 16, 2.0f); });
  EXPECT_TRUE(gpu->seq->timings().empty());
}

TEST(VulkanSequence, RejectsMisuse) {
  auto gpu = Gpu::create();
  ASSERT_TRUE(gpu);
  Buffer small = gpu->buffer(16);
  auto& s = *gpu->seq;
  EXPECT_FALSE(s.submit_and_wait().ok());  // nothing recorded
  ASSERT_TRUE(s.begin().ok());
  // A buffer too small for the shape names the op and the operand.
  auto st = gpu->kernels->scale(s, BufferView::whole(small), BufferView::whole(small), 100, 1.0f);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("scale"), std::string::npos);
  // Quant shapes must be whole blocks.
  st = gpu->kernels->matvec(s, DType::Q4_K, BufferView::whole(small), BufferView::whole(small),
                            BufferView::whole(small), 100, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("Q4_K"), std::string::npos) << st.error().message;
}

}  // namespace
}  // namespace hearth::vulkan
