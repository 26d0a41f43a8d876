// Memory fit: how much memory a model variant needs for a given context and
// KV-cache precision, and where it can run on this machine (all on the GPU,
// the first N layers on the GPU, CPU only, or not at all). Pure functions of
// their inputs so the picker, `hearth-cli catalog` and the tests agree.
#pragma once

#include <hearth/models/catalog.h>

#include <hearth/engine/kv/offload_split.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth::models {

enum class KvType { F16, Q8_0 };

const char* to_string(KvType type);  // "f16", "q8_0"
std::optional<KvType> kv_type_from_string(std::string_view text);

struct KvSettings {
  uint32_t n_ctx = 4096;
  KvType kv_type = KvType::F16;
  // The local API's request slots (Settings -> Local API; 0 when it is off):
  // each holds KV for api_n_ctx tokens of its own, beside the chat's cache.
  uint32_t api_slots = 0;
  uint32_t api_n_ctx = 0;
};

// Bytes of the KV cache: K and V, for every layer, n_head_kv * head_dim
// elements per token each, in the cache precision (F16: 2 bytes per element,
// Q8_0: 34 bytes per 32 elements), for n_ctx rounded up to whole cache blocks.
// The picker's one place for this number; it calls the engine's sizing
// function (hearth::kv::kv_cache_bytes) so the estimate is what the engine
// allocates.
uint64_t kv_cache_bytes(const ModelShape& shape, uint32_t n_ctx, KvType kv_type);

// The engine's shapes for `shape` (kv::estimate_memory's input).
kv::ModelDims model_dims(const ModelShape& shape);

// Working memory besides weights and KV: the activation arena and conversion
// buffer the engine reserves for one batch of prompt tokens
// (kv::scratch_bytes with the engine's default batch).
uint64_t scratch_bytes(const ModelShape& shape, uint32_t n_ctx);

struct MemoryEstimate {
  uint64_t weights_bytes = 0;  // the .gguf file size: weights are used in place
  uint64_t kv_bytes = 0;
  uint64_t scratch_bytes = 0;
  // The local API's slots: the API computes on the CPU, so this KV is in RAM
  // whatever the placement of the model.
  uint64_t api_kv_bytes = 0;
  uint64_t total_bytes = 0;  // all of the above
  uint32_t n_ctx = 0;
  KvType kv_type = KvType::F16;
};

MemoryEstimate estimate_memory(const ModelShape& shape, uint64_t weights_bytes,
                               const KvSettings& kv);

// What the machine offers. Reserves keep room for the OS, the app and the
// display: the budget is the free amount minus the reserve.
struct MachineBudget {
  uint64_t ram_available_bytes = 0;  // MemAvailable from /proc/meminfo
  uint64_t vram_free_bytes = 0;      // from the GPU backend; 0 without a usable GPU
  uint64_t ram_reserve_bytes = 1ull << 30;
  uint64_t vram_reserve_bytes = kv::kGpuReserveBytes;  // the engine's, so auto offload agrees

  uint64_t ram_budget() const;
  uint64_t vram_budget() const;
};

enum class FitKind {
  Gpu,      // everything in VRAM
  Partial,  // the first gpu_layers layers in VRAM, the rest in RAM
  Cpu,      // everything in RAM
  NoFit,    // neither placement fits
};

const char* to_string(FitKind kind);  // "gpu", "partial", "cpu", "no" (the CLI's JSON values)

struct FitResult {
  FitKind kind = FitKind::NoFit;
  uint32_t gpu_layers = 0;  // layers placed on the GPU (all of them for Gpu)
  uint32_t n_layer = 0;     // layers of the model
  uint64_t gpu_bytes = 0;   // bytes the placement needs in VRAM
  uint64_t cpu_bytes = 0;   // bytes the placement needs in RAM
  MemoryEstimate estimate;
  uint64_t ram_budget = 0;
  uint64_t vram_budget = 0;
};

// Places a model of `shape` with `estimate` on the machine. The layer split
// is the engine's (kv::split_layers, also behind "--gpu-layers auto"): each
// of the n_layer blocks holds an equal share of the weights, the embedding and
// output matrices together count as one more share that stays on the CPU in a
// partial offload (so at most n_layer - 1 layers), and each block's KV lives
// with its layer. Scratch is needed on every device that computes. The local
// API's KV (estimate.api_kv_bytes) is in RAM in every placement.
FitResult compute_fit(const ModelShape& shape, const MemoryEstimate& estimate,
                      const MachineBudget& machine);

// One line for people: "fits on the GPU: 5.1 GiB of 7.8 GiB free", ...
std::string describe_fit(const FitResult& fit);

struct VariantFit {
  std::string quant;
  int quality_rank = 0;  // higher is better
  FitResult fit;  // placed by the whole file: every expert must be in memory
  // Weight bytes each generated token reads, what decode speed follows: the
  // file's share of the active parameters (all of it for a dense model).
  uint64_t bytes_per_token = 0;
};

// The weight bytes one generated token reads from a `file_bytes` variant of
// `model`: the file scaled by active over total parameters (a mixture of
// experts reads only the experts the router picks), the file for a dense model.
uint64_t bytes_per_token(const CatalogModel& model, uint64_t file_bytes);

// The variant to recommend: the highest-quality variant among those with the
// best placement available (all-GPU beats partial offload beats CPU only;
// speed drops sharply from one tier to the next, quality only slightly between
// neighbouring quant levels). nullopt when nothing fits.
std::optional<size_t> recommend_variant(const std::vector<VariantFit>& variants);

// Fits of every variant of a catalog model.
std::vector<VariantFit> fit_variants(const Catalog& catalog, const CatalogModel& model,
                                     const KvSettings& kv, const MachineBudget& machine);

std::string format_bytes(uint64_t bytes);  // "1.5 GiB"

}  // namespace hearth::models
