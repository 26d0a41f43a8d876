#include "hearth/engine/kv/kv_rows.h"

#include <fmt/format.h>

#include <cstring>

namespace hearth::kv {
namespace {

// Address of the row of (position, head) in one half (K or V) of a layer view.
uint8_t* row_at(uint8_t* base, const backend::KvView& v, int64_t pos, int64_t head) {
  const int64_t block = v.block_table[pos / v.block_tokens];
  const int64_t index = (block * v.n_head_kv + head) * v.block_tokens + pos % v.block_tokens;
  return base + static_cast<size_t>(index) * v.row_bytes;
}

Status check_range(const KvCache& cache, int64_t begin, int64_t count, const char* what) {
  if (begin < 0 || count < 0 || begin + count > cache.capacity()) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("{}: positions {}..{} are outside the KV cache of {}",
                                                              what, begin, begin + count, cache.capacity()));
  }
  if (cache.config().n_layer > 0 && cache.layer_view(0).k == nullptr) {
    return make_error(ErrorCode::Unsupported, fmt::format("{}: the KV cache is not host-visible", what));
  }
  return {};
}

// Calls fn(row_pointer) for every row of [begin, begin+count) in the
// serialisation order.
template <typename Fn>
void for_each_row(const KvCache& cache, int64_t begin, int64_t count, Fn&& fn) {
  const auto& c = cache.config();
  for (int64_t layer = 0; layer < c.n_layer; ++layer) {
    const backend::KvView v = cache.layer_view(layer);
    for (uint8_t* half : {v.k, v.v}) {
      for (int64_t h = 0; h < c.n_head_kv; ++h) {
        for (int64_t p = begin; p < begin + count; ++p) fn(row_at(half, v, p, h), v.row_bytes);
      }
    }
  }
}

}  // namespace

uint64_t position_span_bytes(const KvCache& cache, int64_t count) {
  const auto& c = cache.config();
  const uint64_t row = c.n_layer > 0 ? cache.layer_view(0).row_bytes : 0;
  return 2ull * static_cast<uint64_t>(c.n_layer * c.n_head_kv) * row * static_cast<uint64_t>(count);
}

Result<std::vector<uint8_t>> read_positions(const KvCache& cache, int64_t begin, int64_t end) {
  HEARTH_CHECK(check_range(cache, begin, end - begin, "read KV rows"));
  std::vector<uint8_t> out(position_span_bytes(cache, end - begin));
  size_t at = 0;
  for_each_row(cache, begin, end - begin, [&](const uint8_t* row, size_t n) {
    std::memcpy(out.data() + at, row, n);
    at += n;
  });
  return out;
}

Status write_positions(KvCache& cache, int64_t begin, std::span<const uint8_t> payload) {
  const uint64_t per_pos = position_span_bytes(cache, 1);
  if (per_pos == 0 || payload.size() % per_pos != 0) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("KV payload of {} bytes is not whole positions of {} bytes", payload.size(), per_pos));
  }
  const int64_t count = static_cast<int64_t>(payload.size() / per_pos);
  HEARTH_CHECK(check_range(cache, begin, count, "write KV rows"));
  // Rows written here may wrap around a ring or fill it only partly; rather
  // than track which survive, the rings are not trusted afterwards (the
  // session prefills again when a window needs them).
  cache.invalidate_rings();
  size_t at = 0;
  for_each_row(cache, begin, count, [&](uint8_t* row, size_t n) {
    std::memcpy(row, payload.data() + at, n);
    at += n;
  });
  return {};
}

Status move_positions(KvCache& cache, int64_t src, int64_t dst, int64_t count) {
  HEARTH_CHECK(check_range(cache, src, count, "move KV rows"));
  HEARTH_CHECK(check_range(cache, dst, count, "move KV rows"));
  if (src == dst || count == 0) return {};
  cache.invalidate_rings();  // as in write_positions
  const auto& c = cache.config();
  for (int64_t layer = 0; layer < c.n_layer; ++layer) {
    const backend::KvView v = cache.layer_view(layer);
    for (uint8_t* half : {v.k, v.v}) {
      for (int64_t h = 0; h < c.n_head_kv; ++h) {
        // Front to back when moving down, back to front when moving up, so no
        // row is overwritten before it is copied.
        for (int64_t i = 0; i < count; ++i) {
          const int64_t k = dst < src ? i : count - 1 - i;
          std::memmove(row_at(half, v, dst + k, h), row_at(half, v, src + k, h), v.row_bytes);
        }
      }
    }
  }
  return {};
}

}  // namespace hearth::kv
