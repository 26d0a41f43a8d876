// KV sizes against hand-computed values for real model shapes, and the fit
// and recommendation logic over a table of machines. Every expected number
// below is worked out by hand in the comments.
#include <hearth/models/memory_fit.h>

#include <gtest/gtest.h>

namespace hearth::models {
namespace {

constexpr uint64_t MiB = 1ull << 20;

TEST(KvCacheBytes, MatchesTheFormulaForRealShapes) {
  // Llama 3.1 8B: 32 layers, 8 KV heads of 128.
  const ModelShape llama8b{32, 32, 8, 128, 4096};
  // 2 (K,V) * 32 * 8 * 128 * 8192 tokens * 2 bytes = 1 GiB
  EXPECT_EQ(kv_cache_bytes(llama8b, 8192, KvType::F16), 1073741824ull);
  // Q8_0: each 1024-element row is 32 blocks of 34 bytes = 1088 bytes.
  EXPECT_EQ(kv_cache_bytes(llama8b, 8192, KvType::Q8_0), 2ull * 32 * 8192 * 1088);
  // Qwen2.5 0.5B: 24 layers, 2 KV heads of 64; 2*24*128*32768*2 = 384 MiB.
  const ModelShape qwen05{24, 14, 2, 64, 896};
  EXPECT_EQ(kv_cache_bytes(qwen05, 32768, KvType::F16), 384 * MiB);
  // SmolLM2 360M: 32 layers, 5 KV heads of 64 -> 320-element rows; the
  // cache holds whole blocks of 32 positions, so 1000 tokens take 1024.
  const ModelShape smol{32, 15, 5, 64, 960};
  EXPECT_EQ(kv_cache_bytes(smol, 1000, KvType::F16), 2ull * 32 * 1024 * 640);
  EXPECT_EQ(kv_cache_bytes(smol, 1000, KvType::Q8_0), 2ull * 32 * 1024 * 340);
}

TEST(KvCacheBytes, RowsThatAreNotWholeQ8BlocksFallBackToF16) {
  const ModelShape odd{1, 1, 1, 40, 40};
  // 10 positions round up to one block of 32; F16 rows of 40 elements.
  EXPECT_EQ(kv_cache_bytes(odd, 10, KvType::Q8_0), 2ull * 1 * 32 * 80);
}

TEST(EstimateMemory, IsTheSumOfItsParts) {
  const ModelShape shape{16, 32, 8, 64, 2048};
  const auto e = estimate_memory(shape, 800 * MiB, KvSettings{4096, KvType::Q8_0});
  EXPECT_EQ(e.weights_bytes, 800 * MiB);
  EXPECT_EQ(e.kv_bytes, kv_cache_bytes(shape, 4096, KvType::Q8_0));
  EXPECT_EQ(e.scratch_bytes, scratch_bytes(shape, 4096));
  EXPECT_GT(e.scratch_bytes, 0u);
  EXPECT_EQ(e.total_bytes, e.weights_bytes + e.kv_bytes + e.scratch_bytes);
  EXPECT_EQ(e.n_ctx, 4096u);
}

// A model with 9 layers, so the weights split into 10 shares (9 layers + the
// embedding/output share): per layer = weights/10 + KV/9.
const ModelShape kShape{9, 8, 8, 64, 512};
constexpr uint64_t kKv = 900 * MiB;       // 100 MiB per layer
constexpr uint64_t kScratch = 500 * MiB;

struct Quant {
  const char* name;
  int rank;
  uint64_t weights_mib;  // per layer: weights/10 + 100 MiB
};
// Q4_0 4000 (500/layer, total 5400), Q4_K_M 4500 (550, 5900), Q5_K_M 5000
// (600, 6400), Q6_K 6000 (700, 7400), Q8_0 8000 (900, 9400).
const Quant kQuants[] = {{"Q4_0", 1, 4000}, {"Q4_K_M", 2, 4500}, {"Q5_K_M", 3, 5000}, {"Q6_K", 4, 6000},
                         {"Q8_0", 5, 8000}};

MemoryEstimate estimate_for(uint64_t weights_mib) {
  MemoryEstimate e;
  e.weights_bytes = weights_mib * MiB;
  e.kv_bytes = kKv;
  e.scratch_bytes = kScratch;
  e.total_bytes = e.weights_bytes + kKv + kScratch;
  e.n_ctx = 4096;
  return e;
}

struct Expected {
  FitKind kind;
  uint32_t gpu_layers;
};

struct MachineCase {
  const char* name;
  uint64_t ram_mib;
  uint64_t vram_mib;
  uint64_t ram_reserve_mib;
  Expected fits[5];           // per quant, in kQuants order
  const char* recommended;    // nullptr: nothing fits
};

const MachineCase kMachines[] = {
    // No GPU, 8000 MiB RAM: totals 5400..7400 fit, 9400 does not; best is Q6_K.
    {"cpu-8g", 8000, 0, 0,
     {{FitKind::Cpu, 0}, {FitKind::Cpu, 0}, {FitKind::Cpu, 0}, {FitKind::Cpu, 0}, {FitKind::NoFit, 0}}, "Q6_K"},
    // No GPU, 5000 MiB: even Q4_0 (5400) is too big.
    {"cpu-5g", 5000, 0, 0,
     {{FitKind::NoFit, 0}, {FitKind::NoFit, 0}, {FitKind::NoFit, 0}, {FitKind::NoFit, 0}, {FitKind::NoFit, 0}},
     nullptr},
    // 10000 MiB VRAM holds every total (max 9400): all GPU, best Q8_0.
    {"gpu-10g", 16000, 10000, 0,
     {{FitKind::Gpu, 9}, {FitKind::Gpu, 9}, {FitKind::Gpu, 9}, {FitKind::Gpu, 9}, {FitKind::Gpu, 9}}, "Q8_0"},
    // 6000 MiB VRAM: Q4_0 (5400) and Q4_K_M (5900) fit whole. Others offload
    // floor((6000-500)/per_layer) layers: Q5 5500/600 = 9, but the whole model
    // does not fit, so the embedding and output stay on the CPU with at least
    // one layer: 8; Q6 5500/700 = 7, Q8 5500/900 = 6. All-GPU tier wins: Q4_K_M.
    {"gpu-6g", 16000, 6000, 0,
     {{FitKind::Gpu, 9}, {FitKind::Gpu, 9}, {FitKind::Partial, 8}, {FitKind::Partial, 7}, {FitKind::Partial, 6}},
     "Q4_K_M"},
    // 3000 MiB VRAM: 2500/500 = 5, 2500/550 = 4, 2500/600 = 4, 2500/700 = 3,
    // 2500/900 = 2 layers; RAM takes the rest. Best in the partial tier: Q8_0.
    {"gpu-3g", 16000, 3000, 0,
     {{FitKind::Partial, 5}, {FitKind::Partial, 4}, {FitKind::Partial, 4}, {FitKind::Partial, 3},
      {FitKind::Partial, 2}},
     "Q8_0"},
    // VRAM (400) below the scratch (500): no offload; RAM 7000 holds up to Q5 (6400).
    {"tiny-gpu", 7000, 400, 0,
     {{FitKind::Cpu, 0}, {FitKind::Cpu, 0}, {FitKind::Cpu, 0}, {FitKind::NoFit, 0}, {FitKind::NoFit, 0}},
     "Q5_K_M"},
    // 3000 VRAM + 3000 RAM: Q4_0 puts 5 layers (2500) on the GPU and 2900 in RAM;
    // Q4_K_M would leave 5900-2200 = 3700 for RAM: no.
    {"split-3g-3g", 3000, 3000, 0,
     {{FitKind::Partial, 5}, {FitKind::NoFit, 0}, {FitKind::NoFit, 0}, {FitKind::NoFit, 0}, {FitKind::NoFit, 0}},
     "Q4_0"},
    // 8000 RAM minus a 1024 reserve = 6976: Q5 (6400) fits, Q6 (7400) not.
    {"cpu-8g-reserve", 8000, 0, 1024,
     {{FitKind::Cpu, 0}, {FitKind::Cpu, 0}, {FitKind::Cpu, 0}, {FitKind::NoFit, 0}, {FitKind::NoFit, 0}},
     "Q5_K_M"},
};

TEST(MemoryFit, TableOfMachines) {
  for (const auto& machine_case : kMachines) {
    SCOPED_TRACE(machine_case.name);
    MachineBudget machine;
    machine.ram_available_bytes = machine_case.ram_mib * MiB;
    machine.vram_free_bytes = machine_case.vram_mib * MiB;
    machine.ram_reserve_bytes = machine_case.ram_reserve_mib * MiB;
    machine.vram_reserve_bytes = 0;
    std::vector<VariantFit> fits;
    for (size_t i = 0; i < std::size(kQuants); ++i) {
      SCOPED_TRACE(kQuants[i].name);
      const auto fit = compute_fit(kShape, estimate_for(kQuants[i].weights_mib), machine);
      EXPECT_EQ(fit.kind, machine_case.fits[i].kind) << describe_fit(fit);
      if (fit.kind == FitKind::Gpu || fit.kind == FitKind::Partial) {
        EXPECT_EQ(fit.gpu_layers, machine_case.fits[i].gpu_layers);
      }
      fits.push_back({kQuants[i].name, kQuants[i].rank, fit});
    }
    const auto best = recommend_variant(fits);
    if (machine_case.recommended == nullptr) {
      EXPECT_FALSE(best.has_value());
    } else {
      ASSERT_TRUE(best.has_value());
      EXPECT_EQ(fits[*best].quant, machine_case.recommended);
    }
  }
}

TEST(MemoryFit, PartialOffloadNumbers) {
  // split-3g-3g, Q4_0: 5 layers * 500 MiB on the GPU plus its 500 MiB scratch;
  // RAM holds 5400 - 2500 = 2900 MiB.
  MachineBudget machine{3000 * MiB, 3000 * MiB, 0, 0};
  const auto fit = compute_fit(kShape, estimate_for(4000), machine);
  ASSERT_EQ(fit.kind, FitKind::Partial);
  EXPECT_EQ(fit.gpu_bytes, 3000 * MiB);
  EXPECT_EQ(fit.cpu_bytes, 2900 * MiB);
  EXPECT_NE(describe_fit(fit).find("5 of 9 layers"), std::string::npos) << describe_fit(fit);
}

TEST(EstimateMemory, LocalApiSlotsAddTheirOwnKv) {
  const ModelShape shape{16, 32, 8, 64, 2048};
  KvSettings kv{4096, KvType::F16};
  kv.api_slots = 4;
  kv.api_n_ctx = 2048;
  const auto e = estimate_memory(shape, 800 * MiB, kv);
  // Each slot: 2 (K,V) * 16 layers * 8 heads * 64 * 2048 tokens * 2 bytes = 64 MiB.
  EXPECT_EQ(e.api_kv_bytes, 4 * 64 * MiB);
  EXPECT_EQ(e.kv_bytes, 128 * MiB);  // the chat's own cache is unchanged
  EXPECT_EQ(e.total_bytes, e.weights_bytes + e.kv_bytes + e.scratch_bytes + e.api_kv_bytes);
  kv.api_slots = 0;  // the API is off
  EXPECT_EQ(estimate_memory(shape, 800 * MiB, kv).api_kv_bytes, 0u);
}

TEST(MemoryFit, LocalApiKvStaysInRam) {
  // All on a 10 GiB GPU: Q4_0's 5400 MiB. The API's 1000 MiB of slots are
  // in RAM beside the runtime's 64 MiB, so 1 GiB of RAM is too little.
  MemoryEstimate e = estimate_for(4000);
  e.api_kv_bytes = 1000 * MiB;
  e.total_bytes += e.api_kv_bytes;
  const auto gpu = compute_fit(kShape, e, MachineBudget{2000 * MiB, 10000 * MiB, 0, 0});
  ASSERT_EQ(gpu.kind, FitKind::Gpu);
  EXPECT_EQ(gpu.gpu_bytes, 5400 * MiB);  // the GPU's share is the model's alone
  EXPECT_EQ(gpu.cpu_bytes, 1064 * MiB);
  EXPECT_EQ(compute_fit(kShape, e, MachineBudget{1024 * MiB, 10000 * MiB, 0, 0}).kind, FitKind::NoFit);
  // The partial offload above (2900 MiB in RAM) now needs 3900 MiB of it.
  const auto partial = compute_fit(kShape, e, MachineBudget{3900 * MiB, 3000 * MiB, 0, 0});
  ASSERT_EQ(partial.kind, FitKind::Partial);
  EXPECT_EQ(partial.cpu_bytes, 3900 * MiB);
  EXPECT_NE(compute_fit(kShape, e, MachineBudget{3899 * MiB, 3000 * MiB, 0, 0}).kind, FitKind::Partial);
  // On the CPU alone everything counts: 6400 MiB.
  EXPECT_EQ(compute_fit(kShape, e, MachineBudget{6400 * MiB, 0, 0, 0}).kind, FitKind::Cpu);
  EXPECT_EQ(compute_fit(kShape, e, MachineBudget{6399 * MiB, 0, 0, 0}).kind, FitKind::NoFit);
}

TEST(MemoryFit, ReservesComeOffTheBudget) {
  MachineBudget machine{2 * 1024 * MiB, 1024 * MiB, 1024 * MiB, 256 * MiB};
  EXPECT_EQ(machine.ram_budget(), 1024 * MiB);
  EXPECT_EQ(machine.vram_budget(), 768 * MiB);
  MachineBudget small{100 * MiB, 0, 1024 * MiB, 256 * MiB};
  EXPECT_EQ(small.ram_budget(), 0u);
  EXPECT_EQ(small.vram_budget(), 0u);
}

TEST(MemoryFit, CatalogVariantsOnABigCpuMachineRecommendQ8) {
  Catalog catalog;
  CatalogModel model;
  model.id = "m";
  model.shape = ModelShape{16, 32, 8, 64, 2048};
  for (const char* q : {"Q4_K_M", "Q8_0", "Q4_0"}) {
    CatalogVariant v;
    v.quant = q;
    v.url = "https://x/m.gguf";
    v.size_bytes = 700 * MiB;
    model.variants.push_back(v);
  }
  MachineBudget machine{64ull * 1024 * MiB, 0};
  const auto fits = fit_variants(catalog, model, KvSettings{4096, KvType::F16}, machine);
  ASSERT_EQ(fits.size(), 3u);
  const auto best = recommend_variant(fits);
  ASSERT_TRUE(best.has_value());
  EXPECT_EQ(fits[*best].quant, "Q8_0");  // ranks from the standard order
}

}  // namespace
}  // namespace hearth::models
