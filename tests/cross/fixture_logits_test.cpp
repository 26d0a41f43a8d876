// The tiny llama fixtures in every weight format the NEON levels cover
// (Q8_0, Q4_0, Q4_K_M, Q6_K), fed token by token (the decode path: one row
// dot per weight row) and as one batch, at every kernel level this CPU
// supports, against the reference engine's logits with the fixture
// tolerances (tests/data/FIXTURES-README.md).
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/model/model.h>

#include <numeric>
#include <string>
#include <vector>

#include "../engine/model/fixture_logits.h"

namespace hearth::model {
namespace {

using hearth::testing::FixtureCase;

const FixtureCase kCases[] = {
    hearth::testing::kFixtureCases[2],  // tiny-llama-q8_0
    hearth::testing::kFixtureCases[3],  // tiny-llama-q4_0
    hearth::testing::kFixtureCases[4],  // tiny-llama-q4_k_m
    hearth::testing::kFixtureCases[5],  // tiny-llama-q6_k
};

std::vector<float> run(const FixtureCase& c, quant::KernelLevel level, bool token_by_token) {
  auto model = Model::load(hearth::testing::data_path(std::string("models/") + c.model));
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  if (!model.ok()) return {};
  backend::CpuBackendOptions options;
  options.threads = 2;
  options.max_level = level;
  auto be = backend::make_cpu_backend(options);
  const auto ids = hearth::testing::read_ids(hearth::testing::data_path(std::string("models/") + c.tokens));
  auto cache = kv::KvCache::create(*be, (*model)->kv_config(static_cast<int64_t>(ids.size()), DType::F16));
  EXPECT_TRUE(cache.ok());
  if (!cache.ok()) return {};
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<float> all, logits;
  if (!token_by_token) {
    auto st = (*model)->forward(*be, **cache, Batch{ids, pos}, LogitsRows::All, all);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    return all;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    auto st = (*model)->forward(*be, **cache, Batch{std::span(ids).subspan(i, 1), std::span(pos).subspan(i, 1)},
                                LogitsRows::Last, logits);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

void check(quant::KernelLevel level, bool token_by_token) {
  for (const FixtureCase& c : kCases) {
    const auto ref = hearth::testing::read_f32(hearth::testing::data_path(std::string("models/") + c.model +
                                                                          ".logits.f32"));
    ASSERT_FALSE(ref.empty()) << c.model;
    const auto got = run(c, level, token_by_token);
    ASSERT_EQ(got.size(), ref.size()) << c.model;
    const auto a = hearth::testing::compare_logits(got, ref, 512);
    const std::string where = std::string(quant::to_string(level)) + (token_by_token ? "-dec" : "");
    hearth::testing::print_agreement(where.c_str(), c.model, a);
    EXPECT_GE(hearth::testing::checked_cosine(a, c), c.min_cosine) << c.model << " at " << where;
    EXPECT_GE(a.top1, c.min_top1) << c.model << " at " << where;
  }
}

class CrossFixture : public ::testing::TestWithParam<quant::KernelLevel> {
 protected:
  void SetUp() override {
    bool supported = false;
    for (auto l : quant::supported_levels(quant::detect_cpu_features())) supported |= l == GetParam();
    if (!supported) GTEST_SKIP() << "CPU lacks " << quant::to_string(GetParam());
  }
};

TEST_P(CrossFixture, DecodeMatchesReferenceLogits) { check(GetParam(), true); }
TEST_P(CrossFixture, BatchMatchesReferenceLogits) { check(GetParam(), false); }

// The levels of the architecture the program was built for (scalar first:
// the oracle the SIMD levels are judged next to).
#if defined(__aarch64__)
#define HEARTH_CROSS_LEVELS quant::KernelLevel::Scalar, quant::KernelLevel::Neon, quant::KernelLevel::NeonDotprod
#else
#define HEARTH_CROSS_LEVELS quant::KernelLevel::Scalar, quant::KernelLevel::Avx2
#endif

INSTANTIATE_TEST_SUITE_P(Levels, CrossFixture, ::testing::Values(HEARTH_CROSS_LEVELS), [](const auto& p) {
  std::string s(quant::to_string(p.param));
  for (auto& ch : s) ch = ch == '-' ? '_' : ch;
  return s;
});

}  // namespace
}  // namespace hearth::model
