#include "hearth/engine/runtime/kv_shift.h"

#include <hearth/engine/backend/graph.h>
#include <hearth/engine/kv/kv_rows.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace hearth::runtime {
namespace {

uint8_t* k_row(const backend::KvView& v, int64_t pos, int64_t head) {
  const int64_t block = v.block_table[pos / v.block_tokens];
  const int64_t index = (block * v.n_head_kv + head) * v.block_tokens + pos % v.block_tokens;
  return v.k + static_cast<size_t>(index) * v.row_bytes;
}

// The rotation by delta alone: the magnitude scale (attn_factor, YaRN's mscale)
// was applied once when the key was computed and must not be applied again.
backend::RopeParams shift_params(const backend::RopeParams& p) {
  backend::RopeParams s = p;
  s.attn_factor = 1.0f;
  if (s.ext_factor != 0.0f && s.freq_scale > 0.0f) s.attn_factor = 1.0f / (1.0f + 0.1f * std::log(1.0f / s.freq_scale));
  return s;
}

}  // namespace

Status shift_keys(backend::Backend& backend, kv::KvCache& cache, const model::HParams& hp, int64_t begin, int64_t end,
                  int32_t delta) {
  const int64_t n = end - begin;
  if (n <= 0 || delta == 0) return {};
  const auto& c = cache.config();
  const int64_t width = c.n_head_kv * c.head_dim;
  std::vector<float> rows(static_cast<size_t>(width * n));
  std::vector<int32_t> deltas(static_cast<size_t>(n), delta);
  for (int64_t layer = 0; layer < c.n_layer; ++layer) {
    // Each layer's keys carry that layer's RoPE (Gemma 3's local base), or
    // none (SmolLM3's NoPE layers: nothing to rotate).
    const backend::RopeParams* layer_rope = hp.rope_of_layer(layer);
    if (!layer_rope) continue;
    const backend::RopeParams params = shift_params(*layer_rope);
    const backend::KvView v = cache.layer_view(layer);
    if (v.k == nullptr) return make_error(ErrorCode::Unsupported, "K shift: the KV cache is not host-visible");
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t h = 0; h < c.n_head_kv; ++h) {
        HEARTH_CHECK(quant::dequantize_row(c.type, k_row(v, begin + t, h), rows.data() + t * width + h * c.head_dim,
                                           c.head_dim));
      }
    }
    backend::Graph graph;
    backend::Tensor* x = graph.input(DType::F32, {width, n, 1, 1}, rows.data());
    backend::Tensor* pos = graph.input(DType::I32, {n, 1, 1, 1}, deltas.data());
    graph.set_layer(static_cast<int32_t>(layer));
    graph.output = graph.rope(x, pos, params);
    HEARTH_CHECK(backend.compute(graph));
    const float* out = graph.output->as<const float>();
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t h = 0; h < c.n_head_kv; ++h) {
        HEARTH_CHECK(quant::quantize_row(c.type, out + t * width + h * c.head_dim, k_row(v, begin + t, h), c.head_dim));
      }
    }
  }
  return {};
}

Status relocate_positions(backend::Backend& backend, kv::KvCache& cache, const model::HParams& hp, int64_t src,
                          int64_t dst, int64_t count) {
  HEARTH_CHECK(kv::move_positions(cache, src, dst, count));
  return shift_keys(backend, cache, hp, dst, dst + count, static_cast<int32_t>(dst - src));
}

}  // namespace hearth::runtime
