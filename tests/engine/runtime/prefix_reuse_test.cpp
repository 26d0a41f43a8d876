// Prefix reuse in memory and on disk: logits after restoring a cached prefix
// and prefilling the rest must equal those of a full prefill in a fresh
// session (F32 model, F32 cache: the same arithmetic, so F32 rounding only).
#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/prefix_index.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/runtime/prefix_persist.h>
#include <hearth/engine/runtime/prefix_reuse.h>

#include <chrono>
#include <filesystem>

#include "runtime_fixture.h"

namespace hearth::runtime {
namespace {

using namespace testing;
namespace fs = std::filesystem;

constexpr double kF32Tolerance = 1e-5;
constexpr int64_t kCtx = 256;

class PrefixReuse : public ModelFixture {
 protected:
  void SetUp() override { load("models/tiny-llama-f32.gguf"); }
};

TEST_F(PrefixReuse, NewConversationWithTheSameSystemPromptReusesItsBlocks) {
  const auto system = synthetic_tokens(100, 1, n_vocab());
  const auto first = concat(system, synthetic_tokens(12, 2, n_vocab()));
  const auto second = concat(system, synthetic_tokens(9, 3, n_vocab()));
  kv::PrefixIndex index(/*model_seed=*/42, /*budget_bytes=*/64u << 20);

  auto a = session(kCtx);
  auto ra = prefill_reusing(*a, &index, first);
  ASSERT_TRUE(ra.ok()) << ra.error().message;
  EXPECT_EQ(ra->reused_tokens, 0);

  auto b = session(kCtx);
  auto rb = prefill_reusing(*b, &index, second);
  ASSERT_TRUE(rb.ok()) << rb.error().message;
  EXPECT_EQ(rb->reused_tokens, 96);  // the system prompt's three whole blocks
  EXPECT_EQ(rb->prefilled_tokens, static_cast<int64_t>(second.size()) - 96);
  EXPECT_EQ(b->context(), second);
  EXPECT_LT(max_rel_diff(b->last_logits(), fresh_logits(second, kCtx)), kF32Tolerance);

  // Decoding on top of the restored prefix stays equal too.
  ASSERT_TRUE(b->decode(7).ok());
  EXPECT_LT(max_rel_diff(b->last_logits(), fresh_logits(concat(second, {7}), kCtx)), kF32Tolerance);
}

TEST_F(PrefixReuse, RegeneratedReplyAndEditedLastMessageReuseTheSession) {
  const auto history = synthetic_tokens(70, 4, n_vocab());
  const auto user = synthetic_tokens(10, 5, n_vocab());
  const auto reply = synthetic_tokens(15, 6, n_vocab());
  auto s = session(kCtx);
  ASSERT_TRUE(s->prefill(concat(concat(history, user), reply)).ok());

  // Regenerate: the same request without the reply.
  const auto regen = concat(history, user);
  auto r = prefill_reusing(*s, nullptr, regen);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->reused_tokens, static_cast<int64_t>(regen.size()) - 1);
  EXPECT_LT(max_rel_diff(s->last_logits(), fresh_logits(regen, kCtx)), kF32Tolerance);

  // Edit the last message: everything before it is kept.
  const auto edited = concat(history, synthetic_tokens(11, 7, n_vocab()));
  r = prefill_reusing(*s, nullptr, edited);
  ASSERT_TRUE(r.ok());
  EXPECT_GE(r->reused_tokens, static_cast<int64_t>(history.size()));
  EXPECT_EQ(s->context(), edited);
  EXPECT_LT(max_rel_diff(s->last_logits(), fresh_logits(edited, kCtx)), kF32Tolerance);
}

TEST_F(PrefixReuse, LeastRecentlyUsedBlocksLeaveWithinTheBudget) {
  auto s = session(kCtx);
  const auto tokens = synthetic_tokens(128, 8, n_vocab());
  ASSERT_TRUE(s->prefill(tokens).ok());
  const uint64_t block_bytes = 2ull * 2 /*layers*/ * 2 /*kv heads*/ * 64 * 4 * kv::kBlockTokens;
  kv::PrefixIndex index(1, 2 * block_bytes);
  ASSERT_TRUE(index.store(s->cache(), tokens).ok());
  EXPECT_EQ(index.stats().blocks, 2u);
  EXPECT_LE(index.stats().bytes, 2 * block_bytes);
  EXPECT_EQ(index.stats().evicted_blocks, 2u);
  // The oldest blocks (the start of the prefix) went first, so nothing chains.
  auto t = session(kCtx);
  auto restored = index.restore(t->cache(), tokens, 127);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(*restored, 0);
  // A different model seed never matches.
  kv::PrefixIndex other(2, 64u << 20), mine(1, 64u << 20);
  ASSERT_TRUE(mine.store(s->cache(), tokens).ok());
  EXPECT_EQ(*other.restore(t->cache(), tokens, 127), 0);
  EXPECT_EQ(*mine.restore(t->cache(), tokens, 127), 96);
}

TEST(PrefixPersist, SurvivesARestartAndIsRejectedAfterTheModelFileChanges) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("hearth-prefix-persist-{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "cache");
  const fs::path model_path = dir / "model.gguf";
  fs::copy_file(data_path("models/tiny-llama-f32.gguf"), model_path);
  auto backend = backend::make_cpu_backend({1});
  const SessionConfig config{kCtx, DType::F32, 64};

  std::vector<int32_t> system, request;
  {
    auto m = model::Model::load(model_path);
    ASSERT_TRUE(m.ok()) << m.error().message;
    const auto nv = static_cast<int32_t>((*m)->hparams().n_vocab);
    system = synthetic_tokens(80, 9, nv);
    request = concat(system, synthetic_tokens(6, 10, nv));
    auto s = Session::create(**m, *backend, config);
    ASSERT_TRUE((*s)->prefill(system).ok());
    auto id = kv::identify_model_file(model_path);
    ASSERT_TRUE(id.ok());
    kv::PrefixDiskCache disk(dir / "cache", 16u << 20);
    ASSERT_TRUE(save_prefix(disk, *id, **s, static_cast<int64_t>(system.size())).ok());
  }
  // "Restart": a new model, session and disk cache object.
  std::vector<float> reference;
  {
    auto m = model::Model::load(model_path);
    ASSERT_TRUE(m.ok());
    auto id = kv::identify_model_file(model_path);
    kv::PrefixDiskCache disk(dir / "cache", 16u << 20);
    auto s = Session::create(**m, *backend, config);
    auto n = restore_prefix(disk, *id, **s, request);
    ASSERT_TRUE(n.ok()) << n.error().message;
    EXPECT_EQ(*n, static_cast<int64_t>(system.size()));
    ASSERT_TRUE((*s)->prefill(std::span(request).subspan(static_cast<size_t>(*n))).ok());
    auto fresh = Session::create(**m, *backend, config);
    ASSERT_TRUE((*fresh)->prefill(request).ok());
    reference.assign((*fresh)->last_logits().begin(), (*fresh)->last_logits().end());
    EXPECT_LT(max_rel_diff((*s)->last_logits(), reference), kF32Tolerance);
  }
  // The model file changes (rewritten: new modification time): the saved
  // prefix no longer belongs to it and is not used.
  fs::last_write_time(model_path, fs::last_write_time(model_path) + std::chrono::hours(1));
  {
    auto m = model::Model::load(model_path);
    ASSERT_TRUE(m.ok());
    auto id = kv::identify_model_file(model_path);
    kv::PrefixDiskCache disk(dir / "cache", 16u << 20);
    auto s = Session::create(**m, *backend, config);
    auto n = restore_prefix(disk, *id, **s, request);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 0);
    EXPECT_TRUE((*s)->context().empty());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hearth::runtime
