// KV writes and attention over the block-paged KV cache. Attention is one fused
// pass per (query, head): scores, online softmax and the weighted sum of V rows
// without materializing the score matrix.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ops.h"
#include <hearth/engine/quant/fp16.h>
#include <hearth/engine/quant/reference.h>

#include "weight_rows.h"

namespace hearth::backend::cpu {
namespace {

uint8_t* kv_row(uint8_t* base, const KvView& kv, int32_t pos, int32_t head) {
  const int32_t block = kv.block_table[pos / kv.block_tokens];
  const int64_t index = (static_cast<int64_t>(block) * kv.n_head_kv + head) * kv.block_tokens + pos % kv.block_tokens;
  return base + static_cast<size_t>(index) * kv.row_bytes;
}

void store_row(const float* x, uint8_t* dst, const KvView& kv) {
  switch (kv.type) {
    case DType::F32: std::memcpy(dst, x, static_cast<size_t>(kv.head_dim) * 4); break;
    case DType::F16: {
      auto* h = reinterpret_cast<uint16_t*>(dst);
      for (int32_t i = 0; i < kv.head_dim; ++i) h[i] = quant::fp32_to_fp16(x[i]);
      break;
    }
    case DType::Q8_0: quant::quantize_row_q8_0(x, dst, kv.head_dim); break;
    default: break;  // rejected by supports()
  }
}

void load_row(const uint8_t* src, float* out, const KvView& kv) {
  row_to_f32(kv.type, src, out, kv.head_dim);
}

}  // namespace

void op_kv_store(const Node& n, ThreadPool&) {
  const KvView& kv = n.params.kv;
  const Tensor* k = n.src[0];
  const Tensor* v = n.src[1];
  const int32_t* pos = static_cast<const int32_t*>(n.src[2]->data);
  for (int64_t t = 0; t < k->ne[1]; ++t) {
    for (int32_t h = 0; h < kv.n_head_kv; ++h) {
      store_row(static_cast<const float*>(k->data) + t * k->ne[0] + h * kv.head_dim, kv_row(kv.k, kv, pos[t], h), kv);
      store_row(static_cast<const float*>(v->data) + t * v->ne[0] + h * kv.head_dim, kv_row(kv.v, kv, pos[t], h), kv);
    }
  }
}

void op_attention(const Node& n, ThreadPool& pool) {
  const KvView& kv = n.params.kv;
  const AttentionParams& p = n.params.attn;
  const Tensor* q = n.src[0];
  const int32_t* pos = static_cast<const int32_t*>(n.src[1]->data);
  const int64_t n_tok = q->ne[1];
  const int32_t group = p.n_head / p.n_head_kv;
  const int64_t hd = p.head_dim;
  pool.parallel_for(n_tok * p.n_head, 1, [&](int64_t b, int64_t e, int) {
    std::vector<float> buf(static_cast<size_t>(3 * hd));
    float* krow = buf.data();
    float* vrow = krow + hd;
    float* acc = vrow + hd;
    for (int64_t item = b; item < e; ++item) {
      const int64_t t = item / p.n_head;
      const int32_t h = static_cast<int32_t>(item % p.n_head);
      const int32_t kvh = h / group;
      const float* qrow = static_cast<const float*>(q->data) + t * q->ne[0] + h * hd;
      const int32_t last = pos[t];
      const int32_t first = p.window > 0 ? std::max(0, last - p.window + 1) : 0;
      float m = -std::numeric_limits<float>::infinity();
      float l = 0.0f;
      std::fill(acc, acc + hd, 0.0f);
      for (int32_t j = first; j <= last; ++j) {
        load_row(kv_row(kv.k, kv, j, kvh), krow, kv);
        float s = 0.0f;
        for (int64_t i = 0; i < hd; ++i) s += qrow[i] * krow[i];
        s *= p.scale;
        if (p.softcap > 0.0f) s = p.softcap * std::tanh(s / p.softcap);
        load_row(kv_row(kv.v, kv, j, kvh), vrow, kv);
        if (s > m) {
          const float c = std::exp(m - s);  // rescale what was accumulated under the old max
          l *= c;
          for (int64_t i = 0; i < hd; ++i) acc[i] *= c;
          m = s;
        }
        const float w = std::exp(s - m);
        l += w;
        for (int64_t i = 0; i < hd; ++i) acc[i] += w * vrow[i];
      }
      float* out = static_cast<float*>(n.dst->data) + t * n.dst->ne[0] + h * hd;
      const float inv = l > 0 ? 1.0f / l : 0.0f;
      for (int64_t i = 0; i < hd; ++i) out[i] = acc[i] * inv;
    }
  });
}

}  // namespace hearth::backend::cpu
