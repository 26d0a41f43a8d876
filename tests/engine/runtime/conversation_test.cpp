// A 200-turn synthetic chat on stories260K under each overflow policy, with a
// context far smaller than the chat: the KV memory the backend hands out
// (counted at the allocation) never grows past the budget, nothing errors,
// the system prompt stays at the front, kept turns are never cut, and each
// policy reports what it did.
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/runtime/conversation.h>

#include <map>

#include "runtime_fixture.h"

namespace hearth::runtime {
namespace {

using namespace testing;

// Forwards to a real backend and adds up the KV cache memory it allocates.
class CountingBackend : public backend::Backend {
 public:
  explicit CountingBackend(backend::Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  backend::DeviceInfo device() const override { return inner_.device(); }
  bool supports(backend::Op op, DType type) const override { return inner_.supports(op, type); }
  Result<std::unique_ptr<backend::Buffer>> allocate(size_t bytes, backend::BufferUsage usage) override {
    if (usage == backend::BufferUsage::KvCache) kv_bytes += bytes;
    return inner_.allocate(bytes, usage);
  }
  Status compute(backend::Graph& graph) override { return inner_.compute(graph); }
  uint64_t kv_bytes = 0;

 private:
  backend::Backend& inner_;
};

constexpr int64_t kCtx = 128;
constexpr int32_t kReplyTokens = 10;
constexpr size_t kSystemTokens = 20;

class LongChat : public ModelFixture, public ::testing::WithParamInterface<OverflowPolicy> {
 protected:
  void SetUp() override { load("models/stories260K.gguf"); }
};

TEST_P(LongChat, TwoHundredTurnsStayWithinTheBudgetAndKeepTheSystemPrompt) {
  const OverflowPolicy policy = GetParam();
  CountingBackend counting(*backend_);
  auto created = Session::create(*model_, counting, SessionConfig{kCtx, DType::F16, 32});
  ASSERT_TRUE(created.ok()) << created.error().message;
  Session& s = **created;
  auto budget = kv::kv_cache_bytes(model_->hparams().n_layer, model_->hparams().n_head_kv, model_->hparams().head_dim,
                                   kCtx, DType::F16);
  ASSERT_TRUE(budget.ok());

  ConversationConfig config;
  config.policy = policy;
  config.summary_request = synthetic_tokens(6, 100, n_vocab());
  config.note_prefix = synthetic_tokens(3, 101, n_vocab());
  config.summary_max_tokens = 12;
  config.end_of_generation = {2};
  Conversation conv(s, *model_, counting, config, [](int32_t t) { return "<" + std::to_string(t) + ">"; });
  const auto system = synthetic_tokens(kSystemTokens, 102, n_vocab());
  ASSERT_TRUE(conv.set_system(system).ok());

  GenerateOptions opt;
  opt.max_tokens = kReplyTokens;
  opt.sampler.temperature = 0;
  std::map<int64_t, std::vector<int32_t>> turn_tokens;
  std::map<OverflowAction, int> actions;
  for (uint32_t turn = 0; turn < 200; ++turn) {
    const auto user = synthetic_tokens(6 + turn % 9, 1000 + turn, n_vocab());
    auto room = conv.make_room(static_cast<int64_t>(user.size()) + kReplyTokens);
    ASSERT_TRUE(room.ok()) << "turn " << turn << ": " << room.error().message;
    if (*room) {
      conv.begin_turn();
      auto r = s.generate(user, opt, nullptr, nullptr);
      ASSERT_TRUE(r.ok()) << "turn " << turn << ": " << r.error().message;
      conv.end_turn();
      const Turn& t = conv.turns().back();
      turn_tokens[t.id] = {s.context().begin() + t.begin, s.context().begin() + t.end};
    }
    if (conv.summary_due()) {
      auto job = conv.start_summary();
      ASSERT_TRUE(job.ok()) << job.error().message;
      if (*job) {
        int steps = 0;
        while (true) {  // the caller's loop; chat work could run between steps
          auto done = (*job)->step();
          ASSERT_TRUE(done.ok()) << done.error().message;
          ++steps;
          if (*done) break;
          ASSERT_LT(steps, 100);
        }
        ASSERT_TRUE((*job)->finish().ok());
      }
    }
    for (const auto& e : conv.take_events()) {
      ++actions[e.action];
      if (e.action == OverflowAction::Stopped) {
        EXPECT_FALSE(e.reason.empty());
      } else {
        EXPECT_FALSE(e.turn_ids.empty());
      }
    }

    ASSERT_EQ(counting.kv_bytes, *budget) << "turn " << turn;
    ASSERT_LE(static_cast<int64_t>(s.context().size()), kCtx);
    ASSERT_TRUE(std::equal(system.begin(), system.end(), s.context().begin())) << "turn " << turn;
    for (const Turn& t : conv.turns()) {
      if (t.role != TurnRole::Exchange) continue;
      const auto& want = turn_tokens.at(t.id);
      ASSERT_EQ(std::vector<int32_t>(s.context().begin() + t.begin, s.context().begin() + t.end), want)
          << "turn " << t.id << " was cut or moved wrongly";
    }
  }
  switch (policy) {
    case OverflowPolicy::Stop: EXPECT_GT(actions[OverflowAction::Stopped], 0); break;
    case OverflowPolicy::Evict:
      EXPECT_GT(actions[OverflowAction::Evicted], 0);
      EXPECT_EQ(actions[OverflowAction::Stopped], 0);
      break;
    case OverflowPolicy::Summarize:
      EXPECT_GT(actions[OverflowAction::Summarized], 0);
      EXPECT_EQ(actions[OverflowAction::Stopped], 0);
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, LongChat,
                         ::testing::Values(OverflowPolicy::Stop, OverflowPolicy::Evict, OverflowPolicy::Summarize),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

class ConversationEdits : public ModelFixture {
 protected:
  void SetUp() override { load("models/tiny-llama-f32.gguf"); }
};

// A regenerated reply or an edited message: keep_turns drops the later turns
// and the context continues exactly as a fresh prefill of what is kept
// (F32 cache: within F32 rounding); rollback replaces only the newest turn's tail.
TEST_F(ConversationEdits, KeepTurnsAndRollbackLeaveTheContextOfAFreshPrefill) {
  auto s = session(256);
  ConversationConfig config;
  config.policy = OverflowPolicy::Evict;
  Conversation conv(*s, *model_, *backend_, config, nullptr);
  const auto system = synthetic_tokens(12, 1, n_vocab());
  const auto first = synthetic_tokens(20, 2, n_vocab());
  const auto second = synthetic_tokens(25, 3, n_vocab());
  const auto edited = synthetic_tokens(9, 4, n_vocab());
  ASSERT_TRUE(conv.set_system(system).ok());
  for (const auto* t : {&first, &second}) {
    conv.begin_turn();
    ASSERT_TRUE(s->prefill(*t).ok());
    conv.end_turn();
  }
  ASSERT_EQ(conv.turns().size(), 3u);

  // Rolling back more than the newest turn holds would cut an earlier one.
  EXPECT_FALSE(conv.rollback(static_cast<int64_t>(second.size()) + 1).ok());
  ASSERT_TRUE(conv.rollback(5).ok());
  EXPECT_EQ(conv.turns().back().end, static_cast<int64_t>(system.size() + first.size() + second.size() - 5));
  EXPECT_EQ(s->context().size(), system.size() + first.size() + second.size() - 5);

  // The second turn is replaced by an edit.
  ASSERT_TRUE(conv.keep_turns(2).ok());
  EXPECT_EQ(s->context(), concat(system, first));
  EXPECT_FALSE(conv.keep_turns(3).ok());
  conv.begin_turn();
  ASSERT_TRUE(s->prefill(edited).ok());
  conv.end_turn();
  ASSERT_EQ(conv.turns().size(), 3u);
  EXPECT_GT(conv.turns().back().id, 2);  // ids are never reused
  const auto kept = concat(concat(system, first), edited);
  EXPECT_EQ(s->context(), kept);
  const auto ref = fresh_logits(kept, 256);
  EXPECT_LT(max_rel_diff(s->last_logits(), ref), 1e-5);
}

TEST(OverflowPolicyNames, ParseAndPrint) {
  for (auto p : {OverflowPolicy::Stop, OverflowPolicy::Evict, OverflowPolicy::Summarize}) {
    auto parsed = parse_overflow_policy(to_string(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  EXPECT_FALSE(parse_overflow_policy("truncate").ok());
}

}  // namespace
}  // namespace hearth::runtime
