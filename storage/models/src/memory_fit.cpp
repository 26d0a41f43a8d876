#include <hearth/models/memory_fit.h>

#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/kv/offload_split.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/quant/types.h>

#include <fmt/format.h>

#include <algorithm>

namespace hearth::models {
namespace {

DType to_dtype(KvType type) { return type == KvType::Q8_0 ? DType::Q8_0 : DType::F16; }

// Prompt tokens per forward pass: the engine's default batch, which is what
// the runtime reserves scratch for (runtime::SessionConfig::n_batch).
constexpr int64_t kBatchTokens = kv::kScratchBatchTokens;
// What the host keeps when every layer runs on the GPU (its own buffers,
// logits, thread stacks): an allowance, not part of the engine's estimate.
constexpr uint64_t kRuntimeBytes = kv::kScratchRuntimeBytes;

uint64_t saturating_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

int tier(FitKind kind) {
  switch (kind) {
    case FitKind::Gpu: return 3;
    case FitKind::Partial: return 2;
    case FitKind::Cpu: return 1;
    case FitKind::NoFit: return 0;
  }
  return 0;
}

}  // namespace

const char* to_string(KvType type) { return type == KvType::Q8_0 ? "q8_0" : "f16"; }

std::optional<KvType> kv_type_from_string(std::string_view text) {
  if (text == "f16" || text == "F16") return KvType::F16;
  if (text == "q8_0" || text == "Q8_0") return KvType::Q8_0;
  return std::nullopt;
}

uint64_t kv_cache_bytes(const ModelShape& shape, uint32_t n_ctx, KvType kv_type) {
  // The engine's sizing function is the single source of truth: it is what
  // engine/kv allocates (positions rounded up to whole cache blocks, Q8_0
  // scales included; sliding-window layers as the rings every backend keeps).
  auto bytes = kv::kv_cache_bytes(shape.n_layer, shape.n_head_kv, shape.head_dim, n_ctx, to_dtype(kv_type),
                                  shape.layer_windows, kBatchTokens, kv::WindowedLayers::Ring);
  if (bytes.ok()) return bytes.value();
  // Heads that are not whole Q8_0 blocks cannot use a Q8_0 cache; such a
  // model runs with an F16 cache, so that is what the estimate shows.
  return kv::kv_cache_bytes(shape.n_layer, shape.n_head_kv, shape.head_dim, n_ctx, DType::F16, shape.layer_windows,
                            kBatchTokens, kv::WindowedLayers::Ring)
      .value_or(0);
}

kv::ModelDims model_dims(const ModelShape& shape) {
  kv::ModelDims dims{shape.n_layer, shape.n_embd, shape.n_head, shape.n_head_kv,
                     shape.head_dim, shape.n_ff, shape.n_vocab};
  dims.projections = shape.projections;
  dims.layer_windows = shape.layer_windows;
  dims.n_expert = shape.n_expert;
  dims.n_expert_used = shape.n_expert_used;
  dims.n_ff_exp = shape.n_ff_exp;
  dims.expert_biases = shape.expert_biases;
  return dims;
}

uint64_t scratch_bytes(const ModelShape& shape, uint32_t n_ctx) {
  // The engine's formula (kv/memory_estimate.h), shared with `hearth-cli
  // info` and what the runtime reserves on the backend before the first
  // token. Counts the catalog validated are positive, so it only fails for
  // an empty shape, which needs nothing.
  return kv::scratch_bytes(model_dims(shape), n_ctx, kBatchTokens).value_or(0);
}

MemoryEstimate estimate_memory(const ModelShape& shape, uint64_t weights_bytes, const KvSettings& kv) {
  MemoryEstimate e;
  e.weights_bytes = weights_bytes;
  e.kv_bytes = kv_cache_bytes(shape, kv.n_ctx, kv.kv_type);
  e.scratch_bytes = scratch_bytes(shape, kv.n_ctx);
  if (kv.api_slots > 0 && kv.api_n_ctx > 0) {
    e.api_kv_bytes = kv_cache_bytes(shape, kv.api_n_ctx, kv.kv_type) * kv.api_slots;
  }
  e.total_bytes = e.weights_bytes + e.kv_bytes + e.scratch_bytes + e.api_kv_bytes;
  e.n_ctx = kv.n_ctx;
  e.kv_type = kv.kv_type;
  return e;
}

uint64_t MachineBudget::ram_budget() const { return saturating_sub(ram_available_bytes, ram_reserve_bytes); }
uint64_t MachineBudget::vram_budget() const { return saturating_sub(vram_free_bytes, vram_reserve_bytes); }

const char* to_string(FitKind kind) {
  switch (kind) {
    case FitKind::Gpu: return "gpu";
    case FitKind::Partial: return "partial";
    case FitKind::Cpu: return "cpu";
    case FitKind::NoFit: return "no";
  }
  return "no";
}

FitResult compute_fit(const ModelShape& shape, const MemoryEstimate& estimate, const MachineBudget& machine) {
  FitResult fit;
  fit.estimate = estimate;
  fit.ram_budget = machine.ram_budget();
  fit.vram_budget = machine.vram_budget();
  fit.n_layer = shape.n_layer;

  // The engine's layer split (the one "--gpu-layers auto" uses): everything
  // on the GPU, or the first N layers (weight share + their KV) next to the
  // GPU's scratch with the embedding, output head and other layers in RAM.
  kv::MemoryEstimate engine_estimate;
  engine_estimate.weights_bytes = estimate.weights_bytes;
  engine_estimate.kv_bytes = estimate.kv_bytes;
  engine_estimate.scratch_bytes = estimate.scratch_bytes;
  engine_estimate.total_bytes = estimate.total_bytes - estimate.api_kv_bytes;
  const uint64_t api = estimate.api_kv_bytes;
  const kv::LayerSplit split = kv::split_layers(engine_estimate, shape.n_layer, fit.vram_budget);
  if (split.kind == kv::SplitKind::AllOnGpu && kRuntimeBytes + api <= fit.ram_budget) {
    fit.kind = FitKind::Gpu;
    fit.gpu_layers = shape.n_layer;
    fit.gpu_bytes = split.gpu_bytes;
    // The host keeps only the runtime's own buffers and the API's slots.
    fit.cpu_bytes = kRuntimeBytes + api;
    return fit;
  }
  if (split.kind == kv::SplitKind::Partial && split.cpu_bytes + api <= fit.ram_budget) {
    fit.kind = FitKind::Partial;
    fit.gpu_layers = static_cast<uint32_t>(split.gpu_layers);
    fit.gpu_bytes = split.gpu_bytes;
    fit.cpu_bytes = split.cpu_bytes + api;
    return fit;
  }

  if (estimate.total_bytes <= fit.ram_budget) {
    fit.kind = FitKind::Cpu;
    fit.cpu_bytes = estimate.total_bytes;
    return fit;
  }
  fit.kind = FitKind::NoFit;
  fit.cpu_bytes = estimate.total_bytes;
  return fit;
}

std::string format_bytes(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", b / (1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.0f} MiB", b / (1ull << 20));
  if (bytes >= (1ull << 10)) return fmt::format("{:.0f} KiB", b / (1ull << 10));
  return fmt::format("{} B", bytes);
}

std::string describe_fit(const FitResult& fit) {
  const auto& e = fit.estimate;
  const std::string need = fmt::format("needs {} (weights {}, KV {} for {} tokens at {}, scratch {})",
                                       format_bytes(e.total_bytes), format_bytes(e.weights_bytes),
                                       format_bytes(e.kv_bytes), e.n_ctx, to_string(e.kv_type),
                                       format_bytes(e.scratch_bytes));
  switch (fit.kind) {
    case FitKind::Gpu:
      return fmt::format("fits on the GPU: {}; {} usable VRAM", need, format_bytes(fit.vram_budget));
    case FitKind::Partial:
      return fmt::format("partial offload, {} of {} layers on the GPU ({} VRAM, {} RAM): {}",
                         fit.gpu_layers, fit.n_layer, format_bytes(fit.gpu_bytes),
                         format_bytes(fit.cpu_bytes), need);
    case FitKind::Cpu:
      return fmt::format("CPU only: {}; {} usable RAM", need, format_bytes(fit.ram_budget));
    case FitKind::NoFit:
      return fmt::format("does not fit: {}; only {} usable RAM and {} usable VRAM", need,
                         format_bytes(fit.ram_budget), format_bytes(fit.vram_budget));
  }
  return need;
}

std::optional<size_t> recommend_variant(const std::vector<VariantFit>& variants) {
  std::optional<size_t> best;
  for (size_t i = 0; i < variants.size(); ++i) {
    const auto& v = variants[i];
    if (v.fit.kind == FitKind::NoFit) continue;
    if (!best) {
      best = i;
      continue;
    }
    const auto& b = variants[*best];
    const int t = tier(v.fit.kind), bt = tier(b.fit.kind);
    if (t > bt || (t == bt && v.quality_rank > b.quality_rank)) best = i;
  }
  return best;
}

uint64_t bytes_per_token(const CatalogModel& model, uint64_t file_bytes) {
  if (model.parameters == 0 || model.active_parameters == 0 || model.active_parameters >= model.parameters) {
    return file_bytes;
  }
  // In long double: file_bytes * active can exceed 64 bits.
  return static_cast<uint64_t>(static_cast<long double>(file_bytes) * model.active_parameters / model.parameters);
}

std::vector<VariantFit> fit_variants(const Catalog& catalog, const CatalogModel& model, const KvSettings& kv,
                                     const MachineBudget& machine) {
  std::vector<VariantFit> out;
  for (const auto& v : model.variants) {
    VariantFit vf;
    vf.quant = v.quant;
    vf.quality_rank = catalog.quant_rank(v.quant);
    vf.fit = compute_fit(model.shape, estimate_memory(model.shape, v.size_bytes, kv), machine);
    vf.bytes_per_token = bytes_per_token(model, v.size_bytes);
    out.push_back(std::move(vf));
  }
  return out;
}

}  // namespace hearth::models
