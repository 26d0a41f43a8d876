// Evict with RoPE re-rotation: kept keys moved to new positions must equal
// keys computed there (layer 0, where a key depends on its own token only),
// and the logits after an evict must match a fresh prefill of the kept tokens
// at their new positions within the fixture tolerance
// (tests/data/FIXTURES-README.md: cosine >= 0.998, top-1 >= 85%).
#include <hearth/engine/kv/kv_rows.h>
#include <hearth/engine/runtime/conversation.h>
#include <hearth/engine/runtime/kv_shift.h>

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
