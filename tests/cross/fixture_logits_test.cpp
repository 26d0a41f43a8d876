// The tiny llama fixtures in the weight formats models ship in (F16, Q8_0,
// Q4_0, Q4_K_M, Q6_K), fed token by token (the decode path) and as one
// batch of 64 tokens (the prompt tiles), at every kernel level this CPU
// supports, against the reference engine's logits with the fixture
// tolerances (tests/data/FIXTURES-README.md).
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>

#include <string>
#include <vector>

#include "../engine/model/fixture_forward.h"
#include "../engine/model/fixture_logits.h"

namespace hearth::model {
namespace {

using hearth::testing::FixtureCase;
using hearth::testing::fixture_case;

const FixtureCase kCases[] = {
    fixture_case("tiny-llama-f16.gguf"),
    fixture_case("tiny-llama-q8_0.gguf"),
    fixture_case("tiny-llama-q4_0.gguf"),
    fixture_case("tiny-llama-q4_k_m.gguf"),
    fixture_case("tiny-llama-q6_k.gguf"),
};

std::vector<float> run(const FixtureCase& c, quant::KernelLevel level, bool token_by_token) {
  backend::CpuBackendOptions options;
  options.threads = 2;
  options.max_level = level;
  return hearth::testing::fixture_forward(
      c, options, token_by_token ? hearth::testing::Feed::TokenByToken : hearth::testing::Feed::OneBatch);
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
#define HEARTH_CROSS_LEVELS \
  quant::KernelLevel::Scalar, quant::KernelLevel::Neon, quant::KernelLevel::NeonDotprod, quant::KernelLevel::NeonI8mm
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
