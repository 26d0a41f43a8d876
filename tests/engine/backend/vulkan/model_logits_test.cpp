// The Vulkan backend runs the real model graphs: every fixture model's logits
// against the reference engine's (tolerances from tests/data/FIXTURES-README.md),
// as one prefill batch (tiled matmul, batched attention) and token by token
// (matvec, decode attention, a recording reused between tokens); and the
// quantized models again with the integer-dot matvec path forced, token by
// token and in 5-token passes (the multi-token products of a verify pass).
#include <gtest/gtest.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/model/model.h>

#include <algorithm>
#include <numeric>

#include "../../model/fixture_logits.h"
#include "vulkan_test_env.h"

namespace hearth::vulkan {
namespace {

using hearth::testing::compare_logits;
using hearth::testing::data_path;
using hearth::testing::read_f32;
using hearth::testing::read_ids;

using Case = hearth::testing::FixtureCase;
constexpr const auto& kCases = hearth::testing::kFixtureCases;

enum class Feed { OneBatch, TokenByToken, FiveTokenPasses };

class VulkanModelLogits : public ::testing::TestWithParam<Case> {};

// Cosine and top-1 floors a run must reach.
struct Tolerance {
  double min_cosine;
  double min_top1;
};

// Forced pipeline choices: the matvec path, and attention split into slices
// of this many positions (0 = the device default).
struct Paths {
  MatvecPath matvec = MatvecPath::Auto;
  uint32_t attention_split = 0;
};

void check(const Case& c, Feed feed, DType kv_type, Tolerance tol, Paths paths = {}) {
  VulkanConfig config = testing::test_config();
  config.matvec_path = paths.matvec;
  if (paths.attention_split > 0) config.attention_split_positions = paths.attention_split;
  const MatvecPath path = paths.matvec;
  auto be = VulkanBackend::create(config);
  ASSERT_TRUE(be.ok()) << be.error().message;
  const uint64_t used_start = (*be)->stats().used_bytes;
  {
    auto model = model::Model::load(data_path(std::string("models/") + c.model));
    ASSERT_TRUE(model.ok()) << model.error().message;
    const auto ids = read_ids(data_path(std::string("models/") + c.tokens));
    auto cache = kv::KvCache::create(**be, (*model)->kv_config(static_cast<int64_t>(ids.size()), kv_type));
    ASSERT_TRUE(cache.ok()) << cache.error().message;
    std::vector<int32_t> pos(ids.size());
    std::iota(pos.begin(), pos.end(), 0);
    std::vector<float> all, logits;
    if (feed == Feed::OneBatch) {
      auto st = (*model)->forward(**be, **cache, model::Batch{ids, pos}, model::LogitsRows::All, all);
      ASSERT_TRUE(st.ok()) << st.error().message;
    } else if (feed == Feed::FiveTokenPasses) {
      for (size_t i = 0; i < ids.size(); i += 5) {
        const size_t n = std::min<size_t>(5, ids.size() - i);
        auto st = (*model)->forward(**be, **cache, model::Batch{std::span(ids).subspan(i, n), std::span(pos).subspan(i, n)},
                                    model::LogitsRows::All, logits);
        ASSERT_TRUE(st.ok()) << st.error().message;
        all.insert(all.end(), logits.begin(), logits.end());
      }
    } else {
      for (size_t i = 0; i < ids.size(); ++i) {
        auto st = (*model)->forward(**be, **cache, model::Batch{std::span(ids).subspan(i, 1), std::span(pos).subspan(i, 1)},
                                    model::LogitsRows::Last, logits);
        ASSERT_TRUE(st.ok()) << st.error().message;
        all.insert(all.end(), logits.begin(), logits.end());
      }
      // Same graph shape every step: recorded once, resubmitted after.
      EXPECT_EQ((*be)->stats().recordings, 1u);
      EXPECT_EQ((*be)->stats().reuses, ids.size() - 1);
    }
    const auto ref = read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
    ASSERT_EQ(all.size(), ref.size());
    const auto a = compare_logits(all, ref, ref.size() / ids.size());
    const char* label = feed == Feed::OneBatch ? "vk" : feed == Feed::TokenByToken ? "vk-dec" : "vk-5tok";
    const std::string where = std::string(label) + (path == MatvecPath::IntegerDot ? "-intdot" : "") +
                              (paths.attention_split > 0 ? "-split" : "");
    hearth::testing::print_agreement(where.c_str(), c.model, a);
    EXPECT_GE(hearth::testing::checked_cosine(a, c), tol.min_cosine) << c.model << " " << traits(kv_type).name << " KV";
    EXPECT_GE(a.top1, tol.min_top1) << c.model << " " << traits(kv_type).name << " KV";
    EXPECT_GT((*be)->stats().weight_bytes, 0u);
    // A forced split really ran: its partials live in the kernel scratch.
    if (paths.attention_split > 0) {
      EXPECT_GT((*be)->stats().kernel_scratch_bytes, 0u) << c.model;
    }
    if (path == MatvecPath::IntegerDot) {
      // The path really ran: products read 8-bit activations.
      EXPECT_EQ((*be)->stats().matvec_path, MatvecPath::IntegerDot);
      EXPECT_GT((*be)->stats().kernel_scratch_bytes, 0u) << c.model;
      if (feed == Feed::OneBatch) {
        // A prompt's 8-bit inputs share the scratch layer after layer: it
        // holds about the widest product input at once (the buffer grows
        // by half again), not one input per product of the graph.
        const auto& hp = (*model)->hparams();
        const int64_t widest = std::max({hp.n_embd, hp.n_ff, hp.n_head * hp.head_dim, hp.n_ff_exp});
        const int64_t rows = static_cast<int64_t>(ids.size()) * std::max<int64_t>(1, hp.n_expert_used);
        EXPECT_LE((*be)->stats().kernel_scratch_bytes,
                  3 * Kernels::quantized_bytes(static_cast<uint32_t>(widest), static_cast<uint32_t>(rows)))
            << c.model;
      }
    }
  }
  // Unloading (weights released, cache destroyed) returns the device memory;
  // the backend's own scratch (activations, kernel scratch, inputs and
  // output) stays for reuse. Counted in live allocations, not in memory
  // blocks: how many blocks a device needs depends on its memory types (one
  // on lavapipe, separate device-local, upload and readback ones on a
  // discrete GPU), and the allocator frees a block once it is empty.
  (*be)->release_weights();
  const auto after = (*be)->stats();
  EXPECT_EQ(after.weight_bytes, 0u);
  EXPECT_LE(after.used_bytes,
            used_start + after.activation_bytes + after.kernel_scratch_bytes + after.staging_bytes + (256ull << 10))
      << "live " << after.used_bytes << " at start " << used_start << " activations " << after.activation_bytes
      << " kernel scratch " << after.kernel_scratch_bytes << " staging " << after.staging_bytes;
}

TEST_P(VulkanModelLogits, OneBatch) {
  check(GetParam(), Feed::OneBatch, DType::F16, {GetParam().min_cosine, GetParam().min_top1});
}
TEST_P(VulkanModelLogits, TokenByToken) {
  check(GetParam(), Feed::TokenByToken, DType::F16, {GetParam().min_cosine, GetParam().min_top1});
}

// Mirrors the CPU's Q8_0-cache conformance: on the F32 and F16 models a Q8_0
// KV cache must stay within the quantized-weights tolerance, decoding token
// by token and as one prefill batch.
TEST(VulkanModelLogitsKv, Q8_0CacheStaysWithinTheQuantizedTolerance) {
  for (const Case& c : {kCases[0], kCases[1], kCases[6]}) {
    check(c, Feed::TokenByToken, DType::Q8_0, {hearth::testing::kQuantCosine, 0.85});
    check(c, Feed::OneBatch, DType::Q8_0, {hearth::testing::kQuantCosine, 0.85});
  }
}

// The fixtures with quantized matrices: those the integer-dot path changes.
std::vector<Case> quantized_cases() {
  std::vector<Case> out;
  for (const Case& c : kCases) {
    if (c.min_cosine == hearth::testing::kQuantCosine) out.push_back(c);
  }
  for (const Case& c : hearth::testing::kMoeFixtureCases) {
    if (c.min_cosine == hearth::testing::kQuantCosine) out.push_back(c);
  }
  return out;
}

class VulkanIntDotLogits : public ::testing::TestWithParam<Case> {};

TEST_P(VulkanIntDotLogits, TokenByToken) {
  check(GetParam(), Feed::TokenByToken, DType::F16, {GetParam().min_cosine, GetParam().min_top1},
        {MatvecPath::IntegerDot});
}
TEST_P(VulkanIntDotLogits, FiveTokenPasses) {
  check(GetParam(), Feed::FiveTokenPasses, DType::F16, {GetParam().min_cosine, GetParam().min_top1},
        {MatvecPath::IntegerDot});
}
// The whole prompt in one pass: the integer-dot prompt tiles (matmul.comp).
TEST_P(VulkanIntDotLogits, OneBatch) {
  check(GetParam(), Feed::OneBatch, DType::F16, {GetParam().min_cosine, GetParam().min_top1},
        {MatvecPath::IntegerDot});
}

// Attention split into slices of 8 positions (flash decoding; lavapipe
// never splits by default), token by token and in 5-token passes, with the
// F16 and the Q8_0 cache, on every fixture (sliding windows and sinks included).
TEST_P(VulkanModelLogits, SplitAttentionTokenByToken) {
  check(GetParam(), Feed::TokenByToken, DType::F16, {GetParam().min_cosine, GetParam().min_top1},
        {MatvecPath::Auto, 8});
}
TEST_P(VulkanModelLogits, SplitAttentionFiveTokenPasses) {
  check(GetParam(), Feed::FiveTokenPasses, DType::F16, {GetParam().min_cosine, GetParam().min_top1},
        {MatvecPath::Auto, 8});
}
TEST(VulkanModelLogitsKv, SplitAttentionOverTheQ8_0Cache) {
  for (const Case& c : {kCases[0], kCases[1], kCases[6]}) {
    check(c, Feed::TokenByToken, DType::Q8_0, {hearth::testing::kQuantCosine, 0.85}, {MatvecPath::Auto, 8});
  }
}

INSTANTIATE_TEST_SUITE_P(QuantizedFixtures, VulkanIntDotLogits, ::testing::ValuesIn(quantized_cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name = param_info.param.model;
                           for (auto& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

INSTANTIATE_TEST_SUITE_P(Fixtures, VulkanModelLogits, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name = param_info.param.model;
                           for (auto& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });
INSTANTIATE_TEST_SUITE_P(MoeFixtures, VulkanModelLogits, ::testing::ValuesIn(hearth::testing::kMoeFixtureCases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name = param_info.param.model;
                           for (auto& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace hearth::vulkan
