// The one formula for KV cache memory. The engine allocates exactly this, and
// `hearth-cli info` and the app's sliders show it, so what the user is told is
// what gets allocated.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace hearth::kv {

// The cache is allocated in blocks of this many token positions per layer, so
// that paging, prefix reuse and eviction work on whole blocks.
inline constexpr int64_t kBlockTokens = 32;

// Storage types the cache supports.
bool is_supported_kv_type(DType type);  // F16, Q8_0 (and F32 for tests)

// Context positions actually allocated for `n_ctx` requested positions: rounded
// up to whole blocks.
int64_t allocated_positions(int64_t n_ctx);

// Bytes of one K (or V) row of `head_dim` elements of `kv_type`.
Result<uint64_t> kv_row_bytes(int64_t head_dim, DType kv_type);

// 2 (K and V) * n_layer * n_head_kv * row_bytes(head_dim) * allocated_positions(n_ctx).
// The block overhead is the rounding of n_ctx up to whole blocks; Q8_0 adds its
// per-32-element scale through row_bytes. Errors: unsupported type, head_dim not a
// multiple of the type's block, a non-positive count, or overflow.
Result<uint64_t> kv_cache_bytes(int64_t n_layer, int64_t n_head_kv, int64_t head_dim, int64_t n_ctx,
                                DType kv_type);

// How sliding-window layers are allocated. Ring: only the positions a window
// can still see (see windowed_positions), reused as positions grow. Full: the
// whole context like a global layer (a cache made without rings, e.g. a
// reference for the ring tests).
enum class WindowedLayers { Full, Ring };

// Positions a layer with sliding window `window` must hold when forward
// passes carry at most `n_batch` consecutive positions: the KV of a batch is
// stored before its attention runs, so while the batch p0..p0+n-1 is
// processed, the keys p0-window+1 .. p0+n-1 are alive, window + n_batch - 1
// positions. A ring of R blocks holds any R consecutive logical blocks, and
// that span, starting anywhere inside a block, touches at most
// ceil((window + n_batch - 1 + kBlockTokens - 1) / kBlockTokens) blocks.
// Never more than allocated_positions(n_ctx). `n_batch` is clamped to n_ctx.
int64_t windowed_positions(int64_t n_ctx, int64_t window, int64_t n_batch);

// The one per-layer capacity: allocated_positions(n_ctx) for a global layer
// (window 0) or with WindowedLayers::Full, windowed_positions otherwise.
int64_t layer_positions(int64_t n_ctx, int64_t window, int64_t n_batch, WindowedLayers windowed);

// The sliding windows of a model family from its metadata, as the model
// loader applies them (model/arch_gemma2.cpp: every even layer, 4096 when the
// key is absent; model/arch_phi3.cpp: every layer when the key is present;
// model/arch_gemma3.cpp: 5 of every 6 layers when the key is present, the
// default pattern, which the published Gemma 3 files use; model/arch_gpt_oss.cpp:
// the even layers, its default pattern),
// for the estimates that read a file or a catalog instead of loading it.
// `sliding_window` is the value of "<arch>.attention.sliding_window".
// Empty when no layer has a window (other families, a window of 0).
std::vector<int32_t> family_layer_windows(std::string_view architecture, std::optional<uint64_t> sliding_window,
                                          int64_t n_layer);

// Sum over the layers of 2 * n_head_kv * row_bytes(head_dim) *
// layer_positions(n_ctx, layer_windows[l], n_batch, windowed). layer_windows
// is empty (all layers global) or has one entry per layer (0: global).
// Errors as above, plus a window list of the wrong length or a negative window.
Result<uint64_t> kv_cache_bytes(int64_t n_layer, int64_t n_head_kv, int64_t head_dim, int64_t n_ctx, DType kv_type,
                                std::span<const int32_t> layer_windows, int64_t n_batch, WindowedLayers windowed);

// Parallel sequences (runtime::Scheduler, "KV per slot"): one kv::KvPool of
// `parallel` slots of allocated_positions(n_ctx) positions each, shared by
// the running sequences. Every layer holds every position there (a
// sliding-window layer is masked, not a ring), so the bytes are those of a
// global-only cache of parallel * allocated_positions(n_ctx) positions.
// Errors: a non-positive count, overflow, as kv_cache_bytes.
Result<int64_t> parallel_pool_blocks(int64_t n_ctx, int64_t parallel);
Result<uint64_t> parallel_kv_bytes(int64_t n_layer, int64_t n_head_kv, int64_t head_dim, int64_t n_ctx, DType kv_type,
                                   int64_t parallel);

}  // namespace hearth::kv
