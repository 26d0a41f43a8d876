// matvec over several tokens at once (2..8 activation columns, the verify
// pass of speculative decoding): every token's row of the result must hold
// bit for bit what a one-token matvec computes for that token, with either
// reduction (subgroup or shared memory), for every weight type; and both
// must match the scalar reference (double sums) within rounding. A bias and
// a residual are added where each value is written.
#include <cmath>
#include <cstring>
#include <random>

#include "reference_dequant.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using testing::Gpu;

constexpr uint32_t kRows = 37;  // odd: a partial workgroup of rows at the end

// Random weights of `type` (block types quantized by the reference
// quantizer: realistic scales) and their values by the scalar reference.
std::vector<uint8_t> weight_bytes(DType type, uint32_t cols, std::mt19937& rng, std::vector<float>& values) {
  const size_t n = size_t{kRows} * cols;
  std::vector<uint8_t> bytes;
  if (type == DType::F32 || type == DType::F16 || type == DType::BF16) {
    std::normal_distribution<float> dist(0.0f, 0.5f);
    const size_t unit = type == DType::F32 ? 4 : 2;
    bytes.resize(unit * n);
    for (size_t i = 0; i < n; ++i) {
      const float f = dist(rng);
      if (type == DType::F32) {
        std::memcpy(&bytes[4 * i], &f, 4);
      } else if (type == DType::F16) {
        const uint16_t h = testing::to_half(f);
        std::memcpy(&bytes[2 * i], &h, 2);
      } else {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const auto h = static_cast<uint16_t>(bits >> 16);
        std::memcpy(&bytes[2 * i], &h, 2);
      }
    }
  } else {
    bytes = testing::quantized_rows(type, kRows, cols, rng);
  }
  values = testing::dequant_rows(type, bytes, kRows, cols);
  return bytes;
}

struct Variant {
  DType type;
  Reduction reduction;
};

class MatvecTokens : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    gpu_ = Gpu::create();
    ASSERT_TRUE(gpu_);
    tuning_ = default_tuning(*gpu_->ctx);
    if (GetParam().reduction == Reduction::SharedMemory) {
      tuning_.matvec_reduction = Reduction::SharedMemory;
      tuning_.matvec_rows = 1;
      tuning_.matvec = 32;
    }
    // Subgroup variants run the device's default tuning, which is the
    // subgroup reduction wherever the device has subgroup arithmetic
    // (lavapipe has).
    kernels_ = std::make_unique<Kernels>(*gpu_->ctx, *gpu_->pipelines, tuning_);
  }
  void TearDown() override { kernels_.reset(); }

  // y = W x (+ bias) for `n` tokens of x, by this variant's kernels.
  std::vector<float> matvec(const Buffer& w, const std::vector<float>& x, uint32_t cols, uint32_t n,
                            const std::vector<float>& bias = {}, const std::vector<float>& residual = {}) {
    Buffer bx = gpu_->upload(x), by = gpu_->buffer(4ull * kRows * n);
    Buffer bb = bias.empty() ? Buffer{} : gpu_->upload(bias);
    Buffer br = residual.empty() ? Buffer{} : gpu_->upload(residual);
    const Kernels::MatvecAddends add{bias.empty() ? BufferView{} : BufferView::whole(bb),
                                     residual.empty() ? BufferView{} : BufferView::whole(br)};
    EXPECT_TRUE(gpu_->seq->begin().ok());
    const auto st = kernels_->matvec(*gpu_->seq, GetParam().type, BufferView::whole(w), BufferView::whole(bx),
                                     BufferView::whole(by), cols, kRows, n, add);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    EXPECT_TRUE(gpu_->seq->end().ok());
    EXPECT_TRUE(gpu_->seq->submit_and_wait().ok());
    return gpu_->download<float>(by, size_t{kRows} * n);
  }

  std::unique_ptr<Gpu> gpu_;
  KernelTuning tuning_;
  std::unique_ptr<Kernels> kernels_;
};

TEST_P(MatvecTokens, EachTokenIsTheOneTokenResultBitForBit) {
  const DType type = GetParam().type;
  std::mt19937 rng(static_cast<unsigned>(type) * 31u + 7u);
  const auto& t = traits(type);
  // Several blocks per row (an even count: MXFP4 rows are read 64 values at
  // a time) so that a row's invocations stride over chunks; plain rows get
  // an odd length.
  const uint32_t cols = t.quantized ? static_cast<uint32_t>(t.block_elements) * (t.block_elements == 256 ? 6 : 22)
                                    : 32 * 9 + 7;
  std::vector<float> values;
  const auto bytes = weight_bytes(type, cols, rng, values);
  const Buffer w = gpu_->upload(bytes);
  constexpr uint32_t kMax = Kernels::kMatvecMaxTokens;
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(size_t{kMax} * cols);
  for (auto& v : x) v = dist(rng);

  // One token at a time, each checked against the reference.
  std::vector<std::vector<float>> single(kMax);
  for (uint32_t tok = 0; tok < kMax; ++tok) {
    const std::vector<float> xt(x.begin() + std::ptrdiff_t{tok} * cols, x.begin() + std::ptrdiff_t{tok + 1} * cols);
    single[tok] = matvec(w, xt, cols, 1);
    for (uint32_t r = 0; r < kRows; ++r) {
      double want = 0, mag = 0;
      for (uint32_t c = 0; c < cols; ++c) {
        const double p = double(values[size_t{r} * cols + c]) * xt[c];
        want += p;
        mag += std::fabs(p);
      }
      ASSERT_NEAR(single[tok][r], want, 1e-5 * (1 + mag)) << t.name << " token " << tok << " row " << r;
    }
  }
  // Every count with the subgroup reduction (what lavapipe and most GPUs
  // run); the shared-memory one shares the per-token code, so the smallest,
  // an odd and the largest count cover it (each count is a pipeline to compile).
  std::vector<uint32_t> counts = {2, 5, kMax};
  if (GetParam().reduction == Reduction::Subgroup) {
    counts.clear();
    for (uint32_t n = 2; n <= kMax; ++n) counts.push_back(n);
  }
  for (const uint32_t n : counts) {
    const std::vector<float> xn(x.begin(), x.begin() + std::ptrdiff_t{n} * cols);
    const auto y = matvec(w, xn, cols, n);
    for (uint32_t tok = 0; tok < n; ++tok) {
      ASSERT_EQ(std::memcmp(y.data() + size_t{tok} * kRows, single[tok].data(), 4 * kRows), 0)
          << t.name << ": token " << tok << " of " << n << " differs from its one-token matvec";
    }
  }
}

// A product's bias and the residual add after it join each value where it
// is written, with the roundings of the separate adds they replace: bit for
// bit (unbiased result + bias) + residual, for one token and for several.
TEST_P(MatvecTokens, BiasAndResidualAreAddedWhereEachValueIsWritten) {
  const DType type = GetParam().type;
  std::mt19937 rng(static_cast<unsigned>(type) * 17u + 3u);
  const auto& t = traits(type);
  const uint32_t cols = t.quantized ? static_cast<uint32_t>(t.block_elements) * 2 : 32 * 3;
  std::vector<float> values;
  const Buffer w = gpu_->upload(weight_bytes(type, cols, rng, values));
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> bias(kRows), x(size_t{3} * cols), residual(size_t{3} * kRows);
  for (auto& v : bias) v = dist(rng);
  for (auto& v : x) v = dist(rng);
  for (auto& v : residual) v = dist(rng);
  for (const uint32_t n : {1u, 3u}) {
    const std::vector<float> xn(x.begin(), x.begin() + std::ptrdiff_t{n} * cols);
    const std::vector<float> rn(residual.begin(), residual.begin() + std::ptrdiff_t{n} * kRows);
    const auto plain = matvec(w, xn, cols, n);
    const auto biased = matvec(w, xn, cols, n, bias);
    const auto both = matvec(w, xn, cols, n, bias, rn);
    const auto only_residual = matvec(w, xn, cols, n, {}, rn);
    ASSERT_EQ(both.size(), plain.size());
    for (size_t i = 0; i < plain.size(); ++i) {
      const float want_biased = plain[i] + bias[i % kRows];
      const float want_both = want_biased + rn[i];
      const float want_residual = plain[i] + rn[i];
      ASSERT_EQ(std::memcmp(&biased[i], &want_biased, 4), 0) << t.name << " " << n << " tokens, bias, value " << i;
      ASSERT_EQ(std::memcmp(&both[i], &want_both, 4), 0) << t.name << " " << n << " tokens, both, value " << i;
      ASSERT_EQ(std::memcmp(&only_residual[i], &want_residual, 4), 0)
          << t.name << " " << n << " tokens, residual, value " << i;
    }
  }
}

TEST_P(MatvecTokens, RefusesTokenCountsOutsideItsRange) {
  const DType type = GetParam().type;
  const uint32_t cols = static_cast<uint32_t>(traits(type).block_elements) * 2;
  Buffer w = gpu_->buffer(*row_bytes(type, cols) * kRows), x = gpu_->buffer(4ull * cols * 9),
         y = gpu_->buffer(4ull * kRows * 9);
  ASSERT_TRUE(gpu_->seq->begin().ok());
  for (uint32_t n : {0u, Kernels::kMatvecMaxTokens + 1}) {
    const auto st = kernels_->matvec(*gpu_->seq, type, BufferView::whole(w), BufferView::whole(x),
                                     BufferView::whole(y), cols, kRows, n);
    ASSERT_FALSE(st.ok()) << n << " tokens";
    EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(st.error().message.find("tokens"), std::string::npos) << st.error().message;
  }
  ASSERT_TRUE(gpu_->seq->end().ok());
}

std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (DType type : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                     DType::Q5_1, DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL,
                     DType::IQ4_XS, DType::MXFP4}) {
    out.push_back({type, Reduction::Subgroup});
    out.push_back({type, Reduction::SharedMemory});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, MatvecTokens, ::testing::ValuesIn(variants()),
                         [](const ::testing::TestParamInfo<Variant>& pi) {
                           return std::string(traits(pi.param.type).name) +
                                  (pi.param.reduction == Reduction::Subgroup ? "_subgroup" : "_shared");
                         });

}  // namespace
}  // namespace hearth::vulkan
