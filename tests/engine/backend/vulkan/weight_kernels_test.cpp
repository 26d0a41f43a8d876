// matvec, matmul and embedding row fetch for every weight type against the
// scalar dequantization in reference_dequant.h, on random blocks.
#include <cmath>
#include <random>

#include "reference_dequant.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using testing::Gpu;

// Random weights of `type`: raw bytes for the device and the dequantized
// values [rows][cols] for the reference.
struct Weights {
  std::vector<uint8_t> bytes;
  std::vector<float> values;
};

enum class WeightSource { RandomBlocks, Quantized };

Weights make_weights(DType type, uint32_t rows, uint32_t cols, std::mt19937& rng,
                     WeightSource source = WeightSource::RandomBlocks) {
  Weights w;
  const size_t n = size_t{rows} * cols;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  switch (type) {
    case DType::F32: {
      w.values.resize(n);
      for (auto& v : w.values) v = dist(rng);
      w.bytes.resize(4 * n);
      std::memcpy(w.bytes.data(), w.values.data(), 4 * n);
      break;
    }
    case DType::F16:
    case DType::BF16: {
      w.values.resize(n);
      w.bytes.resize(2 * n);
      for (size_t i = 0; i < n; ++i) {
        const float f = dist(rng);
        uint16_t h;
        if (type == DType::F16) {
          h = testing::to_half(f);
          w.values[i] = testing::from_half(h);
        } else {
          uint32_t bits;
          std::memcpy(&bits, &f, 4);
          h = static_cast<uint16_t>(bits >> 16);  // truncation: any bit pattern is a valid input
          bits = uint32_t{h} << 16;
          std::memcpy(&w.values[i], &bits, 4);
        }
        std::memcpy(&w.bytes[2 * i], &h, 2);
      }
      break;
    }
    default:
      w.bytes = source == WeightSource::Quantized ? testing::quantized_rows(type, rows, cols, rng)
                                                  : testing::random_blocks(type, rows, cols, rng);
      w.values = testing::dequant_rows(type, w.bytes, rows, cols);
  }
  return w;
}

// Columns for a test shape: a few blocks (odd counts) of the type.
uint32_t test_cols(DType type, uint32_t blocks) {
  const auto& t = traits(type);
  return t.quantized ? static_cast<uint32_t>(t.block_elements) * blocks : 32 * blocks + 7;  // plain: odd length
}

class WeightKernels : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    gpu_ = Gpu::create();
    ASSERT_TRUE(gpu_);
  }
  std::unique_ptr<Gpu> gpu_;
  std::mt19937 rng_{static_cast<unsigned>(GetParam()) * 7919u + 1};
};

TEST_P(WeightKernels, MatvecMatchesReference) {
  const DType type = GetParam();
  const bool k_quant = traits(type).block_elements == 256;
  // Odd row count; for 32-value blocks enough columns that invocations stride.
  for (const uint32_t blocks : {3u, k_quant ? 9u : 67u}) {
    const uint32_t rows = 37, cols = test_cols(type, blocks);
    // Random bit patterns for the small shape, quantized floats for the larger.
    const Weights w = make_weights(type, rows, cols, rng_,
                                   blocks == 3 ? WeightSource::RandomBlocks : WeightSource::Quantized);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> x(cols);
    for (auto& v : x) v = dist(rng_);
    Buffer bw = gpu_->upload(w.bytes), bx = gpu_->upload(x), by = gpu_->buffer(4 * rows);
    gpu_->run([&](Kernels& k, CommandSequence& s) {
      return k.matvec(s, type, BufferView::whole(bw), BufferView::whole(bx), BufferView::whole(by), cols, rows);
    });
    const auto y = gpu_->download<float>(by, rows);
    for (uint32_t r = 0; r < rows; ++r) {
      double want = 0, mag = 0;
      for (uint32_t c = 0; c < cols; ++c) {
        want += double(w.values[size_t{r} * cols + c]) * x[c];
        mag += std::fabs(double(w.values[size_t{r} * cols + c]) * x[c]);
      }
      ASSERT_NEAR(y[r], want, 1e-5 + 1e-5 * mag) << traits(type).name << " row " << r << " cols " << cols;
    }
  }
}

TEST_P(WeightKernels, MatmulMatchesReference) {
  const DType type = GetParam();
  // Rows x tokens. The shader's tiles are 64 rows x 16, 32 or 64 tokens
  // (the smallest that holds the batch): 37 x 5 and 70 x 20 use the 16- and
  // 32-token tiles, partial on both axes; 37 x 33 one partial 64 x 64 tile;
  // 131 x 70 several tiles, the last ones partial.
  const std::pair<uint32_t, uint32_t> shapes[] = {{37, 5}, {70, 20}, {37, 33}, {131, 70}};
  for (const auto& [m, n] : shapes) {
    const uint32_t k = test_cols(type, 3);
    const Weights w = make_weights(type, m, k, rng_);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> x(size_t{n} * k);
    for (auto& v : x) v = dist(rng_);
    Buffer bw = gpu_->upload(w.bytes), bx = gpu_->upload(x), by = gpu_->buffer(4 * m * n);
    gpu_->run([&](Kernels& kr, CommandSequence& s) {
      return kr.matmul(s, type, BufferView::whole(bw), BufferView::whole(bx), BufferView::whole(by), m, n, k);
    });
    const auto y = gpu_->download<float>(by, size_t{m} * n);
    for (uint32_t t = 0; t < n; ++t) {
      for (uint32_t r = 0; r < m; ++r) {
        double want = 0, mag = 0;
        for (uint32_t c = 0; c < k; ++c) {
          want += double(w.values[size_t{r} * k + c]) * x[size_t{t} * k + c];
          mag += std::fabs(double(w.values[size_t{r} * k + c]) * x[size_t{t} * k + c]);
        }
        ASSERT_NEAR(y[size_t{t} * m + r], want, 1e-5 + 1e-5 * mag)
            << traits(type).name << " " << m << "x" << n << " token " << t << " row " << r;
      }
    }
  }
}

TEST_P(WeightKernels, GetRowsDequantizesSelectedRows) {
  const DType type = GetParam();
  const uint32_t rows = 7, cols = test_cols(type, 3);
  const Weights w = make_weights(type, rows, cols, rng_);
  const std::vector<int32_t> ids = {6, 0, 3, 3, 1};
  Buffer bw = gpu_->upload(w.bytes), bi = gpu_->upload(ids), bo = gpu_->buffer(4 * cols * ids.size());
  gpu_->run([&](Kernels& k, CommandSequence& s) {
    return k.get_rows(s, type, BufferView::whole(bw), BufferView::whole(bi), BufferView::whole(bo), cols,
                      static_cast<uint32_t>(ids.size()));
  });
  const auto out = gpu_->download<float>(bo, cols * ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    for (uint32_t c = 0; c < cols; ++c) {
      ASSERT_EQ(out[i * cols + c], w.values[size_t(ids[i]) * cols + c])
          << traits(type).name << " id " << ids[i] << " col " << c;
    }
  }
}

// A table bound in two pieces (as tables larger than one storage binding
// are): each dispatch fills only the ids of its piece, together all of them.
TEST_P(WeightKernels, GetRowsFromTableBoundInPieces) {
  const DType type = GetParam();
  const uint32_t cols = test_cols(type, 3);
  const uint64_t row = *row_bytes(type, cols);
  // The second piece must start at an offset the device accepts (lavapipe: 16 bytes).
  const uint32_t split = static_cast<uint32_t>(16 / std::gcd<uint64_t>(row, 16));
  const uint32_t rows = 2 * split;
  const Weights w = make_weights(type, rows, cols, rng_);
  const std::vector<int32_t> ids = {static_cast<int32_t>(rows - 1), 0, static_cast<int32_t>(split - 1),
                                    static_cast<int32_t>(split), 1, static_cast<int32_t>(rows - 2)};
  Buffer bw = gpu_->upload(w.bytes), bi = gpu_->upload(ids), bo = gpu_->buffer(4 * cols * ids.size());
  gpu_->run([&](Kernels& k, CommandSequence& s) -> Status {
    const BufferView table = BufferView::whole(bw);
    HEARTH_CHECK(k.get_rows(s, type, table.sub(0, split * row), BufferView::whole(bi), BufferView::whole(bo), cols,
                            static_cast<uint32_t>(ids.size()), 0, split));
    return k.get_rows(s, type, table.sub(split * row, (rows - split) * row), BufferView::whole(bi),
                      BufferView::whole(bo), cols, static_cast<uint32_t>(ids.size()), split, rows - split);
  });
  const auto out = gpu_->download<float>(bo, cols * ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    for (uint32_t c = 0; c < cols; ++c) {
      ASSERT_EQ(out[i * cols + c], w.values[size_t(ids[i]) * cols + c])
          << traits(type).name << " id " << ids[i] << " col " << c;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, WeightKernels,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0,
                                           DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q2_K, DType::Q3_K,
                                           DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS),
                         [](const ::testing::TestParamInfo<DType>& param_info) {
                           return std::string(traits(param_info.param).name);
                         });

}  // namespace
}  // namespace hearth::vulkan
