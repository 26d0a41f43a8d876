// Forward pass against the reference engine's logits for every fixture model
// (tolerances from tests/data/FIXTURES-README.md), with an F16 KV cache as the
// reference used.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/model/model.h>

#include "fixture_forward.h"
#include "fixture_logits.h"

namespace hearth::model {
namespace {

using hearth::testing::compare_logits;
using hearth::testing::data_path;
using hearth::testing::fixture_case;
using hearth::testing::read_f32;

using Case = hearth::testing::FixtureCase;
constexpr const auto& kCases = hearth::testing::kFixtureCases;

using hearth::testing::Feed;

std::vector<float> run(const Case& c, Feed feed, backend::KernelChoice kernels, DType kv_type = DType::F16) {
  return hearth::testing::fixture_forward(c, backend::CpuBackendOptions{2, kernels}, feed, kv_type);
}

class Conformance : public ::testing::TestWithParam<Case> {};

void check(const Case& c, Feed feed, backend::KernelChoice kernels) {
  const auto ref = read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
  const auto got = run(c, feed, kernels);
  ASSERT_EQ(got.size(), ref.size());
  const auto a = compare_logits(got, ref, 512);
  hearth::testing::print_agreement(feed == Feed::OneBatch ? "cpu" : "cpu-dec", c.model, a);
  EXPECT_GE(hearth::testing::checked_cosine(a, c), c.min_cosine) << c.model;
  EXPECT_GE(a.top1, c.min_top1) << c.model;
}

TEST_P(Conformance, PrefillMatchesReferenceLogits) { check(GetParam(), Feed::OneBatch, backend::KernelChoice::Fastest); }
TEST_P(Conformance, DecodeMatchesReferenceLogits) { check(GetParam(), Feed::TokenByToken, backend::KernelChoice::Fastest); }
TEST_P(Conformance, ReferenceKernelsMatchReferenceLogits) {
  check(GetParam(), Feed::OneBatch, backend::KernelChoice::Reference);
}

// A Q8_0 KV cache quantizes K and V like a Q8_0 weight; on the F16 and F32
// models it must stay within the quantized-weights tolerance.
TEST(ConformanceKv, Q8_0CacheStaysWithinTheQuantizedTolerance) {
  for (const Case& c : {fixture_case("tiny-llama-f32.gguf"), fixture_case("tiny-llama-f16.gguf"),
                        fixture_case("tiny-qwen2-f16.gguf")}) {
    const auto ref = read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
    const auto got = run(c, Feed::TokenByToken, backend::KernelChoice::Fastest, DType::Q8_0);
    ASSERT_EQ(got.size(), ref.size());
    const auto a = compare_logits(got, ref, 512);
    EXPECT_GE(a.min_cosine, hearth::testing::kQuantCosine) << c.model;
    EXPECT_GE(a.top1, 0.85) << c.model;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& param_info) {
  std::string name = param_info.param.model;
  name = name.substr(0, name.size() - 5);
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Conformance, ::testing::ValuesIn(kCases), case_name);
INSTANTIATE_TEST_SUITE_P(MoeFixtures, Conformance, ::testing::ValuesIn(hearth::testing::kMoeFixtureCases), case_name);

}  // namespace
}  // namespace hearth::model
