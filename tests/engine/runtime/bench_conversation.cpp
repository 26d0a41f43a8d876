// What making room at the context limit costs: evict with K-shift (the kept
// turn's keys are moved and re-rotated) against prefilling the kept tokens
// again (what an app without K-shift does). tiny-llama-f16 on the CPU, F16
// cache; the argument is the context size, half of which is the dropped turn.
// Run with --benchmark_repetitions=5 for a median; compare the two at one size.
#include <benchmark/benchmark.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/conversation.h>

#include <cstdlib>

#include "runtime_fixture.h"

namespace {

using namespace hearth;
using hearth::runtime::testing::concat;
using hearth::runtime::testing::synthetic_tokens;

struct Loaded {
  std::unique_ptr<model::Model> model;
  std::unique_ptr<backend::Backend> backend;
};

Loaded& loaded() {
  static Loaded l = [] {
    Loaded out;
    auto m = model::Model::load(HEARTH_TEST_DATA_DIR "/models/tiny-llama-f16.gguf");
    if (!m.ok()) std::abort();
    out.model = std::move(*m);
    out.backend = backend::make_cpu_backend({1});
    return out;
  }();
  return l;
}

struct Chat {
  std::vector<int32_t> system, dropped, kept;
};

Chat chat_for(int64_t ctx, int32_t n_vocab) {
  Chat c;
  c.system = synthetic_tokens(32, 1, n_vocab);
  c.dropped = synthetic_tokens(static_cast<size_t>(ctx / 2), 2, n_vocab);
  c.kept = synthetic_tokens(static_cast<size_t>(ctx / 2 - 32 - 16), 3, n_vocab);
  return c;
}

void BM_MakeRoomByEvictWithKShift(benchmark::State& state) {
  auto& l = loaded();
  const int64_t ctx = state.range(0);
  const Chat c = chat_for(ctx, static_cast<int32_t>(l.model->hparams().n_vocab));
  auto s = runtime::Session::create(*l.model, *l.backend, runtime::SessionConfig{ctx, DType::F16, 256});
  if (!s.ok()) std::abort();
  runtime::ConversationConfig config;
  config.policy = runtime::OverflowPolicy::Evict;
  for (auto _ : state) {
    state.PauseTiming();
    runtime::Conversation conv(**s, *l.model, *l.backend, config, nullptr);
    if (!conv.set_system(c.system).ok()) std::abort();
    for (const auto* turn : {&c.dropped, &c.kept}) {
      conv.begin_turn();
      if (!(*s)->prefill(*turn).ok()) std::abort();
      conv.end_turn();
    }
    state.ResumeTiming();
    auto room = conv.make_room(64);
    if (!room.ok() || !*room) std::abort();
  }
  state.counters["kept_tokens"] = static_cast<double>(c.kept.size());
}

void BM_MakeRoomByPrefillingTheKeptTokens(benchmark::State& state) {
  auto& l = loaded();
  const int64_t ctx = state.range(0);
  const Chat c = chat_for(ctx, static_cast<int32_t>(l.model->hparams().n_vocab));
  auto s = runtime::Session::create(*l.model, *l.backend, runtime::SessionConfig{ctx, DType::F16, 256});
  if (!s.ok()) std::abort();
  const auto kept = concat(c.system, c.kept);
  for (auto _ : state) {
    (*s)->reset();
    if (!(*s)->prefill(kept).ok()) std::abort();
  }
  state.counters["kept_tokens"] = static_cast<double>(c.kept.size());
}

// Fixed iterations: each evict iteration first prefills a whole context (untimed).
BENCHMARK(BM_MakeRoomByEvictWithKShift)->Arg(512)->Arg(1024)->Iterations(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MakeRoomByPrefillingTheKeptTokens)->Arg(512)->Arg(1024)->Iterations(8)->Unit(benchmark::kMillisecond);

}  // namespace
