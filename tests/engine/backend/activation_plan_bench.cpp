// What planning activations costs per forward pass, on a graph shaped like
// Llama 3.2 1B (16 layers, n_embd 2048, 32 heads of 64, 8 KV heads, n_ff 8192,
// 128256 logits): a fresh plan (a new batch size) and the remembered plan that
// every decode step and every full prefill batch reuses.
#include <benchmark/benchmark.h>
#include <hearth/engine/backend/activation_plan.h>

#include <memory>

namespace hearth::backend {
namespace {

constexpr int64_t kEmbd = 2048, kHeads = 32, kKvHeads = 8, kHeadDim = 64, kFf = 8192, kVocab = 128256, kLayers = 16;

// Weights are caller memory (inputs): only their shapes matter here.
std::unique_ptr<Graph> llama_like(int64_t n_tok) {
  auto g = std::make_unique<Graph>();
  static int32_t dummy = 0;
  const auto weight = [&](int64_t cols, int64_t rows) { return g->input(DType::F32, {cols, rows, 1, 1}, &dummy); };
  Tensor* pos = g->input(DType::I32, {n_tok, 1, 1, 1}, &dummy);
  Tensor* x = g->get_rows(weight(kEmbd, kVocab), g->input(DType::I32, {n_tok, 1, 1, 1}, &dummy));
  AttentionParams ap{static_cast<int32_t>(kHeads), static_cast<int32_t>(kKvHeads), static_cast<int32_t>(kHeadDim)};
  for (int64_t l = 0; l < kLayers; ++l) {
    Tensor* n = g->rms_norm(x, weight(kEmbd, 1), 1e-5f);
    Tensor* q = g->rope(g->matmul(weight(kEmbd, kHeads * kHeadDim), n), pos, RopeParams{});
    Tensor* k = g->rope(g->matmul(weight(kEmbd, kKvHeads * kHeadDim), n), pos, RopeParams{});
    Tensor* v = g->matmul(weight(kEmbd, kKvHeads * kHeadDim), n);
    g->kv_store(k, v, pos, KvView{});
    Tensor* h = g->add(x, g->matmul(weight(kHeads * kHeadDim, kEmbd), g->attention(q, pos, KvView{}, ap)));
    Tensor* n2 = g->rms_norm(h, weight(kEmbd, 1), 1e-5f);
    Tensor* act = g->swiglu(g->matmul(weight(kEmbd, kFf), n2), g->matmul(weight(kEmbd, kFf), n2));
    x = g->add(h, g->matmul(weight(kFf, kEmbd), act));
  }
  if (n_tok > 1) x = g->last_rows(x, 1);
  g->output = g->matmul(weight(kEmbd, kVocab), g->rms_norm(x, weight(kEmbd, 1), 1e-5f));
  return g;
}

void BM_FreshPlan(benchmark::State& state) {
  const auto g = llama_like(state.range(0));
  uint64_t arena = 0;
  for (auto _ : state) {
    ActivationPlanner planner;
    arena = planner.plan(*g).arena_bytes;
    benchmark::DoNotOptimize(arena);
  }
  state.counters["arena_MiB"] = static_cast<double>(arena) / (1 << 20);
  state.counters["nodes"] = static_cast<double>(g->nodes().size());
}
BENCHMARK(BM_FreshPlan)->Arg(1)->Arg(256)->Unit(benchmark::kMicrosecond);

// Steady state: each step builds a new graph of the same shape, as the
// runtime does per token; the planner recognises it and keeps its offsets.
void BM_RepeatedPlan(benchmark::State& state) {
  const auto a = llama_like(state.range(0));
  const auto b = llama_like(state.range(0));
  ActivationPlanner planner;
  planner.plan(*a);
  bool flip = false;
  for (auto _ : state) {
    benchmark::DoNotOptimize(planner.plan(flip ? *a : *b).arena_bytes);
    flip = !flip;
  }
}
BENCHMARK(BM_RepeatedPlan)->Arg(1)->Arg(256)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hearth::backend
