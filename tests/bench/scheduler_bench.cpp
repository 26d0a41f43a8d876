// Aggregate decode speed of the continuous-batching scheduler at 1, 2, 4, 8
// and 16 concurrent sequences on one model (e.g. a Qwen2.5-0.5B-shaped
// Q4_K_M made by `hearth-cli gen-model`), CPU backend. Set
// HEARTH_BENCH_MODEL to the GGUF file, HEARTH_BENCH_THREADS (default 2) and,
// for longer contexts, HEARTH_BENCH_PROMPT and HEARTH_BENCH_REPLY (tokens per
// stream; default 64 and 48; bench-serve's shape is 256 and 128).
// Reported per stream count: decode_tok_s (tokens sampled in steps that
// hold only decode tokens, over those steps' time) and step_ms (one such
// step), cpu_ms_per_tok (process CPU time per decoded token, all threads:
// less sensitive to other load on the machine). The target: decode_tok_s at 8 streams >= 3x that at 1.
// HEARTH_BENCH_PROFILE=1 also times every op (CpuBackendOptions::time_ops)
// and prints, per stream count, each op's wall time per decode step.
#include <benchmark/benchmark.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/op_profile.h>
#include <hearth/engine/runtime/scheduler.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace hearth;

struct Loaded {
  std::unique_ptr<model::Model> model;
  std::unique_ptr<backend::Backend> backend;
  std::string error;
};

Loaded& loaded() {
  static Loaded l = [] {
    Loaded out;
    const char* path = std::getenv("HEARTH_BENCH_MODEL");
    if (path == nullptr) {
      out.error = "set HEARTH_BENCH_MODEL to a GGUF file";
      return out;
    }
    auto m = model::Model::load(path);
    if (!m.ok()) {
      out.error = m.error().message;
      return out;
    }
    out.model = std::move(*m);
    const char* threads = std::getenv("HEARTH_BENCH_THREADS");
    backend::CpuBackendOptions o;
    o.threads = threads ? std::atoi(threads) : 2;
    o.time_ops = std::getenv("HEARTH_BENCH_PROFILE") != nullptr;
    out.backend = backend::make_cpu_backend(o);
    return out;
  }();
  return l;
}

int32_t env_tokens(const char* name, int32_t fallback) {
  const char* v = std::getenv(name);
  const int n = v ? std::atoi(v) : 0;
  return n > 0 ? n : fallback;
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void BM_SchedulerDecode(benchmark::State& state) {
  Loaded& l = loaded();
  if (!l.model) {
    state.SkipWithError(l.error.c_str());
    return;
  }
  const auto streams = static_cast<int32_t>(state.range(0));
  const int32_t kPrompt = env_tokens("HEARTH_BENCH_PROMPT", 64), kReply = env_tokens("HEARTH_BENCH_REPLY", 48);
  runtime::SchedulerConfig config;
  config.n_ctx = std::max<int64_t>(256, kPrompt + kReply + 16);
  config.parallel = streams;
  config.max_batch_tokens = 512;
  auto sched = runtime::Scheduler::create(*l.model, *l.backend, config);
  if (!sched.ok()) {
    state.SkipWithError(sched.error().message.c_str());
    return;
  }
  const auto n_vocab = static_cast<uint32_t>(l.model->hparams().n_vocab);
  double decode_s = 0, decode_cpu_s = 0;
  int64_t decode_tokens = 0, decode_steps = 0;
  std::vector<backend::OpProfile> decode_ops;
  for (auto _ : state) {
    for (int32_t s = 0; s < streams; ++s) {
      runtime::SequenceRequest r;
      uint32_t x = 17u + static_cast<uint32_t>(s);
      for (int32_t i = 0; i < kPrompt; ++i) {
        x = x * 1664525u + 1013904223u;
        r.prompt.push_back(static_cast<int32_t>(3 + (x >> 8) % (n_vocab - 3)));
      }
      r.sampler.temperature = 0.0f;
      r.max_tokens = kReply;
      if (!(*sched)->submit(std::move(r), nullptr).ok()) state.SkipWithError("submit failed");
    }
    while ((*sched)->active() > 0) {
      const auto t0 = std::chrono::steady_clock::now();
      const double c0 = cpu_seconds();
      auto rep = (*sched)->step();
      const double c1 = cpu_seconds();
      const auto t1 = std::chrono::steady_clock::now();
      if (!rep.ok()) {
        state.SkipWithError(rep.error().message.c_str());
        return;
      }
      if (rep->prompt_tokens == 0 && !rep->sampled.empty()) {
        decode_s += std::chrono::duration<double>(t1 - t0).count();
        decode_cpu_s += c1 - c0;
        decode_tokens += static_cast<int64_t>(rep->sampled.size());
        ++decode_steps;
        const auto timings = l.backend->op_timings();
        backend::accumulate(decode_ops, backend::summarize_timings(timings));
      }
    }
  }
  state.counters["decode_tok_s"] = decode_s > 0 ? static_cast<double>(decode_tokens) / decode_s : 0;
  // CPU seconds of the process per decoded token (all threads): the cost
  // without the machine's other load.
  state.counters["cpu_ms_per_tok"] = decode_tokens > 0 ? 1000.0 * decode_cpu_s / static_cast<double>(decode_tokens) : 0;
  state.counters["step_ms"] = decode_steps > 0 ? 1000.0 * decode_s / static_cast<double>(decode_steps) : 0;
  if (!decode_ops.empty() && decode_steps > 0) {
    std::sort(decode_ops.begin(), decode_ops.end(), [](const auto& a, const auto& b) { return a.ms > b.ms; });
    std::printf("%d streams, ms per decode step by op:\n", streams);
    for (const backend::OpProfile& op : decode_ops) {
      std::printf("  %-28s %8.3f\n", op.op.c_str(), op.ms / static_cast<double>(decode_steps));
    }
  }
}

BENCHMARK(BM_SchedulerDecode)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
