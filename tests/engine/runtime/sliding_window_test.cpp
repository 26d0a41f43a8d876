// Sliding-window layers keep only window + one batch of positions (a ring of
// blocks) on the CPU backend. Checked against a full-size cache on a tiny
// Gemma 2 model (window 24 on the even layers): logits over many windows,
// rewinds that the ring can and cannot serve, a 200-turn chat under evict and
// summarize within the sized budget, and the sizes against a hand computation.
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/runtime/conversation.h>
#include <hearth/engine/tools/model_info.h>

#include <map>
#include <numeric>

#include "runtime_fixture.h"
#include "windowed_model.h"

namespace hearth::runtime {
namespace {

using namespace testing;

constexpr int64_t kCtx = 512;
constexpr int32_t kBatch = 16;
constexpr int32_t kWindow = 24;

class SlidingWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = write_windowed_model(WindowedModelSpec{}, "gemma2");
    path_ = file_.path();
    auto m = model::Model::load(path_);
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = std::move(*m);
    backend_ = backend::make_cpu_backend({1});
  }
  std::unique_ptr<Session> session(int64_t n_ctx = kCtx) {
    auto s = Session::create(*model_, *backend_, SessionConfig{n_ctx, DType::F32, kBatch});
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(*s) : nullptr;
  }
  int32_t n_vocab() const { return static_cast<int32_t>(model_->hparams().n_vocab); }

  // Last-token logits of `tokens` through a full-size cache (every layer
  // holds the whole context), fed in batches of kBatch: the reference.
  std::vector<float> full_cache_logits(const std::vector<int32_t>& tokens) {
    auto be = backend::make_cpu_backend({1});
    auto cache = kv::KvCache::create(*be, model_->kv_config(kCtx, DType::F32));
    EXPECT_TRUE(cache.ok());
    EXPECT_FALSE((*cache)->has_rings());
    std::vector<float> logits;
    for (size_t start = 0; start < tokens.size(); start += kBatch) {
      const size_t n = std::min(tokens.size() - start, size_t{kBatch});
      std::vector<int32_t> ids(tokens.begin() + static_cast<std::ptrdiff_t>(start),
                               tokens.begin() + static_cast<std::ptrdiff_t>(start + n));
      std::vector<int32_t> pos(n);
      std::iota(pos.begin(), pos.end(), static_cast<int32_t>(start));
      EXPECT_TRUE(model_->forward(*be, **cache, model::Batch{ids, pos}, model::LogitsRows::Last, logits).ok());
    }
    return logits;
  }

  WindowedModelFile file_;
  std::string path_;
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<backend::Backend> backend_;
};

// Hand computation: a ring must hold window + batch - 1 = 39 live positions,
// which touch at most ceil((39 + 31) / 32) = 3 blocks of 32: 96 positions.
TEST_F(SlidingWindow, WindowedLayersAreRingsOfWindowPlusABatch) {
  auto s = session();
  const kv::KvCache& cache = s->cache();
  ASSERT_TRUE(cache.has_rings());
  EXPECT_EQ(cache.layer_capacity(0), 96);
  EXPECT_EQ(cache.layer_capacity(1), kCtx);
  EXPECT_EQ(cache.layer_capacity(2), 96);
  EXPECT_EQ(cache.layer_capacity(3), kCtx);
  EXPECT_EQ(cache.capacity(), kCtx);
  // head_dim 32, one KV head, F32: 128 bytes a row, K and V.
  const uint64_t want = 2 * 128 * (96 + kCtx + 96 + kCtx);
  EXPECT_EQ(cache.bytes(), want);
  EXPECT_EQ(backend_->memory_use().kv_bytes, want);
  auto estimate = kv::estimate_memory(model_->memory_dims(), 0, kCtx, DType::F32, kBatch);
  ASSERT_TRUE(estimate.ok()) << estimate.error().message;
  EXPECT_EQ(estimate->kv_bytes, want);

  // `hearth-cli info` reads the windows from the file's metadata, as the loader does.
  auto file = gguf::GgufFile::open(path_);
  ASSERT_TRUE(file.ok());
  auto summary = tools::summarize_model(*file);
  ASSERT_TRUE(summary.ok()) << summary.error().message;
  EXPECT_EQ(summary->dims.layer_windows, (std::vector<int32_t>{kWindow, 0, kWindow, 0}));
  EXPECT_EQ(summary->dims.layer_windows, model_->layer_windows());
}

TEST_F(SlidingWindow, LogitsOverManyWindowsEqualAFullSizeCache) {
  auto s = session();
  const auto tokens = synthetic_tokens(420, 5, n_vocab());
  std::vector<int32_t> seen;
  // Prompts of uneven lengths (several batches, partial blocks), then decode.
  size_t at = 0;
  for (size_t len : {37u, 5u, 90u, 1u, 64u, 33u}) {
    const std::vector<int32_t> part(tokens.begin() + static_cast<std::ptrdiff_t>(at),
                                    tokens.begin() + static_cast<std::ptrdiff_t>(at + len));
    ASSERT_TRUE(s->prefill(part).ok());
    seen.insert(seen.end(), part.begin(), part.end());
    at += len;
    EXPECT_LT(max_rel_diff(s->last_logits(), full_cache_logits(seen)), 1e-5) << seen.size() << " tokens";
  }
  for (; at < tokens.size(); ++at) {
    ASSERT_TRUE(s->decode(tokens[at]).ok());
    seen.push_back(tokens[at]);
    if (at % 37 == 0 || at + 1 == tokens.size()) {
      EXPECT_LT(max_rel_diff(s->last_logits(), full_cache_logits(seen)), 1e-5) << seen.size() << " tokens";
    }
  }
  EXPECT_EQ(s->reprefills(), 0);
}

// A short rewind stays inside the ring and continues from it; a long one
// needs keys the ring has overwritten, so the session prefills again. Both
// continue with the logits of a full-size cache.
TEST_F(SlidingWindow, RewindsContinueExactlyPrefillingAgainWhenTheRingLostTheWindow) {
  auto s = session();
  const auto tokens = synthetic_tokens(300, 9, n_vocab());
  const auto more = synthetic_tokens(20, 10, n_vocab());
  ASSERT_TRUE(s->prefill(tokens).ok());

  ASSERT_TRUE(s->truncate(290).ok());
  EXPECT_EQ(s->reprefills(), 0);
  ASSERT_TRUE(s->prefill(more).ok());
  auto want = concat(std::vector<int32_t>(tokens.begin(), tokens.begin() + 290), more);
  EXPECT_EQ(s->context(), want);
  EXPECT_LT(max_rel_diff(s->last_logits(), full_cache_logits(want)), 1e-5);

  ASSERT_TRUE(s->truncate(100).ok());
  EXPECT_EQ(s->reprefills(), 1);
  ASSERT_TRUE(s->prefill(more).ok());
  want = concat(std::vector<int32_t>(tokens.begin(), tokens.begin() + 100), more);
  EXPECT_EQ(s->context(), want);
  EXPECT_LT(max_rel_diff(s->last_logits(), full_cache_logits(want)), 1e-5);

  // Rows copied in from outside (a prefix cache) are not trusted in a ring.
  ASSERT_TRUE(s->adopt_context(std::vector<int32_t>(want.begin(), want.begin() + 110)).ok());
  EXPECT_EQ(s->reprefills(), 1);  // the ring still held it
  s->cache().invalidate_rings();
  ASSERT_TRUE(s->adopt_context(std::vector<int32_t>(want.begin(), want.begin() + 110)).ok());
  EXPECT_EQ(s->reprefills(), 2);
  ASSERT_TRUE(s->prefill(more).ok());
  want = concat(std::vector<int32_t>(want.begin(), want.begin() + 110), more);
  EXPECT_LT(max_rel_diff(s->last_logits(), full_cache_logits(want)), 1e-5);
}

TEST_F(SlidingWindow, ForwardRefusesABatchLongerThanTheRingWasSizedFor) {
  auto s = session();
  const auto ids = synthetic_tokens(kBatch + 1, 3, n_vocab());
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<float> logits;
  auto st = model_->forward(*backend_, s->cache(), model::Batch{ids, pos}, model::LogitsRows::Last, logits);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("sliding-window"), std::string::npos) << st.error().message;
}

class WindowedChat : public SlidingWindow, public ::testing::WithParamInterface<OverflowPolicy> {};

// The 200-turn chat of conversation_test.cpp on the windowed model: the KV
// memory the backend counts is the windowed estimate (below a full-size
// cache) at every turn, nothing errors, the system prompt stays first.
TEST_P(WindowedChat, TwoHundredTurnsStayWithinTheWindowedBudget) {
  constexpr int64_t kChatCtx = 160;
  constexpr int32_t kReply = 10;
  auto s = session(kChatCtx);
  auto estimate = kv::estimate_memory(model_->memory_dims(), 0, kChatCtx, DType::F32, kBatch);
  ASSERT_TRUE(estimate.ok());
  auto full = kv::kv_cache_bytes(model_->hparams().n_layer, model_->hparams().n_head_kv, model_->hparams().head_dim,
                                 kChatCtx, DType::F32);
  ASSERT_TRUE(full.ok());
  EXPECT_LT(estimate->kv_bytes, *full);

  ConversationConfig config;
  config.policy = GetParam();
  config.summary_request = synthetic_tokens(6, 100, n_vocab());
  config.note_prefix = synthetic_tokens(3, 101, n_vocab());
  config.summary_max_tokens = 12;
  config.end_of_generation = {2};
  Conversation conv(*s, *model_, *backend_, config, [](int32_t t) { return "<" + std::to_string(t) + ">"; });
  const auto system = synthetic_tokens(20, 102, n_vocab());
  ASSERT_TRUE(conv.set_system(system).ok());
  GenerateOptions opt;
  opt.max_tokens = kReply;
  opt.sampler.temperature = 0;
  std::map<OverflowAction, int> actions;
  for (uint32_t turn = 0; turn < 200; ++turn) {
    const auto user = synthetic_tokens(6 + turn % 9, 1000 + turn, n_vocab());
    auto room = conv.make_room(static_cast<int64_t>(user.size()) + kReply);
    ASSERT_TRUE(room.ok()) << "turn " << turn << ": " << room.error().message;
    ASSERT_TRUE(*room) << "turn " << turn;
    conv.begin_turn();
    auto r = s->generate(user, opt, nullptr, nullptr);
    ASSERT_TRUE(r.ok()) << "turn " << turn << ": " << r.error().message;
    conv.end_turn();
    if (conv.summary_due()) {
      auto job = conv.start_summary();
      ASSERT_TRUE(job.ok()) << job.error().message;
      if (*job) {
        for (int steps = 0;; ++steps) {
          auto done = (*job)->step();
          ASSERT_TRUE(done.ok()) << done.error().message;
          if (*done) break;
          ASSERT_LT(steps, 100);
        }
        ASSERT_TRUE((*job)->finish().ok());
      }
    }
    for (const auto& e : conv.take_events()) ++actions[e.action];
    const backend::MemoryUse use = backend_->memory_use();
    ASSERT_EQ(use.kv_bytes, estimate->kv_bytes) << "turn " << turn;
    ASSERT_LE(static_cast<int64_t>(s->context().size()), kChatCtx);
    ASSERT_TRUE(std::equal(system.begin(), system.end(), s->context().begin())) << "turn " << turn;
  }
  EXPECT_EQ(actions[OverflowAction::Stopped], 0);
  if (GetParam() == OverflowPolicy::Evict) {
    EXPECT_GT(actions[OverflowAction::Evicted], 0);
  } else {
    EXPECT_GT(actions[OverflowAction::Summarized], 0);
  }
  // Evicting moves kept turns to new positions, which a ring cannot follow:
  // those steps prefilled again rather than attend to stale keys.
  EXPECT_GT(s->reprefills(), 0);
  std::printf("%s: %lld re-prefills, KV %llu bytes (full size %llu)\n", to_string(GetParam()),
              static_cast<long long>(s->reprefills()), static_cast<unsigned long long>(estimate->kv_bytes),
              static_cast<unsigned long long>(*full));
}

INSTANTIATE_TEST_SUITE_P(Policies, WindowedChat, ::testing::Values(OverflowPolicy::Evict, OverflowPolicy::Summarize),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

}  // namespace
}  // namespace hearth::runtime
