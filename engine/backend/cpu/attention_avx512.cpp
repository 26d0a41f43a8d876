// Blocked (flash-style) attention with AVX-512, for CPUs whose kernel table
// reached the Avx512 level. Compiled with AVX-512 flags; only called after
// that check, so the binary still runs anywhere.
//
// A work item is (tile of query tokens, KV head): the query rows of every head
// that shares the KV head (GQA) are processed together, so each cached K/V
// row is converted to floats once per item instead of once per query head.
// For each block of cached keys:
//   1. scores with the query rows in vector lanes: S[j][r] = q_r . k_j, the
//      queries transposed once per item (Qt[d][r], pre-scaled) and k_j[d]
//      broadcast, so no horizontal sums;
//   2. the online softmax also runs across rows in lanes: one running max,
//      one rescale factor and one vector exp per key, masked by position;
//   3. O_r = c_r O_r + sum_j p_rj v_j with the head dimension in lanes.
// Rows are padded to a multiple of 16; padded rows see no key (p = 0).
#include <immintrin.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include <hearth/engine/quant/blocks.h>

#include "attention_fast.h"
#include "attention_tiles.h"
#include "math_avx512.h"
#include "ops.h"

namespace hearth::backend::cpu {
namespace {

#include <hearth/engine/quant/isa_buffer.inc>

constexpr int kLanes = 16;
constexpr float kMasked = -1.0e30f;  // finite, so max/exp of masked lanes stay NaN-free

const uint8_t* kv_row(const uint8_t* base, const KvView& kv, const int32_t* table, int32_t pos, int32_t head) {
  const int32_t block = table[pos / kv.block_tokens];
  const int64_t index = (static_cast<int64_t>(block) * kv.n_head_kv + head) * kv.block_tokens + pos % kv.block_tokens;
  return base + static_cast<size_t>(index) * kv.row_bytes;
}

// One cached row (head_dim values, a multiple of 32) as floats.
void load_row(const uint8_t* src, float* out, const KvView& kv) {
  const int32_t hd = kv.head_dim;
  switch (kv.type) {
    case DType::F16:
      for (int32_t i = 0; i < hd; i += kLanes) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i));
        _mm512_storeu_ps(out + i, _mm512_cvtph_ps(h));
      }
      break;
    case DType::Q8_0: {
      const auto* blocks = reinterpret_cast<const quant::BlockQ8_0*>(src);
      for (int32_t b = 0; b < hd / 32; ++b) {
        const __m512 d = _mm512_set1_ps(_cvtsh_ss(blocks[b].d));
        for (int k = 0; k < 2; ++k) {
          const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[b].qs + 16 * k));
          _mm512_storeu_ps(out + 32 * b + 16 * k, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q))));
        }
      }
      break;
    }
    default: std::memcpy(out, src, static_cast<size_t>(hd) * sizeof(float)); break;
  }
}

struct Item {
  int64_t t0 = 0;   // first query token
  int64_t nt = 0;   // query tokens
  int32_t kvh = 0;  // KV head
};

// Per-thread buffers, sized once per op.
struct Scratch {
  IsaBuffer<float> qt;    // [d][row]          queries transposed, scaled
  IsaBuffer<float> s;     // [key][row]        scores, then probabilities
  IsaBuffer<float> o;     // [row][d]          running outputs
  IsaBuffer<float> m, l;  // [row]             running max and sum
  IsaBuffer<float> c;     // [row]             rescale factor of the current block
  IsaBuffer<int32_t> first, last;  // [row]    visible key range
  IsaBuffer<float> k, v;  // [key][d]          one block of K and V as floats
};

void run_item(const Node& n, const Item& it, Scratch& sc) {
  const KvView& kv = n.params.kv;
  const AttentionParams& p = n.params.attn;
  const Tensor* q = n.src[0];
  const auto* pos = static_cast<const int32_t*>(n.src[1]->data);
  const int32_t group = p.n_head / p.n_head_kv;
  const int64_t hd = p.head_dim;
  const int64_t rows = it.nt * group;                 // row = token * group + head in group
  const int64_t rp = (rows + kLanes - 1) / kLanes * kLanes;
  const int64_t chunks = rp / kLanes;
  const auto bt = kv.block_tokens;
  const int32_t* table = token_block_table(kv, it.t0);  // one sequence per item (query_tiles)
  // Queries, transposed and scaled; rows past `rows` are zero and see no key.
  std::fill(sc.qt.data(), sc.qt.data() + hd * rp, 0.0f);
  int32_t lo = INT32_MAX, hi = -1;
  for (int64_t r = 0; r < rp; ++r) {
    if (r < rows) {
      const int64_t t = it.t0 + r / group;
      const int64_t h = static_cast<int64_t>(it.kvh) * group + r % group;
      const float* qrow = static_cast<const float*>(q->data) + t * q->ne[0] + h * hd;
      for (int64_t d = 0; d < hd; ++d) sc.qt[static_cast<size_t>(d * rp + r)] = qrow[d] * p.scale;
      const int32_t last = pos[t];
      const int32_t first = p.window > 0 ? std::max(0, last - p.window + 1) : 0;
      sc.first[static_cast<size_t>(r)] = first;
      sc.last[static_cast<size_t>(r)] = last;
      lo = std::min(lo, first);
      hi = std::max(hi, last);
    } else {
      sc.first[static_cast<size_t>(r)] = INT32_MAX;
      sc.last[static_cast<size_t>(r)] = -1;
    }
    sc.m[static_cast<size_t>(r)] = kMasked;
    sc.l[static_cast<size_t>(r)] = 0.0f;
  }
  std::fill(sc.o.data(), sc.o.data() + rp * hd, 0.0f);
  for (int32_t j0 = lo / bt * bt; j0 <= hi; j0 += bt) {
    const int32_t ja = std::max(j0, lo), jb = std::min(j0 + bt - 1, hi);
    const int32_t nk = jb - ja + 1;
    for (int32_t j = ja; j <= jb; ++j) {
      load_row(kv_row(kv.k, kv, table, j, it.kvh), sc.k.data() + (j - ja) * hd, kv);
      load_row(kv_row(kv.v, kv, table, j, it.kvh), sc.v.data() + (j - ja) * hd, kv);
    }
    // 1 + 2: scores and the online softmax, rows in lanes.
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const int64_t r0 = ch * kLanes;
      const __m512i first = _mm512_loadu_si512(sc.first.data() + r0);
      const __m512i last = _mm512_loadu_si512(sc.last.data() + r0);
      const __m512 m_old = _mm512_loadu_ps(sc.m.data() + r0);
      __m512 m_new = m_old;
      // Four keys per pass share each load of the transposed queries.
      for (int32_t j4 = 0; j4 < nk; j4 += 4) {
        const int32_t kn = std::min(4, nk - j4);
        const float* krow[4];
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) krow[k] = sc.k.data() + (j4 + std::min(k, kn - 1)) * hd;
        const float* k0 = krow[0];
        const float* k1 = krow[1];
        const float* k2 = krow[2];
        const float* k3 = krow[3];
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
        const float* qcol = sc.qt.data() + r0;
        for (int64_t d = 0; d < hd; ++d) {
          const __m512 qd = _mm512_loadu_ps(qcol + d * rp);
          a0 = _mm512_fmadd_ps(qd, _mm512_set1_ps(k0[d]), a0);
          a1 = _mm512_fmadd_ps(qd, _mm512_set1_ps(k1[d]), a1);
          a2 = _mm512_fmadd_ps(qd, _mm512_set1_ps(k2[d]), a2);
          a3 = _mm512_fmadd_ps(qd, _mm512_set1_ps(k3[d]), a3);
        }
        const __m512 acc[4] = {a0, a1, a2, a3};
        for (int k = 0; k < kn; ++k) {
          __m512 s = acc[k];
          if (p.softcap > 0.0f) s = softcap512(s, p.softcap);
          const __m512i j = _mm512_set1_epi32(ja + j4 + k);
          const __mmask16 vis = _mm512_cmple_epi32_mask(first, j) & _mm512_cmple_epi32_mask(j, last);
          s = _mm512_mask_blend_ps(vis, _mm512_set1_ps(kMasked), s);
          _mm512_storeu_ps(sc.s.data() + (j4 + k) * rp + r0, s);
          m_new = _mm512_max_ps(m_new, s);
        }
      }
      const __m512 c = exp512(_mm512_sub_ps(m_old, m_new));
      __m512 l = _mm512_mul_ps(_mm512_loadu_ps(sc.l.data() + r0), c);
      for (int32_t jj = 0; jj < nk; ++jj) {
        float* srow = sc.s.data() + jj * rp + r0;
        const __m512 s = _mm512_loadu_ps(srow);
        // Masked keys get exactly 0, even in a row that has seen no key yet.
        const __mmask16 vis = _mm512_cmp_ps_mask(s, _mm512_set1_ps(kMasked), _CMP_GT_OQ);
        const __m512 e = _mm512_maskz_mov_ps(vis, exp512(_mm512_sub_ps(s, m_new)));
        _mm512_storeu_ps(srow, e);
        l = _mm512_add_ps(l, e);
      }
      _mm512_storeu_ps(sc.l.data() + r0, l);
      _mm512_storeu_ps(sc.m.data() + r0, m_new);
      _mm512_storeu_ps(sc.c.data() + r0, c);
    }
    // 3: outputs, head dimension in lanes: four rows at a time share each
    // load of a V row (4 x 4 accumulators for 64 dimensions).
    for (int64_t r4 = 0; r4 < rows; r4 += 4) {
      const int rn = static_cast<int>(std::min<int64_t>(4, rows - r4));
      for (int64_t d0 = 0; d0 < hd; d0 += 4 * kLanes) {
        const int dn = static_cast<int>(std::min<int64_t>(4, (hd - d0) / kLanes));
        __m512 acc[4][4];
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
          const int64_t r = r4 + std::min(i, rn - 1);
          const __m512 c = _mm512_set1_ps(sc.c[static_cast<size_t>(r)]);
#pragma GCC unroll 4
          for (int k = 0; k < 4; ++k) {
            acc[i][k] = k < dn ? _mm512_mul_ps(_mm512_loadu_ps(sc.o.data() + r * hd + d0 + k * kLanes), c)
                               : _mm512_setzero_ps();
          }
        }
        // Rows past rn repeat the last row (not stored); dimensions past dn
        // multiply zeros (head_dim 96: one half-used step).
        int ri[4];
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) ri[i] = std::min(i, rn - 1);
        const __mmask16 live[4] = {dn > 0 ? __mmask16(0xFFFF) : __mmask16(0), dn > 1 ? __mmask16(0xFFFF) : __mmask16(0),
                                   dn > 2 ? __mmask16(0xFFFF) : __mmask16(0), dn > 3 ? __mmask16(0xFFFF) : __mmask16(0)};
        for (int32_t jj = 0; jj < nk; ++jj) {
          const float* vrow = sc.v.data() + jj * hd + d0;
          const float* prow = sc.s.data() + jj * rp + r4;
          __m512 vv[4];
#pragma GCC unroll 4
          for (int k = 0; k < 4; ++k) vv[k] = _mm512_maskz_loadu_ps(live[k], vrow + k * kLanes);
#pragma GCC unroll 4
          for (int i = 0; i < 4; ++i) {
            const __m512 pj = _mm512_set1_ps(prow[ri[i]]);
#pragma GCC unroll 4
            for (int k = 0; k < 4; ++k) acc[i][k] = _mm512_fmadd_ps(pj, vv[k], acc[i][k]);
          }
        }
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
#pragma GCC unroll 4
          for (int k = 0; k < 4; ++k) {
            if (i < rn && k < dn) _mm512_storeu_ps(sc.o.data() + (r4 + i) * hd + d0 + k * kLanes, acc[i][k]);
          }
        }
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t t = it.t0 + r / group;
    const int64_t h = static_cast<int64_t>(it.kvh) * group + r % group;
    float* out = static_cast<float*>(n.dst->data) + t * n.dst->ne[0] + h * hd;
    if (n.src[2]) {
      add_sink(static_cast<const float*>(n.src[2]->data)[h], sc.m[static_cast<size_t>(r)], sc.l[static_cast<size_t>(r)],
               sc.o.data() + r * hd, hd);
    }
    const float lr = sc.l[static_cast<size_t>(r)];
    const __m512 inv = _mm512_set1_ps(lr > 0 ? 1.0f / lr : 0.0f);
    for (int64_t d = 0; d < hd; d += kLanes) {
      _mm512_storeu_ps(out + d, _mm512_mul_ps(_mm512_loadu_ps(sc.o.data() + r * hd + d), inv));
    }
  }
}

}  // namespace

bool attention_avx512_handles(const AttentionParams& p, const KvView& kv) {
  const bool type_ok = kv.type == DType::F16 || kv.type == DType::F32 || kv.type == DType::Q8_0;
  return type_ok && p.head_dim % 32 == 0 && p.n_head_kv > 0 && p.n_head % p.n_head_kv == 0 && kv.block_tokens > 0;
}

void attention_avx512(const Node& n, ThreadPool& pool) {
  const KvView& kv = n.params.kv;
  const AttentionParams& p = n.params.attn;
  const int64_t n_tok = n.src[0]->ne[1];
  const int32_t group = p.n_head / p.n_head_kv;
  const int64_t hd = p.head_dim;
  // About 64 query rows per item: enough rows to share each converted K/V
  // block, few enough that a prefill still has many items per thread.
  const int64_t tile = std::max<int64_t>(1, 64 / group);
  const std::vector<QueryTile> tiles = query_tiles(kv, n_tok, tile);
  const int64_t rp = (tile * group + kLanes - 1) / kLanes * kLanes;
  const auto bt = static_cast<size_t>(kv.block_tokens);
  pool.parallel_for(static_cast<int64_t>(tiles.size()) * p.n_head_kv, 1, [&](int64_t b, int64_t e, int) {
    Scratch sc;
    const auto rows = static_cast<size_t>(rp), dim = static_cast<size_t>(hd);
    sc.qt.reset(dim * rows);
    sc.s.reset(bt * rows);
    sc.o.reset(rows * dim);
    sc.m.reset(rows);
    sc.l.reset(rows);
    sc.c.reset(rows);
    sc.first.reset(rows);
    sc.last.reset(rows);
    sc.k.reset(bt * dim);
    sc.v.reset(bt * dim);
    for (int64_t i = b; i < e; ++i) {
      Item it;
      const QueryTile& qt = tiles[static_cast<size_t>(i / p.n_head_kv)];
      it.t0 = qt.t0;
      it.nt = qt.nt;
      it.kvh = static_cast<int32_t>(i % p.n_head_kv);
      run_item(n, it, sc);
    }
  });
}

}  // namespace hearth::backend::cpu
