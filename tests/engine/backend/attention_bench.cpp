// CPU attention over a paged F16 KV cache, one layer shaped like Llama 3.2 1B
// (32 query heads of 64, 8 KV heads) or Qwen2.5-0.5B (14 heads of 64, 2 KV
// heads): a decode token at the end of a context of N positions, and a
// 64-token prefill chunk ending there. The pool holds kLayers layers and the
// iterations take them in turn, as a forward pass does, so a long context
// is read from memory rather than from a cache that one layer would fit.
// One thread, so the figure is the kernel's, not the thread pool's; the
// decode also on two threads (".../decode/t2"), where a token of few KV
// heads has its key chunks split across the threads. Levels: avx512 (where
// the CPU has it) and avx2, as --cpu-kernels caps them.
#include <benchmark/benchmark.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/kv_pool.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/quant/kernels.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>
#include "random_values.h"

namespace hearth::backend {
namespace {

struct Shape {
  const char* name;
  int32_t heads, kv_heads, head_dim;
};
constexpr Shape kLlama{"llama1b", 32, 8, 64};
constexpr Shape kQwen{"qwen05", 14, 2, 64};
constexpr int64_t kLayers = 16;

using testing::random_vec;

// A pool of kLayers layers holding `ctx` positions of one sequence, and the
// queries of the last `n_query` positions.
struct Setup {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<kv::KvPool> pool;
  std::vector<int32_t> table, query_seq, query_pos;
  std::vector<float> q;
  std::string error;
};

Setup make_setup(const Shape& s, quant::KernelLevel level, int64_t ctx, int64_t n_query, int threads) {
  Setup st;
  CpuBackendOptions o;
  o.threads = threads;
  o.max_level = level;
  st.backend = make_cpu_backend(o);
  const int64_t blocks = (ctx + kv::kBlockTokens - 1) / kv::kBlockTokens;
  auto pool =
      kv::KvPool::create(*st.backend, kv::KvPoolConfig{kLayers, s.kv_heads, s.head_dim, DType::F16, blocks, ctx});
  if (!pool.ok()) {
    st.error = pool.error().message;
    return st;
  }
  st.pool = std::move(*pool);
  st.table.assign(static_cast<size_t>(st.pool->table_blocks()), 0);
  for (int64_t b = 0; b < blocks; ++b) {
    auto blk = st.pool->allocate();
    if (!blk.ok()) {
      st.error = blk.error().message;
      return st;
    }
    st.table[static_cast<size_t>(b)] = *blk;
  }
  std::vector<int32_t> seq(static_cast<size_t>(ctx), 0), pos(static_cast<size_t>(ctx));
  for (int64_t t = 0; t < ctx; ++t) pos[static_cast<size_t>(t)] = static_cast<int32_t>(t);
  const auto kv_values = static_cast<size_t>(ctx * s.kv_heads * s.head_dim);
  std::vector<float> k = random_vec(kv_values, 1), v = random_vec(kv_values, 2);
  for (int64_t layer = 0; layer < kLayers; ++layer) {
    Graph g;
    const KvView view = st.pool->layer_view(layer, seq.data(), st.table.data());
    g.kv_store(g.input(DType::F32, {s.kv_heads * s.head_dim, ctx, 1, 1}, k.data()),
               g.input(DType::F32, {s.kv_heads * s.head_dim, ctx, 1, 1}, v.data()),
               g.input(DType::I32, {ctx, 1, 1, 1}, pos.data()), view);
    if (Status stored = st.backend->compute(g); !stored.ok()) {
      st.error = stored.error().message;
      return st;
    }
  }
  st.query_seq.assign(static_cast<size_t>(n_query), 0);
  for (int64_t i = 0; i < n_query; ++i) st.query_pos.push_back(static_cast<int32_t>(ctx - n_query + i));
  st.q = random_vec(static_cast<size_t>(n_query * s.heads * s.head_dim), 3);
  return st;
}

void BM_Attention(benchmark::State& state, Shape s, quant::KernelLevel level, int64_t n_query, int threads) {
  const std::vector<quant::KernelLevel> levels = quant::supported_levels(quant::detect_cpu_features());
  if (std::find(levels.begin(), levels.end(), level) == levels.end()) {
    state.SkipWithError("this CPU lacks the kernel level");
    return;
  }
  const int64_t ctx = state.range(0);
  Setup st = make_setup(s, level, ctx, n_query, threads);
  if (!st.error.empty()) {
    state.SkipWithError(st.error.c_str());
    return;
  }
  const AttentionParams ap{s.heads, s.kv_heads, s.head_dim, 0.125f};
  std::vector<std::unique_ptr<Graph>> layers;
  for (int64_t layer = 0; layer < kLayers; ++layer) {
    auto& g = layers.emplace_back(std::make_unique<Graph>());
    const KvView view = st.pool->layer_view(layer, st.query_seq.data(), st.table.data());
    g->output = g->attention(g->input(DType::F32, {s.heads * s.head_dim, n_query, 1, 1}, st.q.data()),
                             g->input(DType::I32, {n_query, 1, 1, 1}, st.query_pos.data()), view, ap);
  }
  size_t next = 0;
  for (auto _ : state) {
    if (Status done = st.backend->compute(*layers[next]); !done.ok()) {
      state.SkipWithError(done.error().message.c_str());
      return;
    }
    next = (next + 1) % layers.size();
  }
  // Cached positions each query head attended to (those up to its own), per second.
  double visible = 0;
  for (const int32_t pos : st.query_pos) visible += static_cast<double>(pos + 1);
  state.counters["keys/s"] = benchmark::Counter(visible * static_cast<double>(s.heads) *
                                                    static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

void register_all() {
  for (const Shape& s : {kLlama, kQwen}) {
    for (auto [level, level_name] : {std::pair{quant::KernelLevel::Avx512, "avx512"},
                                     std::pair{quant::KernelLevel::Avx2, "avx2"}}) {
      for (auto [n_query, kind] : {std::pair{int64_t{1}, "decode"}, std::pair{int64_t{64}, "prefill64"}}) {
        const std::string name = std::string("Attention/") + s.name + "/" + level_name + "/" + kind;
        benchmark::RegisterBenchmark(name.c_str(), BM_Attention, s, level, n_query, 1)->Arg(512)->Arg(4096);
        if (n_query == 1) {
          benchmark::RegisterBenchmark((name + "/t2").c_str(), BM_Attention, s, level, n_query, 2)
              ->Arg(512)->Arg(4096)->UseRealTime();
        }
      }
      // A whole prompt from position 0 (every query sees the keys up to
      // its own), as a server's 256-token prompt step runs it.
      const std::string prompt = std::string("Attention/") + s.name + "/" + level_name + "/prompt256";
      benchmark::RegisterBenchmark(prompt.c_str(), BM_Attention, s, level, int64_t{256}, 1)->Arg(256);
      benchmark::RegisterBenchmark((prompt + "/t2").c_str(), BM_Attention, s, level, int64_t{256}, 2)
          ->Arg(256)->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace hearth::backend

int main(int argc, char** argv) {
  hearth::backend::register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
