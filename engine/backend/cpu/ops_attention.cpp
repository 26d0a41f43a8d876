// KV writes and attention over the block-paged KV cache. Attention is one fused
// pass per (query, head): scores, online softmax and the weighted sum of V rows
// without materializing the score matrix.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ops.h"
#include <hearth/engine/quant/fp16.h>
#include <hearth/engine/quant/reference.h>

#include "weight_rows.h"

#if defined(HEARTH_BACKEND_X86) || defined(HEARTH_BACKEND_ARM)
#include "attention_fast.h"
#endif

namespace hearth::backend::cpu {
namespace {

#include "attention_tiles.inc"

void store_row(const float* x, uint8_t* dst, const KvView& kv, const quant::KernelTable& kt) {
  switch (kv.type) {
    case DType::F32: std::memcpy(dst, x, static_cast<size_t>(kv.head_dim) * 4); break;
    case DType::F16: kt.f32_to_f16(x, reinterpret_cast<uint16_t*>(dst), kv.head_dim); break;
    case DType::Q8_0: quant::quantize_row_q8_0(x, dst, kv.head_dim); break;
    default: break;  // rejected by supports()
  }
}

void load_row(const uint8_t* src, float* out, const KvView& kv, const quant::KernelTable& kt) {
  if (kv.type == DType::F16) {
    kt.f16_to_f32(reinterpret_cast<const uint16_t*>(src), out, kv.head_dim);
  } else {
    row_to_f32(kv.type, src, out, kv.head_dim);
  }
}

}  // namespace

void add_sink(float sink, float& m, float& l, float* acc, int64_t hd) {
  if (sink > m) {
    // The sink is the new maximum: what was accumulated shrinks under it.
    const float c = std::exp(m - sink);
    for (int64_t d = 0; d < hd; ++d) acc[d] *= c;
    l = l * c + 1.0f;
    m = sink;
  } else {
    l += std::exp(sink - m);
  }
}

void op_kv_store(const Node& n, ThreadPool& pool, const quant::KernelTable& kt) {
  const KvView& kv = n.params.kv;
  const Tensor* k = n.src[0];
  const Tensor* v = n.src[1];
  const int32_t* pos = static_cast<const int32_t*>(n.src[2]->data);
  // A prefill stores hundreds of tokens: split them across the threads
  // (every token writes its own rows).
  pool.parallel_for(k->ne[1], 16, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      const int32_t* table = token_block_table(kv, t);
      for (int32_t h = 0; h < kv.n_head_kv; ++h) {
        store_row(static_cast<const float*>(k->data) + t * k->ne[0] + h * kv.head_dim, kv_row(kv.k, kv, table, pos[t], h),
                  kv, kt);
        store_row(static_cast<const float*>(v->data) + t * v->ne[0] + h * kv.head_dim, kv_row(kv.v, kv, table, pos[t], h),
                  kv, kt);
      }
    }
  });
}

// Work items are (tile of queries, KV head). For each block of the cache the
// item converts that KV head's K and V rows to floats once and reuses them
// for every query of the tile and every query head that shares the KV head
// (grouped-query attention), so neither a long prefill nor a decode step
// converts a key once per query or per query head. Scores use the kernel
// table's F32 dot product.
void op_attention(const Node& n, ThreadPool& pool, const quant::KernelTable& kt) {
  const KvView& kv = n.params.kv;
  const AttentionParams& p = n.params.attn;
#if defined(HEARTH_BACKEND_X86)
  // The kernel table's level says what the CPU runs (and the reference
  // choice keeps this scalar path as the oracle).
  if (kt.level == quant::KernelLevel::Avx512 && attention_avx512_handles(p, kv)) {
    attention_avx512(n, pool);
    return;
  }
  if ((kt.level == quant::KernelLevel::Avx2 || kt.level == quant::KernelLevel::AvxVnni) &&
      attention_avx2_handles(p, kv)) {
    attention_avx2(n, pool);
    return;
  }
#elif defined(HEARTH_BACKEND_ARM)
  if (quant::is_neon_level(kt.level) && attention_neon_handles(p, kv)) {
    attention_neon(n, pool);
    return;
  }
#endif
  const Tensor* q = n.src[0];
  const int32_t* pos = static_cast<const int32_t*>(n.src[1]->data);
  const int64_t n_tok = q->ne[1];
  const int32_t group = p.n_head / p.n_head_kv;
  const int64_t hd = p.head_dim;
  const int64_t bt = kv.block_tokens;
  constexpr int64_t kTile = 16;
  const std::vector<QueryTile> tiles = query_tiles(kv, n_tok, kTile);
  const auto dot = kt.get(DType::F32).vec_dot;
  const float* sinks = n.src[2] ? static_cast<const float*>(n.src[2]->data) : nullptr;
  pool.parallel_for(static_cast<int64_t>(tiles.size()) * p.n_head_kv, 1, [&](int64_t b, int64_t e, int) {
    std::vector<float> kbuf(static_cast<size_t>(bt * hd)), vbuf(static_cast<size_t>(bt * hd));
    // One accumulator row, running max and sum per (query of the tile, head of the group).
    const auto slots = static_cast<size_t>(kTile * group);
    std::vector<float> acc(slots * static_cast<size_t>(hd)), m(slots), l(slots);
    for (int64_t item = b; item < e; ++item) {
      const QueryTile& tile = tiles[static_cast<size_t>(item / p.n_head_kv)];
      const auto kvh = static_cast<int32_t>(item % p.n_head_kv);
      const int64_t t0 = tile.t0, nt = tile.nt;
      const int32_t* table = token_block_table(kv, t0);
      int32_t lo = INT32_MAX, hi = 0;
      for (int64_t i = 0; i < nt; ++i) {
        const int32_t last = pos[t0 + i];
        lo = std::min(lo, p.window > 0 ? std::max(0, last - p.window + 1) : 0);
        hi = std::max(hi, last);
      }
      std::fill(acc.begin(), acc.end(), 0.0f);
      std::fill(m.begin(), m.end(), -std::numeric_limits<float>::infinity());
      std::fill(l.begin(), l.end(), 0.0f);
      for (int32_t j0 = lo / static_cast<int32_t>(bt) * static_cast<int32_t>(bt); j0 <= hi; j0 += static_cast<int32_t>(bt)) {
        const int32_t j1 = std::min<int32_t>(j0 + static_cast<int32_t>(bt) - 1, hi);
        for (int32_t j = std::max(j0, lo); j <= j1; ++j) {
          load_row(kv_row(kv.k, kv, table, j, kvh), kbuf.data() + (j - j0) * hd, kv, kt);
          load_row(kv_row(kv.v, kv, table, j, kvh), vbuf.data() + (j - j0) * hd, kv, kt);
        }
        for (int64_t i = 0; i < nt; ++i) {
          const int32_t last = pos[t0 + i];
          const int32_t first = p.window > 0 ? std::max(0, last - p.window + 1) : 0;
          for (int32_t g = 0; g < group; ++g) {
            const int32_t h = kvh * group + g;
            const auto slot = static_cast<size_t>(i * group + g);
            const float* qrow = static_cast<const float*>(q->data) + (t0 + i) * q->ne[0] + h * hd;
            float* a = acc.data() + slot * static_cast<size_t>(hd);
            for (int32_t j = std::max(j0, first); j <= std::min(j1, last); ++j) {
              float s = dot(hd, kbuf.data() + (j - j0) * hd, qrow) * p.scale;
              if (p.softcap > 0.0f) s = p.softcap * std::tanh(s / p.softcap);
              if (s > m[slot]) {
                const float c = std::exp(m[slot] - s);  // rescale what was accumulated under the old max
                l[slot] *= c;
                for (int64_t d = 0; d < hd; ++d) a[d] *= c;
                m[slot] = s;
              }
              const float w = std::exp(s - m[slot]);
              l[slot] += w;
              const float* v = vbuf.data() + (j - j0) * hd;
              for (int64_t d = 0; d < hd; ++d) a[d] += w * v[d];
            }
          }
        }
      }
      for (int64_t i = 0; i < nt; ++i) {
        for (int32_t g = 0; g < group; ++g) {
          const int32_t h = kvh * group + g;
          const auto slot = static_cast<size_t>(i * group + g);
          float* out = static_cast<float*>(n.dst->data) + (t0 + i) * n.dst->ne[0] + h * hd;
          if (sinks) add_sink(sinks[h], m[slot], l[slot], acc.data() + slot * static_cast<size_t>(hd), hd);
          const float inv = l[slot] > 0 ? 1.0f / l[slot] : 0.0f;
          for (int64_t d = 0; d < hd; ++d) out[d] = acc[slot * static_cast<size_t>(hd) + static_cast<size_t>(d)] * inv;
        }
      }
    }
  });
}

}  // namespace hearth::backend::cpu
