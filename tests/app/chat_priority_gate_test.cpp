// The app's chat comes before the local API: the real scheduler (stories260K,
// CPU) running its loop with ChatPriorityGate::wait_turn as its hook makes at
// most the one step already under way while a ChatTurn is held (at most one
// token per running sequence), then finishes every sequence once the turn
// ends. The pause below gives a broken gate time to show; nothing is timed.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/scheduler.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine_service/chat_priority_gate.h"

namespace hearth::app {
namespace {

TEST(ChatPriorityGate, BatchesMakeAtMostOneStepWhileAChatReplyRuns) {
  auto model = model::Model::load(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto backend = backend::make_cpu_backend({2});
  ChatPriorityGate gate;
  runtime::SchedulerConfig config;
  config.n_ctx = 512;
  config.parallel = 4;
  config.wait_turn = [&gate] { gate.wait_turn(); };
  auto scheduler = runtime::Scheduler::create(**model, *backend, config);
  ASSERT_TRUE(scheduler.ok()) << scheduler.error().message;
  std::atomic<int64_t> tokens{0};
  std::atomic<int> finished{0};
  constexpr int kSequences = 4;
  constexpr int kTokens = 400;
  for (int i = 0; i < kSequences; ++i) {
    runtime::SequenceRequest r;
    r.prompt = {1, 400 + i, 401 + i};
    r.max_tokens = kTokens;
    r.sampler.temperature = 0.8f;
    r.sampler.seed = static_cast<uint64_t>(i);
    ASSERT_TRUE((*scheduler)->submit(std::move(r), [&](const runtime::SequenceEvent& e) {
                              if (e.kind == runtime::SequenceEventKind::Token) ++tokens;
                              if (e.kind == runtime::SequenceEventKind::Finished) ++finished;
                            }).ok());
  }
  {
    ChatTurn reply(gate);  // held before the loop starts: it waits at once
    (*scheduler)->start();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(tokens.load(), 0);
  }
  // Running now; a reply that begins mid-stream lets one step finish at most.
  while (tokens.load() < 40) std::this_thread::yield();
  int64_t at_start = 0;
  {
    ChatTurn reply(gate);
    // The step under way when the reply began may still finish.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    at_start = tokens.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(tokens.load(), at_start) << "the batch went on while the reply held the gate";
  }
  EXPECT_GE(gate.waits(), 2);
  while (finished.load() < kSequences) std::this_thread::yield();
  EXPECT_EQ(tokens.load(), kSequences * kTokens);
  (*scheduler)->stop();
}

}  // namespace
}  // namespace hearth::app
