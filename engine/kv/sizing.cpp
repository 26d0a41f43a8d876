#include "hearth/engine/kv/sizing.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "hearth/core/checked_math.h"

namespace hearth::kv {

bool is_supported_kv_type(DType type) {
  return type == DType::F16 || type == DType::Q8_0 || type == DType::F32;
}

int64_t allocated_positions(int64_t n_ctx) {
  if (n_ctx <= 0) return 0;
  return (n_ctx + kBlockTokens - 1) / kBlockTokens * kBlockTokens;
}

Result<uint64_t> kv_row_bytes(int64_t head_dim, DType kv_type) {
  if (!is_supported_kv_type(kv_type)) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("KV cache type {} is not supported (use F16 or Q8_0)", traits(kv_type).name));
  }
  if (head_dim <= 0) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("KV head_dim {} must be positive", head_dim));
  }
  return row_bytes(kv_type, head_dim);
}

Result<uint64_t> kv_cache_bytes(int64_t n_layer, int64_t n_head_kv, int64_t head_dim, int64_t n_ctx,
                                DType kv_type) {
  if (n_layer <= 0 || n_head_kv <= 0 || n_ctx <= 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("KV cache size needs positive counts (n_layer {}, n_head_kv {}, n_ctx {})",
                                  n_layer, n_head_kv, n_ctx));
  }
  HEARTH_TRY(const uint64_t row, kv_row_bytes(head_dim, kv_type));
  std::optional<uint64_t> total = checked_mul(2, static_cast<uint64_t>(n_layer));
  if (total) total = checked_mul(*total, static_cast<uint64_t>(n_head_kv));
  if (total) total = checked_mul(*total, row);
  if (total) total = checked_mul(*total, static_cast<uint64_t>(allocated_positions(n_ctx)));
  if (!total) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("KV cache size overflows 64 bits (n_layer {}, n_head_kv {}, head_dim {}, n_ctx {})",
                                  n_layer, n_head_kv, head_dim, n_ctx));
  }
  return *total;
}

int64_t windowed_positions(int64_t n_ctx, int64_t window, int64_t n_batch) {
  const int64_t full = allocated_positions(n_ctx);
  if (window <= 0 || n_batch <= 0 || window >= n_ctx) return full;
  const int64_t live = window + std::min(n_batch, n_ctx) - 1;
  const int64_t blocks = (live + kBlockTokens - 1 + kBlockTokens - 1) / kBlockTokens;
  return std::min(full, blocks * kBlockTokens);
}

int64_t layer_positions(int64_t n_ctx, int64_t window, int64_t n_batch, WindowedLayers windowed) {
  if (windowed == WindowedLayers::Full || window <= 0) return allocated_positions(n_ctx);
  return windowed_positions(n_ctx, window, n_batch);
}

std::vector<int32_t> family_layer_windows(std::string_view architecture, std::optional<uint64_t> sliding_window,
                                          int64_t n_layer) {
  std::vector<int32_t> windows;
  const bool gemma2 = architecture == "gemma2", phi3 = architecture == "phi3", gemma3 = architecture == "gemma3";
  const bool gpt_oss = architecture == "gpt-oss";
  if (!gemma2 && !phi3 && !gemma3 && !gpt_oss) return windows;
  if ((phi3 || gemma3 || gpt_oss) && !sliding_window) return windows;
  const uint64_t window = std::min<uint64_t>(sliding_window.value_or(4096), INT32_MAX);
  if (window == 0) return windows;
  for (int64_t l = 0; l < n_layer; ++l) {
    // Gemma 3: 5 local layers, then 1 global (the default period of 6).
    // gpt-oss: even layers (the default period of 2).
    const bool local = phi3 || ((gemma2 || gpt_oss) && l % 2 == 0) || (gemma3 && l % 6 < 5);
    windows.push_back(local ? static_cast<int32_t>(window) : 0);
  }
  return windows;
}

Result<uint64_t> kv_cache_bytes(int64_t n_layer, int64_t n_head_kv, int64_t head_dim, int64_t n_ctx, DType kv_type,
                                std::span<const int32_t> layer_windows, int64_t n_batch, WindowedLayers windowed) {
  if (layer_windows.empty()) return kv_cache_bytes(n_layer, n_head_kv, head_dim, n_ctx, kv_type);
  if (static_cast<int64_t>(layer_windows.size()) != n_layer) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("KV cache size: {} layer windows for {} layers",
                                                              layer_windows.size(), n_layer));
  }
  // One layer at full context checks the counts, the type and overflow.
  HEARTH_TRY(const uint64_t full_layer, kv_cache_bytes(1, n_head_kv, head_dim, n_ctx, kv_type));
  const uint64_t per_position = full_layer / static_cast<uint64_t>(allocated_positions(n_ctx));
  std::optional<uint64_t> total = uint64_t{0};
  for (size_t l = 0; l < layer_windows.size() && total; ++l) {
    if (layer_windows[l] < 0) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("KV cache size: layer {} has a negative window {}", l, layer_windows[l]));
    }
    const int64_t positions = layer_positions(n_ctx, layer_windows[l], n_batch, windowed);
    const std::optional<uint64_t> layer = checked_mul(per_position, static_cast<uint64_t>(positions));
    total = layer ? checked_add(*total, *layer) : std::nullopt;
  }
  if (!total) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("KV cache size overflows 64 bits (n_layer {}, n_head_kv {}, head_dim {}, n_ctx {})",
                                  n_layer, n_head_kv, head_dim, n_ctx));
  }
  return *total;
}

Result<int64_t> parallel_pool_blocks(int64_t n_ctx, int64_t parallel) {
  if (n_ctx <= 0 || parallel <= 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("parallel KV needs positive counts (n_ctx {}, parallel {})", n_ctx, parallel));
  }
  const int64_t per_slot = allocated_positions(n_ctx) / kBlockTokens;
  if (parallel > (int64_t{1} << 31) / kBlockTokens / per_slot) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("parallel KV of {} slots of {} positions is too large", parallel, n_ctx));
  }
  return parallel * per_slot;
}

Result<uint64_t> parallel_kv_bytes(int64_t n_layer, int64_t n_head_kv, int64_t head_dim, int64_t n_ctx, DType kv_type,
                                   int64_t parallel) {
  HEARTH_TRY(const int64_t blocks, parallel_pool_blocks(n_ctx, parallel));
  return kv_cache_bytes(n_layer, n_head_kv, head_dim, blocks * kBlockTokens, kv_type);
}

}  // namespace hearth::kv
