// The integer-dot matvec path (MatvecPath::IntegerDot): activations
// quantized to 8-bit blocks (quantize_activations) against a scalar twin of
// the quantizer, then packed 4x8-bit dot products on the weights' codes
// (matvec_int_dot) against double sums of the reference-dequantized weights
// times the device's own 8-bit activations, for every format with a shader
// and both reductions; every token of a multi-token product is bit for bit
// its one-token result (speculative verify passes rely on it). The prompt
// tiles of the same path (matmul_int_dot) against the same double sums, on
// row and token counts that leave partial tiles.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "reference_dequant.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using testing::Gpu;

constexpr uint32_t kRows = 37;  // odd: a partial workgroup of rows at the end

// One token's 8-bit blocks as the layout of quantize_q8.comp says:
// padded_blocks(nb) blocks of 8 code words, then a (d, d * sum of codes)
// pair per block.
struct QuantizedToken {
  std::vector<int8_t> codes;  // [nb * 32]
  std::vector<float> d, sum;  // [nb]
};

std::vector<QuantizedToken> unpack(const std::vector<uint8_t>& bytes, uint32_t cols, uint32_t n_tokens) {
  const uint32_t nb = cols / 32, padded = (nb + 1) & ~1u;
  const size_t token_bytes = 40ull * padded;
  std::vector<QuantizedToken> out(n_tokens);
  for (uint32_t t = 0; t < n_tokens; ++t) {
    const uint8_t* base = bytes.data() + t * token_bytes;
    out[t].codes.resize(size_t{nb} * 32);
    std::memcpy(out[t].codes.data(), base, out[t].codes.size());
    for (uint32_t b = 0; b < nb; ++b) {
      float pair[2];
      std::memcpy(pair, base + 32ull * padded + 8ull * b, 8);
      out[t].d.push_back(pair[0]);
      out[t].sum.push_back(pair[1]);
    }
  }
  return out;
}

class IntDotFixture {
 protected:
  void make(Reduction reduction) {
    gpu_ = Gpu::create();
    ASSERT_TRUE(gpu_);
    ASSERT_TRUE(gpu_->ctx->description().integer_dot) << "the device has no shaderIntegerDotProduct";
    tuning_ = default_tuning(*gpu_->ctx);
    if (reduction == Reduction::SharedMemory) {
      tuning_.matvec_reduction = Reduction::SharedMemory;
      tuning_.matvec_rows = 1;
      tuning_.matvec = 32;
    }
    kernels_ = std::make_unique<Kernels>(*gpu_->ctx, *gpu_->pipelines, tuning_);
  }

  // x -> 8-bit blocks (downloaded) and, with a weight type, y = W xq.
  std::vector<uint8_t> quantize(const std::vector<float>& x, uint32_t cols, uint32_t n) {
    Buffer bx = gpu_->upload(x), bq = gpu_->buffer(Kernels::quantized_bytes(cols, n));
    run([&] { return kernels_->quantize_activations(*gpu_->seq, BufferView::whole(bx), BufferView::whole(bq), cols, n); });
    return gpu_->download<uint8_t>(bq, Kernels::quantized_bytes(cols, n));
  }
  std::vector<float> matvec(DType type, const Buffer& w, const std::vector<float>& x, uint32_t cols, uint32_t n,
                            std::vector<uint8_t>* quantized = nullptr) {
    Buffer bx = gpu_->upload(x), bq = gpu_->buffer(Kernels::quantized_bytes(cols, n)),
           by = gpu_->buffer(4ull * kRows * n);
    run([&] {
      auto st = kernels_->quantize_activations(*gpu_->seq, BufferView::whole(bx), BufferView::whole(bq), cols, n);
      if (!st.ok()) return st;
      return kernels_->matvec_int_dot(*gpu_->seq, type, BufferView::whole(w), BufferView::whole(bq),
                                      BufferView::whole(by), cols, kRows, n);
    });
    if (quantized) *quantized = gpu_->download<uint8_t>(bq, Kernels::quantized_bytes(cols, n));
    return gpu_->download<float>(by, size_t{kRows} * n);
  }

  template <typename F>
  void run(F&& record) {
    ASSERT_TRUE(gpu_->seq->begin().ok());
    const Status st = record();
    ASSERT_TRUE(st.ok()) << st.error().message;
    ASSERT_TRUE(gpu_->seq->end().ok());
    ASSERT_TRUE(gpu_->seq->submit_and_wait().ok());
  }

  std::unique_ptr<Gpu> gpu_;
  KernelTuning tuning_;
  std::unique_ptr<Kernels> kernels_;
};

TEST(VulkanQuantizeActivations, MatchesTheScalarQuantizer) {
  struct Fixture : IntDotFixture {
    using IntDotFixture::make;
    using IntDotFixture::quantize;
  } f;
  f.make(Reduction::Subgroup);
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  // 7 blocks (odd: the padded layout) for 3 tokens; one all-zero block.
  constexpr uint32_t cols = 7 * 32, n = 3;
  std::vector<float> x(size_t{cols} * n);
  for (auto& v : x) v = dist(rng);
  std::fill(x.begin() + 32 * 2, x.begin() + 32 * 3, 0.0f);
  const auto q = unpack(f.quantize(x, cols, n), cols, n);
  for (uint32_t t = 0; t < n; ++t) {
    for (uint32_t b = 0; b < cols / 32; ++b) {
      const float* xb = x.data() + size_t{t} * cols + 32 * b;
      float amax = 0;
      int code_sum = 0;
      for (int i = 0; i < 32; ++i) {
        amax = std::max(amax, std::fabs(xb[i]));
        code_sum += q[t].codes[32 * b + i];
      }
      EXPECT_NEAR(q[t].d[b], amax / 127.0f, 1e-6f * amax) << "token " << t << " block " << b;
      EXPECT_NEAR(q[t].sum[b], double(q[t].d[b]) * code_sum, 1e-6 * (1 + std::fabs(q[t].d[b] * code_sum)))
          << "token " << t << " block " << b;
      for (int i = 0; i < 32; ++i) {
        const double scaled = amax > 0 ? double(xb[i]) * 127.0 / amax : 0.0;
        const int code = q[t].codes[32 * b + i];
        // Round to nearest; a value within float rounding of a tie may go either way.
        const bool near_tie = std::fabs(std::fabs(scaled - std::floor(scaled)) - 0.5) < 1e-4;
        if (near_tie) {
          EXPECT_LE(std::fabs(code - scaled), 0.5 + 1e-4) << "token " << t << " value " << 32 * b + i;
        } else {
          EXPECT_EQ(code, static_cast<int>(std::nearbyint(scaled))) << "token " << t << " value " << 32 * b + i;
        }
      }
    }
  }
}

struct Variant {
  DType type;
  Reduction reduction;
};

class MatvecIntDot : public ::testing::TestWithParam<Variant>, protected IntDotFixture {
 protected:
  void SetUp() override { make(GetParam().reduction); }
  void TearDown() override { kernels_.reset(); }
};

TEST_P(MatvecIntDot, MatchesTheReferenceAndEachTokenIsItsOneTokenResult) {
  const DType type = GetParam().type;
  ASSERT_TRUE(Kernels::supports_int_dot(type));
  std::mt19937 rng(static_cast<unsigned>(type) * 17u + 3u);
  const auto& t = traits(type);
  // Several blocks per row, so a row's invocations stride over chunks.
  const auto cols = static_cast<uint32_t>(t.block_elements) * (t.block_elements == 256 ? 6 : 22);
  const auto bytes = testing::quantized_rows(type, kRows, cols, rng);
  const auto values = testing::dequant_rows(type, bytes, kRows, cols);
  const Buffer w = gpu_->upload(bytes);
  constexpr uint32_t kMax = Kernels::kMatvecMaxTokens;
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(size_t{kMax} * cols);
  for (auto& v : x) v = dist(rng);

  std::vector<std::vector<float>> single(kMax);
  for (uint32_t tok = 0; tok < kMax; ++tok) {
    const std::vector<float> xt(x.begin() + std::ptrdiff_t{tok} * cols, x.begin() + std::ptrdiff_t{tok + 1} * cols);
    std::vector<uint8_t> qbytes;
    single[tok] = matvec(type, w, xt, cols, 1, &qbytes);
    const QuantizedToken q = unpack(qbytes, cols, 1)[0];
    for (uint32_t r = 0; r < kRows; ++r) {
      // The exact product of the weights with the device's 8-bit activations
      // (double sums), and the f32 product it approximates.
      double want = 0, mag = 0, exact = 0, quant_error = 0;
      for (uint32_t c = 0; c < cols; ++c) {
        const double wv = values[size_t{r} * cols + c];
        const double p = wv * q.d[c / 32] * q.codes[c];
        want += p;
        mag += std::fabs(p);
        exact += wv * xt[c];
        quant_error += std::fabs(wv) * q.d[c / 32] * 0.5;
      }
      ASSERT_NEAR(single[tok][r], want, 1e-5 * (1 + mag)) << t.name << " token " << tok << " row " << r;
      ASSERT_NEAR(single[tok][r], exact, quant_error * 1.01 + 1e-4 * (1 + mag)) << t.name << " row " << r;
    }
  }
  std::vector<uint32_t> counts = {2, 5, kMax};
  if (GetParam().reduction == Reduction::Subgroup) {
    counts.clear();
    for (uint32_t n = 2; n <= kMax; ++n) counts.push_back(n);
  }
  for (const uint32_t n : counts) {
    const std::vector<float> xn(x.begin(), x.begin() + std::ptrdiff_t{n} * cols);
    const auto y = matvec(type, w, xn, cols, n);
    for (uint32_t tok = 0; tok < n; ++tok) {
      ASSERT_EQ(std::memcmp(y.data() + size_t{tok} * kRows, single[tok].data(), 4 * kRows), 0)
          << t.name << ": token " << tok << " of " << n << " differs from its one-token product";
    }
  }
}

std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (DType type : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q4_K, DType::Q5_K,
                     DType::Q6_K, DType::Q2_K, DType::Q3_K, DType::IQ4_NL, DType::IQ4_XS, DType::MXFP4}) {
    out.push_back({type, Reduction::Subgroup});
    out.push_back({type, Reduction::SharedMemory});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(IntDotTypes, MatvecIntDot, ::testing::ValuesIn(variants()),
                         [](const ::testing::TestParamInfo<Variant>& pi) {
                           return std::string(traits(pi.param.type).name) +
                                  (pi.param.reduction == Reduction::Subgroup ? "_subgroup" : "_shared");
                         });

class MatmulIntDot : public ::testing::TestWithParam<DType>, protected IntDotFixture {
 protected:
  void SetUp() override { make(Reduction::Subgroup); }
  void TearDown() override { kernels_.reset(); }
};

TEST_P(MatmulIntDot, PromptTilesMatchTheDoubleSums) {
  const DType type = GetParam();
  ASSERT_TRUE(Kernels::supports_int_dot(type));
  std::mt19937 rng(static_cast<unsigned>(type) * 29u + 5u);
  const auto& t = traits(type);
  // 130 rows: two whole 64-row tiles and a partial one; several chunks per row
  // (an even number of 32-value blocks: MXFP4 pairs them).
  constexpr uint32_t rows = 130, kMaxTokens = 70;
  const auto cols = static_cast<uint32_t>(t.block_elements) * (t.block_elements == 256 ? 3 : 10);
  const auto bytes = testing::quantized_rows(type, rows, cols, rng);
  const auto values = testing::dequant_rows(type, bytes, rows, cols);
  const Buffer w = gpu_->upload(bytes);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(size_t{kMaxTokens} * cols);
  for (auto& v : x) v = dist(rng);
  std::vector<uint8_t> qbytes;
  {
    const Buffer bx = gpu_->upload(x);
    const Buffer bq = gpu_->buffer(Kernels::quantized_bytes(cols, kMaxTokens));
    run([&] { return kernels_->quantize_activations(*gpu_->seq, BufferView::whole(bx), BufferView::whole(bq), cols, kMaxTokens); });
    qbytes = gpu_->download<uint8_t>(bq, Kernels::quantized_bytes(cols, kMaxTokens));
  }
  const auto q = unpack(qbytes, cols, kMaxTokens);
  const Buffer bq = gpu_->upload(qbytes);
  // 9 tokens: a 16-token tile; 40: one partial 64-token tile; 70: a whole one and a partial one.
  for (const uint32_t n : {9u, 40u, kMaxTokens}) {
    const Buffer by = gpu_->buffer(4ull * rows * n);
    run([&] {
      return kernels_->matmul_int_dot(*gpu_->seq, type, BufferView::whole(w),
                                      BufferView{&bq, 0, Kernels::quantized_bytes(cols, n)}, BufferView::whole(by),
                                      rows, n, cols);
    });
    const auto y = gpu_->download<float>(by, size_t{rows} * n);
    for (uint32_t tok = 0; tok < n; ++tok) {
      for (uint32_t r = 0; r < rows; ++r) {
        double want = 0, mag = 0;
        for (uint32_t c = 0; c < cols; ++c) {
          const double p = double(values[size_t{r} * cols + c]) * q[tok].d[c / 32] * q[tok].codes[c];
          want += p;
          mag += std::fabs(p);
        }
        ASSERT_NEAR(y[size_t{tok} * rows + r], want, 1e-5 * (1 + mag))
            << t.name << ": " << n << " tokens, token " << tok << " row " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(IntDotTypes, MatmulIntDot,
                         ::testing::Values(DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                                           DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q2_K, DType::Q3_K,
                                           DType::IQ4_NL, DType::IQ4_XS, DType::MXFP4),
                         [](const ::testing::TestParamInfo<DType>& pi) { return std::string(traits(pi.param).name); });

TEST(VulkanMatvecIntDot, RefusesWhatItCannotCompute) {
  auto gpu = Gpu::create();
  ASSERT_TRUE(gpu);
  constexpr uint32_t cols = 256;
  Buffer w = gpu->buffer(*row_bytes(DType::Q4_K, cols) * kRows), x = gpu->buffer(4ull * cols * 9),
         xq = gpu->buffer(Kernels::quantized_bytes(cols, 9)), y = gpu->buffer(4ull * kRows * 9);
  ASSERT_TRUE(gpu->seq->begin().ok());
  auto& k = *gpu->kernels;
  // A format without integer codes (F16 stays on the plain path).
  auto st = k.matvec_int_dot(*gpu->seq, DType::F16, BufferView::whole(w), BufferView::whole(xq),
                             BufferView::whole(y), cols, kRows, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::Unsupported);
  EXPECT_NE(st.error().message.find("F16"), std::string::npos) << st.error().message;
  // Token counts outside 1..kMatvecMaxTokens.
  for (uint32_t n : {0u, Kernels::kMatvecMaxTokens + 1}) {
    st = k.matvec_int_dot(*gpu->seq, DType::Q4_K, BufferView::whole(w), BufferView::whole(xq), BufferView::whole(y),
                          cols, kRows, n);
    ASSERT_FALSE(st.ok()) << n << " tokens";
    EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument);
  }
  // Prompt tiles: a format without integer codes, a row that is not whole 32-value blocks.
  st = k.matmul_int_dot(*gpu->seq, DType::F16, BufferView::whole(w), BufferView::whole(xq), BufferView::whole(y),
                        kRows, 9, cols);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::Unsupported);
  st = k.matmul_int_dot(*gpu->seq, DType::Q8_0, BufferView::whole(w), BufferView::whole(xq), BufferView::whole(y),
                        kRows, 9, 48);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument);
  // Rows that are not whole 32-value blocks, and an 8-bit buffer too small.
  st = k.quantize_activations(*gpu->seq, BufferView::whole(x), BufferView::whole(xq), 48, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument);
  st = k.quantize_activations(*gpu->seq, BufferView::whole(x), BufferView{&xq, 0, 64}, cols, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("xq"), std::string::npos) << st.error().message;
  ASSERT_TRUE(gpu->seq->end().ok());
}

}  // namespace
}  // namespace hearth::vulkan
