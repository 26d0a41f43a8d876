// Matrix-vector throughput of the Vulkan shaders (weight bytes read per
// second), for the decode-path weight types, and tiled matrix-matrix
// throughput for prefill. Run by hand, not by ctest:
//   build/dev/tests/engine/backend/vulkan/bench_vulkan_matvec
#include <benchmark/benchmark.h>
#include <hearth/engine/backend/vulkan/kernels.h>
#include <hearth/engine/backend/vulkan/transfer.h>

#include <random>
#include <vector>

namespace hearth::vulkan {
namespace {

struct Setup {
  std::unique_ptr<VulkanContext> ctx;
  std::unique_ptr<DeviceAllocator> allocator;
  std::unique_ptr<Transfer> transfer;
  std::unique_ptr<PipelineSet> pipelines;
  std::unique_ptr<Kernels> kernels;
  ~Setup() {
    kernels.reset();
    pipelines.reset();
    transfer.reset();
    allocator.reset();
    ctx.reset();
  }
};

void BM_Matvec(benchmark::State& state, DType type) {
  const auto rows = static_cast<uint32_t>(state.range(0));
  const auto cols = static_cast<uint32_t>(state.range(1));
  const auto dispatches = static_cast<uint32_t>(state.range(2));  // per submit
  const bool subgroups = state.range(3) != 0;
  VulkanConfig cfg;
  cfg.requirements.software = SoftwareDevices::Allow;
  Setup s;
  auto ctx = VulkanContext::create(cfg);
  if (!ctx.ok()) {
    state.SkipWithError(ctx.error().message.c_str());
    return;
  }
  s.ctx = std::move(ctx).value();
  s.allocator = std::make_unique<DeviceAllocator>(*s.ctx);
  s.transfer = std::move(Transfer::create(*s.ctx, *s.allocator).value());
  s.pipelines = std::make_unique<PipelineSet>(*s.ctx, nullptr);
  KernelTuning tuning = default_tuning(*s.ctx);
  if (subgroups && tuning.matvec_reduction != Reduction::Subgroup) {
    state.SkipWithError("the device has no subgroup arithmetic");
    return;
  }
  if (!subgroups) {
    tuning.matvec_reduction = Reduction::SharedMemory;
    tuning.matvec = 32;
  }
  s.kernels = std::make_unique<Kernels>(*s.ctx, *s.pipelines, tuning);

  const uint64_t wbytes = row_bytes(type, cols).value() * rows;
  std::vector<uint8_t> w(wbytes);
  std::mt19937 rng(1);
  for (auto& b : w) b = static_cast<uint8_t>(rng() & 0x3F);  // small values keep f16 scales finite
  std::vector<float> x(cols, 0.01f);
  // Distinct weight copies per dispatch so the sequence streams fresh bytes.
  std::vector<Buffer> ws;
  for (uint32_t i = 0; i < dispatches; ++i) {
    ws.push_back(std::move(Buffer::create(*s.ctx, *s.allocator, wbytes, MemoryUsage::DeviceLocal).value()));
    (void)s.transfer->upload(BufferView::whole(ws.back()), std::as_bytes(std::span(w)));
  }
  Buffer bx = std::move(Buffer::create(*s.ctx, *s.allocator, 4ull * cols, MemoryUsage::DeviceLocal).value());
  Buffer by = std::move(Buffer::create(*s.ctx, *s.allocator, 4ull * rows * dispatches, MemoryUsage::DeviceLocal).value());
  (void)s.transfer->upload(BufferView::whole(bx), std::as_bytes(std::span(x)));

  auto seq = std::move(CommandSequence::create(*s.ctx, dispatches, ProfilingMode::Off).value());
  (void)seq->begin();
  for (uint32_t i = 0; i < dispatches; ++i) {
    const auto st = s.kernels->matvec(*seq, type, BufferView::whole(ws[i]), BufferView::whole(bx),
                                      BufferView::whole(by).sub(4ull * rows * i, 4ull * rows), cols, rows);
    if (!st.ok()) {
      state.SkipWithError(st.error().message.c_str());
      return;
    }
  }
  (void)seq->end();
  (void)seq->submit_and_wait();  // warm-up: pipeline caches, page faults

  for (auto _ : state) {
    const auto st = seq->submit_and_wait();
    if (!st.ok()) state.SkipWithError(st.error().message.c_str());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wbytes * dispatches));
  state.SetLabel(std::string(traits(type).name) + (subgroups ? " subgroup" : " shared") + " on " +
                 s.ctx->description().name);
}

// Prefill: one tiled matrix-matrix product W [rows][cols] x X [tokens][cols]
// per submit; reported as multiply-adds per second (items) and weight bytes.
// With `columns`, the product goes to matvec with one column per token
// instead (what the backend runs for 2..8 tokens, a speculative verify pass).
void run_matmul(benchmark::State& state, DType type, bool columns) {
  const auto rows = static_cast<uint32_t>(state.range(0));
  const auto cols = static_cast<uint32_t>(state.range(1));
  const auto tokens = static_cast<uint32_t>(state.range(2));
  VulkanConfig cfg;
  cfg.requirements.software = SoftwareDevices::Allow;
  Setup s;
  auto ctx = VulkanContext::create(cfg);
  if (!ctx.ok()) {
    state.SkipWithError(ctx.error().message.c_str());
    return;
  }
  s.ctx = std::move(ctx).value();
  s.allocator = std::make_unique<DeviceAllocator>(*s.ctx);
  s.transfer = std::move(Transfer::create(*s.ctx, *s.allocator).value());
  s.pipelines = std::make_unique<PipelineSet>(*s.ctx, nullptr);
  s.kernels = std::make_unique<Kernels>(*s.ctx, *s.pipelines, default_tuning(*s.ctx));

  const uint64_t wbytes = row_bytes(type, cols).value() * rows;
  std::vector<uint8_t> w(wbytes);
  std::mt19937 rng(1);
  for (auto& b : w) b = static_cast<uint8_t>(rng() & 0x3F);  // small values keep f16 scales finite
  std::vector<float> x(size_t{cols} * tokens, 0.01f);
  Buffer bw = std::move(Buffer::create(*s.ctx, *s.allocator, wbytes, MemoryUsage::DeviceLocal).value());
  Buffer bx = std::move(Buffer::create(*s.ctx, *s.allocator, 4ull * x.size(), MemoryUsage::DeviceLocal).value());
  Buffer by = std::move(Buffer::create(*s.ctx, *s.allocator, 4ull * rows * tokens, MemoryUsage::DeviceLocal).value());
  (void)s.transfer->upload(BufferView::whole(bw), std::as_bytes(std::span(w)));
  (void)s.transfer->upload(BufferView::whole(bx), std::as_bytes(std::span(x)));

  auto seq = std::move(CommandSequence::create(*s.ctx, 1, ProfilingMode::Off).value());
  (void)seq->begin();
  const auto st = columns ? s.kernels->matvec(*seq, type, BufferView::whole(bw), BufferView::whole(bx),
                                              BufferView::whole(by), cols, rows, tokens)
                          : s.kernels->matmul(*seq, type, BufferView::whole(bw), BufferView::whole(bx),
                                              BufferView::whole(by), rows, tokens, cols);
  if (!st.ok()) {
    state.SkipWithError(st.error().message.c_str());
    return;
  }
  (void)seq->end();
  (void)seq->submit_and_wait();  // warm-up: shader compile, page faults

  for (auto _ : state) {
    const auto r = seq->submit_and_wait();
    if (!r.ok()) state.SkipWithError(r.error().message.c_str());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * uint64_t{rows} * cols * tokens));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * wbytes));
  state.SetLabel(std::string(traits(type).name) + (columns ? " matvec columns" : " matmul tiles") + " on " +
                 s.ctx->description().name);
}

void BM_Matmul(benchmark::State& state, DType type) { run_matmul(state, type, false); }
void BM_FewTokens(benchmark::State& state, DType type) { run_matmul(state, type, state.range(3) != 0); }

// A few tokens (speculative verify passes, 2..8): the tiles (0) against the
// multi-column matvec (1), at Qwen2.5-0.5B's FFN down shape.
BENCHMARK_CAPTURE(BM_FewTokens, Q4_K, DType::Q4_K)->ArgsProduct({{896}, {4864}, {1, 2, 4, 8}, {0, 1}})
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_FewTokens, Q8_0, DType::Q8_0)->ArgsProduct({{896}, {4864}, {1, 2, 4, 8}, {0, 1}})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// Qwen2.5-0.5B Q4_K_M over a 128-token prompt: FFN up/gate (4864x896, Q5_0
// because 896 is not a multiple of 256) and FFN down (896x4864, Q4_K/Q6_K).
BENCHMARK_CAPTURE(BM_Matmul, Q5_0, DType::Q5_0)->Args({4864, 896, 128})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, Q8_0, DType::Q8_0)->Args({4864, 896, 128})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, Q4_K, DType::Q4_K)->Args({896, 4864, 128})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, Q6_K, DType::Q6_K)->Args({896, 4864, 128})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Matmul, F16, DType::F16)->Args({896, 4864, 128})->Unit(benchmark::kMillisecond)->UseRealTime();

// Shapes: Qwen2.5-0.5B's FFN down (896x4864) and a 4096x4864 matrix; 8
// dispatches per submit, as in one layer's worth of decode work; shared-memory
// (0) and subgroup (1) reductions.
#define HEARTH_MATVEC_BENCH(T)                                                                  \
  BENCHMARK_CAPTURE(BM_Matvec, T, DType::T)->ArgsProduct({{896, 4096}, {4864}, {8}, {0, 1}})       \
      ->Unit(benchmark::kMillisecond)->UseRealTime()

HEARTH_MATVEC_BENCH(Q4_K);
HEARTH_MATVEC_BENCH(Q6_K);
HEARTH_MATVEC_BENCH(Q8_0);
HEARTH_MATVEC_BENCH(Q4_0);
HEARTH_MATVEC_BENCH(Q5_0);
HEARTH_MATVEC_BENCH(F16);

}  // namespace
}  // namespace hearth::vulkan
