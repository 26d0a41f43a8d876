// Evict with RoPE re-rotation: kept keys moved to new positions must equal
// keys computed there (layer 0, where a key depends on its own token only),
// and the logits after an evict must match a fresh prefill of the kept tokens
// at their new positions within the fixture tolerance
// (tests/data/FIXTURES-README.md: cosine >= 0.998, top-1 >= 85%).
#include <hearth/engine/kv/kv_rows.h>
#include <hearth/engine/runtime/conversation.h>
#include <hearth/engine/runtime/kv_shift.h>

#include <cmath>
#include <cstring>
#include <iostream>

#include "runtime_fixture.h"

namespace hearth::runtime {
namespace {

using namespace testing;
constexpr int64_t kCtx = 256;

class KvShift : public ModelFixture {
 protected:
  void SetUp() override { load("models/tiny-llama-f32.gguf"); }
};

// Layer-0 K rows of positions [begin, end) as floats, head-major.
std::vector<float> layer0_keys(const kv::KvCache& cache, int64_t begin, int64_t end) {
  const backend::KvView v = cache.layer_view(0);
  std::vector<float> out;
  for (int64_t h = 0; h < v.n_head_kv; ++h) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t block = v.block_table[p / v.block_tokens];
      const uint8_t* row = v.k + ((block * v.n_head_kv + h) * v.block_tokens + p % v.block_tokens) * v.row_bytes;
      const size_t at = out.size();
      out.resize(at + static_cast<size_t>(v.head_dim));
      std::memcpy(out.data() + at, row, static_cast<size_t>(v.head_dim) * 4);
    }
  }
  return out;
}

TEST_F(KvShift, MovedKeysEqualKeysComputedAtTheNewPositions) {
  const auto dropped = synthetic_tokens(37, 11, n_vocab());
  const auto kept = synthetic_tokens(45, 12, n_vocab());
  auto s = session(kCtx);
  ASSERT_TRUE(s->prefill(concat(dropped, kept)).ok());
  ASSERT_TRUE(relocate_positions(*backend_, s->cache(), model_->hparams(), 37, 0, 45).ok());

  auto fresh = session(kCtx);
  ASSERT_TRUE(fresh->prefill(kept).ok());
  EXPECT_LT(max_rel_diff(layer0_keys(s->cache(), 0, 45), layer0_keys(fresh->cache(), 0, 45)), 1e-5);

  // Shifting up and back down returns the same keys.
  const auto before = layer0_keys(fresh->cache(), 0, 45);
  ASSERT_TRUE(shift_keys(*backend_, fresh->cache(), model_->hparams(), 0, 45, 100).ok());
  ASSERT_TRUE(shift_keys(*backend_, fresh->cache(), model_->hparams(), 0, 45, -100).ok());
  EXPECT_LT(max_rel_diff(layer0_keys(fresh->cache(), 0, 45), before), 1e-5);
}

// The same through the conversation's evict: with the system prompt pinned,
// the kept turn moves from behind the dropped one to right after the system
// prompt, and its layer-0 keys equal those a fresh prefill computes at the new
// positions (F32 cache, F32 tolerance). Deeper layers legitimately differ:
// the kept tokens attended to the evicted ones.
TEST_F(KvShift, EvictReRotatesTheKeptKeysToTheirNewPositions) {
  const auto system = synthetic_tokens(21, 31, n_vocab());
  const auto old_turn = synthetic_tokens(50, 32, n_vocab());
  const auto kept_turn = synthetic_tokens(60, 33, n_vocab());
  const int64_t ctx = 21 + 50 + 60 + 10;
  auto s = session(ctx);
  ConversationConfig config;
  config.policy = OverflowPolicy::Evict;
  Conversation conv(*s, *model_, *backend_, config, nullptr);
  ASSERT_TRUE(conv.set_system(system).ok());
  for (const auto* turn : {&old_turn, &kept_turn}) {
    conv.begin_turn();
    ASSERT_TRUE(s->prefill(*turn).ok());
    conv.end_turn();
  }
  auto room = conv.make_room(30);
  ASSERT_TRUE(room.ok()) << room.error().message;
  ASSERT_TRUE(*room);
  const auto events = conv.take_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].action, OverflowAction::Evicted);
  const auto kept = concat(system, kept_turn);
  ASSERT_EQ(s->context(), kept);

  auto fresh = session(ctx);
  ASSERT_TRUE(fresh->prefill(kept).ok());
  const auto n = static_cast<int64_t>(kept.size());
  // The pinned system prompt never moved; the kept turn moved by 50 positions.
  EXPECT_EQ(layer0_keys(s->cache(), 0, 21), layer0_keys(fresh->cache(), 0, 21));
  EXPECT_LT(max_rel_diff(layer0_keys(s->cache(), 21, n), layer0_keys(fresh->cache(), 21, n)), 1e-5);
}

// Gemma 3 and SmolLM3 rotate some layers differently: shifting the cache by
// `delta` must rotate each layer's keys as the fixture's documented RoPE of
// that layer does (FIXTURES-README.md, models2; bases from the files'
// metadata), here with a naive scalar rotation: Gemma 3's 5 local layers NeoX
// with base 1e4 unscaled, its global layer base 1e6 with linear factor 8;
// SmolLM3 adjacent pairs with base 2e6, and layer 3 (no RoPE) left as is.
struct LayerRope {
  bool none = false;
  bool neox = false;
  double base = 10000.0, scale = 1.0;
};

LayerRope documented_rope(const std::string& model, int64_t layer) {
  if (model.find("gemma3") != std::string::npos) return {false, true, layer < 5 ? 1e4 : 1e6, layer < 5 ? 1.0 : 1.0 / 8};
  return {layer == 3, false, 2e6, 1.0};
}

std::vector<float> rotate(std::vector<float> rows, int64_t head_dim, int32_t delta, const LayerRope& r) {
  if (r.none) return rows;
  for (size_t at = 0; at < rows.size(); at += static_cast<size_t>(head_dim)) {
    for (int64_t i = 0; i < head_dim / 2; ++i) {
      const double theta = delta * r.scale * std::pow(r.base, -2.0 * double(i) / double(head_dim));
      const size_t a = at + static_cast<size_t>(r.neox ? i : 2 * i);
      const size_t b = at + static_cast<size_t>(r.neox ? i + head_dim / 2 : 2 * i + 1);
      const double x0 = rows[a], x1 = rows[b];
      rows[a] = static_cast<float>(x0 * std::cos(theta) - x1 * std::sin(theta));
      rows[b] = static_cast<float>(x0 * std::sin(theta) + x1 * std::cos(theta));
    }
  }
  return rows;
}

// K rows of one layer, positions [begin, begin + n), as floats.
std::vector<float> layer_keys(const kv::KvCache& cache, int64_t layer, int64_t begin, int64_t n) {
  const backend::KvView v = cache.layer_view(layer);
  std::vector<float> out;
  for (int64_t h = 0; h < v.n_head_kv; ++h) {
    for (int64_t p = begin; p < begin + n; ++p) {
      const int64_t block = v.block_table[p / v.block_tokens];
      const uint8_t* row = v.k + ((block * v.n_head_kv + h) * v.block_tokens + p % v.block_tokens) * v.row_bytes;
      const size_t at = out.size();
      out.resize(at + static_cast<size_t>(v.head_dim));
      std::memcpy(out.data() + at, row, static_cast<size_t>(v.head_dim) * 4);
    }
  }
  return out;
}

double rel_l2(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += double(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

class KvShiftPerLayerRope : public ModelFixture, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override { load(GetParam()); }
};

TEST_P(KvShiftPerLayerRope, EachLayerRotatesWithItsOwnRope) {
  constexpr int64_t kTokens = 30;
  constexpr int32_t kDelta = 40;
  auto s = session(kCtx);
  ASSERT_TRUE(s->prefill(synthetic_tokens(kTokens, 41, n_vocab())).ok());
  const int64_t n_layer = model_->hparams().n_layer, head_dim = model_->hparams().head_dim;
  std::vector<std::vector<float>> before;
  for (int64_t l = 0; l < n_layer; ++l) before.push_back(layer_keys(s->cache(), l, 0, kTokens));
  ASSERT_TRUE(shift_keys(*backend_, s->cache(), model_->hparams(), 0, kTokens, kDelta).ok());
  for (int64_t l = 0; l < n_layer; ++l) {
    const auto want = rotate(before[static_cast<size_t>(l)], head_dim, kDelta, documented_rope(GetParam(), l));
    EXPECT_LT(rel_l2(layer_keys(s->cache(), l, 0, kTokens), want), 1e-5) << "layer " << l;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, KvShiftPerLayerRope,
                         ::testing::Values("models/tiny-gemma3-f32.gguf", "models/tiny-smollm3-f32.gguf"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param).find("gemma3") != std::string::npos ? "gemma3"
                                                                                                     : "smollm3";
                         });

// Evicting is an approximation by design: the kept turns' upper-layer keys
// and values were computed while the dropped turn was visible. The fixture
// tolerance bounds that on natural text: stories260K's own greedy story.
class KvShiftStories : public ModelFixture {
 protected:
  void SetUp() override { load("models/stories260K.gguf"); }
};

TEST_F(KvShiftStories, LogitsAfterEvictMatchAFreshPrefillOfTheKeptTokens) {
  const auto story = concat(hearth::testing::read_ids(data_path("models/stories260K.prompt-tokens.txt")),
                            hearth::testing::read_ids(data_path("models/stories260K.gguf.greedy.txt")));
  ASSERT_GE(story.size(), 200u);
  const auto slice = [&](size_t a, size_t b) { return std::vector<int32_t>(story.begin() + a, story.begin() + b); };
  const auto system = slice(0, 20);
  const auto old_turn = slice(20, 60);
  const auto new_turn = slice(60, 140);
  const auto next = slice(140, 170);
  const int64_t ctx = 140 + 8;  // everything up to the new turn fits, the next tokens do not

  auto s = session(ctx, DType::F16);
  ConversationConfig config;
  config.policy = OverflowPolicy::Evict;
  Conversation conv(*s, *model_, *backend_, config, nullptr);
  ASSERT_TRUE(conv.set_system(system).ok());
  for (const auto* turn : {&old_turn, &new_turn}) {
    conv.begin_turn();
    ASSERT_TRUE(s->prefill(*turn).ok());
    conv.end_turn();
  }
  auto room = conv.make_room(static_cast<int64_t>(next.size()));
  ASSERT_TRUE(room.ok()) << room.error().message;
  ASSERT_TRUE(*room);
  const auto events = conv.take_events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].action, OverflowAction::Evicted);
  EXPECT_EQ(events[0].turn_ids, std::vector<int64_t>{1});  // the old turn, whole
  EXPECT_EQ(events[0].tokens_freed, static_cast<int64_t>(old_turn.size()));
  const auto kept = concat(system, new_turn);
  ASSERT_EQ(s->context(), kept);

  auto fresh = session(ctx, DType::F16);
  ASSERT_TRUE(fresh->prefill(kept).ok());
  std::vector<float> got, ref;
  for (int32_t t : next) {
    ASSERT_TRUE(s->decode(t).ok());
    ASSERT_TRUE(fresh->decode(t).ok());
    got.insert(got.end(), s->last_logits().begin(), s->last_logits().end());
    ref.insert(ref.end(), fresh->last_logits().begin(), fresh->last_logits().end());
  }
  const auto agreement = hearth::testing::compare_logits(got, ref, static_cast<size_t>(n_vocab()));
  EXPECT_GE(agreement.min_cosine, 0.998);
  EXPECT_GE(agreement.top1, 0.85);
  std::cout << "evict vs fresh prefill: min cosine " << agreement.min_cosine << ", top-1 " << agreement.top1 << "\n";
}

}  // namespace
}  // namespace hearth::runtime
