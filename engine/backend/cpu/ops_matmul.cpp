// Weight x activation products through hearth_quant's kernel table. The
// activations are converted once per op to the format the weight type's dot
// product wants (Q8_0 / Q8_K blocks for integer dot products, F32 otherwise).
// Decode (one token) streams each weight row once, rows split across threads
// in chunks; prefill runs the table's GEMM tile kernel on (row tile x token
// tile) work items so each weight block is unpacked once per group of tokens.
#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstring>
#include <vector>

#include "ops.h"
#include "weight_rows.h"

namespace hearth::backend::cpu {
namespace {

constexpr int64_t kDecodeRowGrain = 32;
// The GEMM kernel repacks 16 weight rows at a time and amortizes that over
// every token it is given, so work items are row tiles (a multiple of 16)
// times up to kTileTokens tokens (a multiple of quant::kPrefillColGroup).
// With the two-step tiles the activations are converted once per product,
// so row tiles can stay small enough to give even a 512-row K or V
// projection four items for the threads to share.
constexpr int64_t kTileRows = 128;
constexpr int64_t kTileTokens = 512;
static_assert(kTileTokens % quant::kPrefillColGroup == 0, "token tiles start on whole prepared groups");

// Decode row ranges, claimed from a shared cursor in guided sizes: a
// claim takes a quarter of what is left for two threads (an eighth for
// four...), at least kDecodeRowGrain rows. The first ranges are long, so
// each thread streams long contiguous stretches (the kernels' prefetch runs
// ahead within a range, the hardware prefetchers see long streams); the
// last ones are short, so the threads finish together, and a thread that
// was interrupted leaves its share to the other.
template <typename Fn>
void for_guided_rows(ThreadPool& pool, int64_t rows, const Fn& fn) {
  const int64_t threads = pool.size();
  std::atomic<int64_t> cursor{0};
  pool.parallel_for(threads, 1, [&](int64_t, int64_t, int) {
    int64_t b = cursor.load(std::memory_order_relaxed);
    for (;;) {
      int64_t e = 0;
      do {
        if (b >= rows) return;
        const int64_t share = (rows - b) / (2 * threads);
        e = std::min(rows, b + std::max(kDecodeRowGrain, (share + 15) / 16 * 16));
      } while (!cursor.compare_exchange_weak(b, e, std::memory_order_relaxed));
      fn(b, e);
      b = cursor.load(std::memory_order_relaxed);
    }
  });
}

// Each part of the matmul scratch starts on a cache line.
size_t align_up(size_t bytes) { return (bytes + 63) / 64 * 64; }

void add_bias(float* y, const float* bias, int64_t rows, int64_t n_tok) {
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t r = 0; r < rows; ++r) y[t * rows + r] += bias[r];
  }
}

// Types the kernel table does not cover: convert rows to floats.
void matmul_by_rows(const Node& n, ThreadPool& pool) {
  const Tensor* w = n.src[0];
  const Tensor* x = n.src[1];
  const DType wt = w->type;
  const int64_t rows = w->ne[1], cols = w->ne[0], n_tok = x->ne[1];
  const size_t rb = w->row_bytes();
  const auto* wdata = static_cast<const uint8_t*>(w->data);
  const float* xd = static_cast<const float*>(x->data);
  float* y = static_cast<float*>(n.dst->data);
  pool.parallel_for(rows, n_tok == 1 ? 16 : 4, [&](int64_t b, int64_t e, int) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = b; r < e; ++r) {
      row_to_f32(wt, wdata + r * rb, row.data(), cols);
      for (int64_t t = 0; t < n_tok; ++t) {
        const float* xr = xd + t * cols;
        float s = 0;
        for (int64_t i = 0; i < cols; ++i) s += row[static_cast<size_t>(i)] * xr[i];
        y[t * rows + r] = s;
      }
    }
  });
}

}  // namespace

bool is_decode_matmul(const Node& n, const quant::KernelTable& kt) {
  if (n.op != Op::MatMul || n.src[1]->ne[1] != 1 || !kt.supports(n.src[0]->type)) return false;
  return kt.get(n.src[0]->type).decode.rows != nullptr;
}

namespace {

bool overlaps(const Tensor* a, const Tensor* b) {
  const auto* pa = static_cast<const uint8_t*>(a->data);
  const auto* pb = static_cast<const uint8_t*>(b->data);
  return pa < pb + b->bytes() && pb < pa + a->bytes();
}

}  // namespace

bool can_share_decode(const Node& first, const Node& next, const quant::KernelTable& kt) {
  if (!is_decode_matmul(first, kt) || !is_decode_matmul(next, kt)) return false;
  const Tensor* x = first.src[1];
  if (next.src[1] != x || next.src[0]->ne[0] != first.src[0]->ne[0]) return false;
  const quant::TypeKernels& a = kt.get(first.src[0]->type);
  const quant::TypeKernels& b = kt.get(next.src[0]->type);
  // One converted activation and one prepared layout serve both.
  if (a.act_type != b.act_type || a.decode.prepare != b.decode.prepare) return false;
  // The two products run at the same time: neither output may share memory
  // with the other or with the input they both read.
  return !overlaps(next.dst, first.dst) && !overlaps(next.dst, x);
}

void op_matmul_decode_group(std::span<const Node* const> nodes, ThreadPool& pool, const quant::KernelTable& kt,
                            MatmulScratch& scratch) {
  const Node& first = *nodes.front();
  const Tensor* x = first.src[1];
  const int64_t cols = x->ne[0];
  const quant::TypeKernels& k0 = kt.get(first.src[0]->type);
  const size_t act_bytes =
      align_up(static_cast<size_t>(cols / traits(k0.act_type).block_elements) * traits(k0.act_type).block_bytes);
  const size_t prepared_bytes = k0.decode.prepare ? align_up(k0.decode.prepared_bytes(cols)) : 0;
  if (scratch.buffer.size() < act_bytes + prepared_bytes) scratch.buffer.resize(act_bytes + prepared_bytes);
  uint8_t* act = scratch.buffer.data();
  kt.quantize_activation(k0.act_type, static_cast<const float*>(x->data), act, cols);
  // The multi-row kernels read the activation in their own layout, made once
  // here (a few KB) for every product of the group.
  const uint8_t* rows_act = act;
  if (k0.decode.prepare) {
    k0.decode.prepare(act, act + act_bytes, cols);
    rows_act = act + act_bytes;
  }
  // The products' rows as one range, so the threads share them all with one
  // guided split and meet once at the end instead of once per product.
  struct Part {
    const quant::TypeKernels* k;
    const uint8_t* w;
    size_t rb;
    float* y;
    int64_t first_row;
  };
  std::array<Part, kMaxDecodeGroup> parts{};
  assert(nodes.size() <= parts.size());
  int64_t total = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Tensor* w = nodes[i]->src[0];
    parts[i] = {&kt.get(w->type), static_cast<const uint8_t*>(w->data), w->row_bytes(),
                static_cast<float*>(nodes[i]->dst->data), total};
    total += w->ne[1];
  }
  const size_t n_parts = nodes.size();
  for_guided_rows(pool, total, [&](int64_t b, int64_t e) {
    size_t i = 0;
    while (i + 1 < n_parts && parts[i + 1].first_row <= b) ++i;
    for (; b < e; ++i) {
      const Part& part = parts[i];
      const int64_t part_end = i + 1 < n_parts ? parts[i + 1].first_row : total;
      const int64_t stop = std::min(e, part_end);
      const int64_t r = b - part.first_row;
      part.k->decode.rows(cols, part.w + static_cast<size_t>(r) * part.rb, part.rb, stop - b, rows_act, part.y + r);
      b = stop;
    }
  });
  for (const Node* n : nodes) {
    if (n->src[2]) add_bias(static_cast<float*>(n->dst->data), static_cast<const float*>(n->src[2]->data), n->src[0]->ne[1], 1);
  }
}

void run_decode_parts(std::span<const DecodePart> parts, int64_t cols, ThreadPool& pool) {
  std::vector<int64_t> first(parts.size() + 1, 0);
  for (size_t i = 0; i < parts.size(); ++i) first[i + 1] = first[i] + parts[i].rows;
  const int64_t total = first.back();
  for_guided_rows(pool, total, [&](int64_t b, int64_t e) {
    size_t i = 0;
    while (first[i + 1] <= b) ++i;
    for (; b < e; ++i) {
      const DecodePart& part = parts[i];
      const int64_t stop = std::min(e, first[i + 1]);
      const int64_t r = b - first[i];
      const uint8_t* w = part.w + static_cast<size_t>(r) * part.rb;
      if (part.k->decode.rows) {
        part.k->decode.rows(cols, w, part.rb, stop - b, part.act, part.y + r);
      } else {
        for (int64_t j = 0; j < stop - b; ++j) part.y[r + j] = part.k->vec_dot(cols, w + static_cast<size_t>(j) * part.rb, part.act);
      }
      b = stop;
    }
  });
}

bool is_rows_batch_matmul(const Node& n, const quant::KernelTable& kt) {
  if (n.op != Op::MatMul || n.src[1]->ne[1] > kMaxRowsBatch || !kt.supports(n.src[0]->type)) return false;
  return kt.get(n.src[0]->type).decode.rows != nullptr;
}

void op_matmul_rows_batch(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch) {
  const Tensor* w = n.src[0];
  const Tensor* x = n.src[1];
  const int64_t rows = w->ne[1], cols = w->ne[0], n_tok = x->ne[1];
  const quant::TypeKernels& k = kt.get(w->type);
  const size_t act_bytes =
      align_up(static_cast<size_t>(cols / traits(k.act_type).block_elements) * traits(k.act_type).block_bytes);
  const size_t prepared_bytes = k.decode.prepare ? align_up(k.decode.prepared_bytes(cols)) : 0;
  const size_t per_token = act_bytes + prepared_bytes;
  if (scratch.buffer.size() < per_token * static_cast<size_t>(n_tok)) scratch.buffer.resize(per_token * static_cast<size_t>(n_tok));
  uint8_t* base = scratch.buffer.data();
  const float* xd = static_cast<const float*>(x->data);
  pool.parallel_for(n_tok, 1, [&](int64_t b, int64_t e, int) {
    for (int64_t t = b; t < e; ++t) {
      uint8_t* act = base + static_cast<size_t>(t) * per_token;
      kt.quantize_activation(k.act_type, xd + t * cols, act, cols);
      if (k.decode.prepare) k.decode.prepare(act, act + act_bytes, cols);
    }
  });
  const size_t rb = w->row_bytes();
  const auto* wdata = static_cast<const uint8_t*>(w->data);
  float* y = static_cast<float*>(n.dst->data);
  // About 64 KB of weights per block: read from memory by the first token,
  // from cache by the others.
  const int64_t block = std::max<int64_t>(16, static_cast<int64_t>((64u << 10) / rb) / 16 * 16);
  const size_t act_offset = k.decode.prepare ? act_bytes : 0;
  for_guided_rows(pool, rows, [&](int64_t b, int64_t e) {
    for (int64_t r0 = b; r0 < e; r0 += block) {
      const int64_t nr = std::min(block, e - r0);
      if (k.decode.rows_multi) {
        // The block's weights unpacked once for every token.
        k.decode.rows_multi(cols, wdata + static_cast<size_t>(r0) * rb, rb, nr, base + act_offset, per_token, n_tok,
                            y + r0, static_cast<size_t>(rows));
        continue;
      }
      for (int64_t t = 0; t < n_tok; ++t) {
        const uint8_t* act = base + static_cast<size_t>(t) * per_token + (k.decode.prepare ? act_bytes : 0);
        k.decode.rows(cols, wdata + static_cast<size_t>(r0) * rb, rb, nr, act, y + t * rows + r0);
      }
    }
  });
  if (n.src[2]) add_bias(y, static_cast<const float*>(n.src[2]->data), rows, n_tok);
}

void op_matmul(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch) {
  const Tensor* w = n.src[0];
  const Tensor* x = n.src[1];
  const int64_t rows = w->ne[1], cols = w->ne[0], n_tok = x->ne[1];
  float* y = static_cast<float*>(n.dst->data);
  if (is_decode_matmul(n, kt)) {
    const Node* one[] = {&n};
    op_matmul_decode_group(one, pool, kt, scratch);
    return;
  }
  if (!kt.supports(w->type)) {
    matmul_by_rows(n, pool);
  } else {
    const quant::TypeKernels& k = kt.get(w->type);
    const size_t ab = static_cast<size_t>(cols / traits(k.act_type).block_elements) * traits(k.act_type).block_bytes;
    const bool prefill_tiles = n_tok > kMaxRowsBatch && k.prefill.gemm;
    // The scratch layout of this product: converted activations, then the
    // kernel's own layout of them, then one weight tile per thread.
    const size_t act_bytes = align_up(ab * static_cast<size_t>(n_tok));
    size_t prepared_bytes = 0, tile_bytes = 0;
    if (prefill_tiles) {
      prepared_bytes = align_up(k.prefill.prepared_bytes(cols, n_tok));
      tile_bytes = align_up(k.prefill.tile_bytes(cols));
    }
    const size_t need = act_bytes + prepared_bytes + tile_bytes * static_cast<size_t>(pool.size());
    if (scratch.buffer.size() < need) scratch.buffer.resize(need);
    uint8_t* act = scratch.buffer.data();
    uint8_t* prepared = act + act_bytes;
    uint8_t* tiles = prepared + prepared_bytes;

    const float* xd = static_cast<const float*>(x->data);
    pool.parallel_for(n_tok, 4, [&](int64_t b, int64_t e, int) {
      for (int64_t t = b; t < e; ++t) kt.quantize_activation(k.act_type, xd + t * cols, act + t * ab, cols);
    });
    const size_t rb = w->row_bytes();
    const auto* wdata = static_cast<const uint8_t*>(w->data);
    const int64_t row_tiles = (rows + kTileRows - 1) / kTileRows;
    const int64_t tok_tiles = (n_tok + kTileTokens - 1) / kTileTokens;
    if (n_tok <= kMaxRowsBatch) {
      // One token, or a few (a verify pass, a scheduler step) of a type
      // without decode kernels: the row dot per token, so each token gets
      // exactly its one-token result; a row is read from memory once and
      // from cache for the other tokens.
      pool.parallel_for(rows, kDecodeRowGrain, [&](int64_t b, int64_t e, int) {
        for (int64_t r = b; r < e; ++r) {
          for (int64_t t = 0; t < n_tok; ++t) y[t * rows + r] = k.vec_dot(cols, wdata + r * rb, act + t * ab);
        }
      });
    } else if (prefill_tiles) {
      // Activations prepared once for every tile (in groups of tokens split
      // across the threads), then the tiles.
      const quant::PrefillKernels& pf = k.prefill;
      const int64_t groups = (n_tok + quant::kPrefillColGroup - 1) / quant::kPrefillColGroup;
      pool.parallel_for(groups, 4, [&](int64_t b, int64_t e, int) {
        const int64_t c0 = b * quant::kPrefillColGroup;
        pf.prepare(cols, act, ab, c0, std::min(n_tok, e * quant::kPrefillColGroup) - c0, prepared);
      });
      pool.parallel_for(row_tiles * tok_tiles, 1, [&](int64_t b, int64_t e, int thread) {
        for (int64_t item = b; item < e; ++item) {
          const int64_t rt = item / tok_tiles, tt = item % tok_tiles;
          const int64_t r0 = rt * kTileRows, t0 = tt * kTileTokens;
          const int64_t nr = std::min(kTileRows, rows - r0), nt = std::min(kTileTokens, n_tok - t0);
          pf.gemm(cols, wdata + r0 * rb, rb, nr, prepared, t0, nt, y + t0 * rows + r0, static_cast<size_t>(rows),
                  tiles + tile_bytes * static_cast<size_t>(thread));
        }
      });
    } else {
      // Token tiles outermost inside a row tile's neighbourhood: consecutive
      // items share the weight tile, which stays in L2.
      pool.parallel_for(row_tiles * tok_tiles, 1, [&](int64_t b, int64_t e, int) {
        for (int64_t item = b; item < e; ++item) {
          const int64_t rt = item / tok_tiles, tt = item % tok_tiles;
          const int64_t r0 = rt * kTileRows, t0 = tt * kTileTokens;
          const int64_t nr = std::min(kTileRows, rows - r0), nt = std::min(kTileTokens, n_tok - t0);
          k.gemm(cols, wdata + r0 * rb, rb, nr, act + t0 * ab, ab, nt, y + t0 * rows + r0, static_cast<size_t>(rows));
        }
      });
    }
  }
  if (n.src[2]) add_bias(y, static_cast<const float*>(n.src[2]->data), rows, n_tok);
}

}  // namespace hearth::backend::cpu
