// Weight x activation products through hearth_quant's kernel table. The
// activations are converted once per op to the format the weight type's dot
// product wants (Q8_0 / Q8_K blocks for integer dot products, F32 otherwise).
// Decode (one token) streams each weight row once, rows split across threads
// in chunks; prefill runs the table's GEMM tile kernel on (row tile x token
// tile) work items so each weight block is unpacked once per group of tokens.
#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <memory>
#include <vector>

#include <hearth/engine/backend/weight_layout.h>
#include <hearth/engine/quant/interleave.h>

#include "ops.h"
#include "row_claims.h"
#include "weight_rows.h"

namespace hearth::backend::cpu {
namespace {

constexpr int64_t kDecodeRowGrain = 32;
// A scheduler step's few tokens are converted on the calling thread up to
// this many values: splitting eight tokens of 896 values across the threads
// cost more in the extra meeting of the threads than it saved (Qwen2.5-0.5B,
// eight streams: 4.2-5.0 us per product before its rows, 2.1-3.7 on one
// thread, in bench_scheduler with a timer around the conversion).
constexpr int64_t kSerialConvertValues = 8 * 1024;
// The last claims of a product of several tokens: each row costs that many
// times more than in decode, so claims as small as the interleaved kernels
// take (one group) let the threads finish closer together. With eight
// streams decoding Qwen2.5-0.5B (bench_scheduler), the threads' waits at
// the ends of parallel ops fell from 500 to 467 ms over the run (three
// alternated runs of each).
constexpr int64_t kBatchRowGrain = 16;
// The GEMM kernel repacks 16 weight rows at a time and amortizes that over
// every token it is given, so work items are row tiles (a multiple of 16)
// times up to kTileTokens tokens (a multiple of quant::kPrefillColGroup).
// With the two-step tiles the activations are converted once per product,
// so row tiles can be small (prompt_tile_rows) without converting more.
constexpr int64_t kTileRows = 128;
constexpr int64_t kTileTokens = 512;
static_assert(kTileTokens % quant::kPrefillColGroup == 0, "token tiles start on whole prepared groups");

// Rows per work item of the two-step prompt tiles: up to kTileRows, but few
// enough that each thread gets about eight items. Qwen2.5-0.5B's 128-row K and V projections
// were one item each, which one thread ran while the other waited, and its
// 896-row ones seven (four against three). The kernels work through 32 rows
// at a time whatever the item, so smaller items convert and read nothing more.
constexpr int64_t kPromptRowStep = 32;  // the prompt kernels' row tile
int64_t prompt_tile_rows(int64_t rows, int threads) {
  constexpr int64_t kItemsPerThread = 8, kRowStep = kPromptRowStep;
  const int64_t items = static_cast<int64_t>(threads) * kItemsPerThread;
  const int64_t want = (rows + items - 1) / items;
  return std::clamp<int64_t>((want + kRowStep - 1) / kRowStep * kRowStep, kRowStep, kTileRows);
}

// The rows of several products as one range (product i owns rows
// [first[i], first[i + 1])), with one guided split across the threads and
// one meeting at the end instead of one per product: fn(i, r, n) computes
// rows [r, r + n) of product i.
template <typename Fn>
void for_guided_part_rows(ThreadPool& pool, std::span<const int64_t> first, int64_t min_claim, const Fn& fn) {
  for_guided_rows(pool, first.back(), min_claim, 16, [&](int64_t b, int64_t e, int) {
    size_t i = 0;
    while (first[i + 1] <= b) ++i;
    for (; b < e; ++i) {
      const int64_t stop = std::min(e, first[i + 1]);
      fn(i, b - first[i], stop - b);
      b = stop;
    }
  });
}

// Work items of tile_rows rows x kTileTokens tokens, token tiles innermost
// (consecutive items share the weight tile, which stays in L2): fn(r0, nr,
// t0, nt, thread) computes rows [r0, r0 + nr) x tokens [t0, t0 + nt).
template <typename Fn>
void for_tile_items(ThreadPool& pool, int64_t rows, int64_t tile_rows, int64_t n_tok, const Fn& fn) {
  const int64_t row_tiles = (rows + tile_rows - 1) / tile_rows;
  const int64_t tok_tiles = (n_tok + kTileTokens - 1) / kTileTokens;
  pool.parallel_for(row_tiles * tok_tiles, 1, [&](int64_t b, int64_t e, int thread) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t r0 = item / tok_tiles * tile_rows, t0 = item % tok_tiles * kTileTokens;
      fn(r0, std::min(tile_rows, rows - r0), t0, std::min(kTileTokens, n_tok - t0), thread);
    }
  });
}

// Each part of the matmul scratch starts on a cache line.
size_t align_up(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Types the kernel table does not cover: convert rows to floats.
void matmul_by_rows(const Node& n, ThreadPool& pool) {
  const Tensor* w = n.src[0];
  const Tensor* x = n.src[1];
  const DType wt = w->type;
  const int64_t rows = w->ne[1], cols = w->ne[0], n_tok = x->ne[1];
  const size_t rb = w->row_bytes();
  const float* xd = static_cast<const float*>(x->data);
  float* y = static_cast<float*>(n.dst->data);
  pool.parallel_for(rows, n_tok == 1 ? 16 : 4, [&](int64_t b, int64_t e, int) {
    std::vector<float> row(static_cast<size_t>(cols));
    std::vector<uint8_t> scratch(w->layout == WeightLayout::Plain ? 0 : rb);
    for (int64_t r = b; r < e; ++r) {
      row_to_f32(wt, plain_rows(*w, r, 1, scratch.data()), row.data(), cols);
      for (int64_t t = 0; t < n_tok; ++t) {
        const float* xr = xd + t * cols;
        float s = 0;
        for (int64_t i = 0; i < cols; ++i) s += row[static_cast<size_t>(i)] * xr[i];
        y[t * rows + r] = s;
      }
    }
  });
}

// The decode kernels for weight `w` in its layout, or nullptr where the
// level has none (op_matmul then runs the row dots or tiles).
const quant::DecodeKernels* decode_kernels(const Tensor& w, const quant::KernelTable& kt) {
  if (!kt.supports(w.type)) return nullptr;
  const quant::TypeKernels& k = kt.get(w.type);
  const quant::DecodeKernels& d = w.layout == WeightLayout::Interleaved16 ? k.interleaved.decode : k.decode;
  return d.rows ? &d : nullptr;
}

}  // namespace

bool is_decode_matmul(const Node& n, const quant::KernelTable& kt) {
  return n.op == Op::MatMul && n.src[1]->ne[1] == 1 && decode_kernels(*n.src[0], kt) != nullptr;
}

namespace {

bool overlaps(const Tensor* a, const Tensor* b) {
  const auto* pa = static_cast<const uint8_t*>(a->data);
  const auto* pb = static_cast<const uint8_t*>(b->data);
  return pa < pb + b->bytes() && pb < pa + a->bytes();
}

}  // namespace

namespace {

// Whether two products of the same input, each already known to take the
// decode kernels, can share one activation conversion and one split of
// their rows across the threads.
bool can_share_input(const Node& first, const Node& next, const quant::KernelTable& kt) {
  const Tensor* x = first.src[1];
  if (next.src[1] != x || next.src[0]->ne[0] != first.src[0]->ne[0]) return false;
  // The joined products' rows are split across the threads at multiples of
  // 16 of their joint index, so an interleaved product joins only with all
  // its rows in whole groups (no plain last rows, interleave.h).
  for (const Node* m : {&first, &next}) {
    const Tensor* w = m->src[0];
    if (w->layout == WeightLayout::Interleaved16 && w->ne[1] != quant::grouped_rows(w->ne[1])) return false;
  }
  // One converted activation and one prepared layout serve both (so an
  // interleaved product only joins interleaved ones).
  if (kt.get(first.src[0]->type).act_type != kt.get(next.src[0]->type).act_type ||
      decode_kernels(*first.src[0], kt)->prepare != decode_kernels(*next.src[0], kt)->prepare) {
    return false;
  }
  // The two products run at the same time: neither output may share memory
  // with the other or with the input they both read.
  return !overlaps(next.dst, first.dst) && !overlaps(next.dst, x);
}

}  // namespace

bool can_share_decode(const Node& first, const Node& next, const quant::KernelTable& kt) {
  return is_decode_matmul(first, kt) && is_decode_matmul(next, kt) && can_share_input(first, next, kt);
}

bool can_share_rows_batch(const Node& first, const Node& next, const quant::KernelTable& kt) {
  return first.src[1]->ne[1] > 1 && is_rows_batch_matmul(first, kt) && is_rows_batch_matmul(next, kt) &&
         can_share_input(first, next, kt);
}

void op_matmul_decode_group(std::span<const Node* const> nodes, ThreadPool& pool, const quant::KernelTable& kt,
                            MatmulScratch& scratch) {
  scratch.held = {};  // the buffer's front is rewritten in another layout
  const Node& first = *nodes.front();
  const Tensor* x = first.src[1];
  const int64_t cols = x->ne[0];
  const DType act_type = kt.get(first.src[0]->type).act_type;
  const quant::DecodeKernels& d0 = *decode_kernels(*first.src[0], kt);
  const size_t act_bytes =
      align_up(static_cast<size_t>(cols / traits(act_type).block_elements) * traits(act_type).block_bytes);
  const size_t prepared_bytes = d0.prepare ? align_up(d0.prepared_bytes(cols)) : 0;
  if (scratch.buffer.size() < act_bytes + prepared_bytes) scratch.buffer.resize(act_bytes + prepared_bytes);
  uint8_t* act = scratch.buffer.data();
  kt.quantize_activation(act_type, static_cast<const float*>(x->data), act, cols);
  // The multi-row kernels read the activation in their own layout, made once
  // here (a few KB) for every product of the group.
  const uint8_t* rows_act = act;
  if (d0.prepare) {
    d0.prepare(act, act + act_bytes, cols);
    rows_act = act + act_bytes;
  }
  // The products' rows as one range (for_guided_part_rows).
  std::array<int64_t, kMaxDecodeGroup + 1> starts{};
  assert(nodes.size() < starts.size());
  for (size_t i = 0; i < nodes.size(); ++i) starts[i + 1] = starts[i] + nodes[i]->src[0]->ne[1];
  const std::span<const int64_t> row_starts(starts.data(), nodes.size() + 1);
  for_guided_part_rows(pool, row_starts, kDecodeRowGrain, [&](size_t i, int64_t r, int64_t n) {
    const Tensor* w = nodes[i]->src[0];
    const size_t rb = w->row_bytes();
    float* y = static_cast<float*>(nodes[i]->dst->data);
    decode_kernels(*w, kt)->rows(cols, static_cast<const uint8_t*>(w->data) + static_cast<size_t>(r) * rb, rb, n,
                                 rows_act, y + r);
    if (const Tensor* bias = nodes[i]->src[2]) add_bias_rows(y, static_cast<const float*>(bias->data), w->ne[1], r, n, 1);
  });
}

void run_decode_parts(std::span<const DecodePart> parts, int64_t cols, ThreadPool& pool) {
  std::vector<int64_t> first(parts.size() + 1, 0);
  for (size_t i = 0; i < parts.size(); ++i) first[i + 1] = first[i] + parts[i].rows;
  for_guided_part_rows(pool, first, kDecodeRowGrain, [&](size_t i, int64_t r, int64_t n) {
    const DecodePart& part = parts[i];
    const uint8_t* w = part.w + static_cast<size_t>(r) * part.rb;
    if (part.k->decode.rows) {
      part.k->decode.rows(cols, w, part.rb, n, part.act, part.y + r);
    } else {
      for (int64_t j = 0; j < n; ++j) part.y[r + j] = part.k->vec_dot(cols, w + static_cast<size_t>(j) * part.rb, part.act);
    }
  });
}

bool is_rows_batch_matmul(const Node& n, const quant::KernelTable& kt) {
  return n.op == Op::MatMul && n.src[1]->ne[1] <= kMaxRowsBatch && decode_kernels(*n.src[0], kt) != nullptr;
}

void op_matmul_rows_batch(std::span<const Node* const> nodes, ThreadPool& pool, const quant::KernelTable& kt,
                          MatmulScratch& scratch, const InputRowFn* computed_input) {
  assert(!computed_input || nodes.size() == 1);
  scratch.held = {};  // the buffer's front is rewritten in another layout
  const Node& first = *nodes.front();
  const Tensor* x = first.src[1];
  const int64_t cols = x->ne[0], n_tok = x->ne[1];
  const DType act_type = kt.get(first.src[0]->type).act_type;
  const quant::DecodeKernels& d0 = *decode_kernels(*first.src[0], kt);
  const size_t act_bytes =
      align_up(static_cast<size_t>(cols / traits(act_type).block_elements) * traits(act_type).block_bytes);
  const size_t prepared_bytes = d0.prepare ? align_up(d0.prepared_bytes(cols)) : 0;
  const size_t per_token = act_bytes + prepared_bytes;
  if (scratch.buffer.size() < per_token * static_cast<size_t>(n_tok)) scratch.buffer.resize(per_token * static_cast<size_t>(n_tok));
  uint8_t* base = scratch.buffer.data();
  const float* xd = static_cast<const float*>(x->data);
  // Each token's activation converted once for every product of the group.
  // A computed row goes to a buffer left uninitialized: the chunks are one
  // token each, and zeroing a row per token (19 KB at Qwen2.5-0.5B's FFN
  // width) was work nothing read.
  const auto convert = [&](int64_t b, int64_t e, int) {
    const auto row = computed_input ? std::make_unique_for_overwrite<float[]>(static_cast<size_t>(cols)) : nullptr;
    for (int64_t t = b; t < e; ++t) {
      uint8_t* act = base + static_cast<size_t>(t) * per_token;
      const float* in = xd + t * cols;
      if (computed_input) {
        (*computed_input)(t, row.get());
        in = row.get();
      }
      kt.quantize_activation(act_type, in, act, cols);
      if (d0.prepare) d0.prepare(act, act + act_bytes, cols);
    }
  };
  if (n_tok * cols <= kSerialConvertValues) {
    convert(0, n_tok, 0);
  } else {
    pool.parallel_for(n_tok, 1, convert);
  }
  const size_t act_offset = d0.prepare ? act_bytes : 0;
  // The products' rows as one range (for_guided_part_rows).
  std::array<int64_t, kMaxDecodeGroup + 1> starts{};
  assert(nodes.size() < starts.size());
  for (size_t i = 0; i < nodes.size(); ++i) starts[i + 1] = starts[i] + nodes[i]->src[0]->ne[1];
  const std::span<const int64_t> row_starts(starts.data(), nodes.size() + 1);
  for_guided_part_rows(pool, row_starts, kBatchRowGrain, [&](size_t i, int64_t r, int64_t n) {
    const Tensor* w = nodes[i]->src[0];
    const quant::DecodeKernels& k = *decode_kernels(*w, kt);
    const size_t rb = w->row_bytes();
    const int64_t rows = w->ne[1];
    float* y = static_cast<float*>(nodes[i]->dst->data);
    // About 64 KB of weights per block: read from memory by the first token,
    // from cache by the others.
    const int64_t block = std::max<int64_t>(16, static_cast<int64_t>((64u << 10) / rb) / 16 * 16);
    for (int64_t r0 = r; r0 < r + n; r0 += block) {
      const int64_t nr = std::min(block, r + n - r0);
      const uint8_t* wr = static_cast<const uint8_t*>(w->data) + static_cast<size_t>(r0) * rb;
      if (k.rows_multi) {
        // The block's weights unpacked once for every token.
        k.rows_multi(cols, wr, rb, nr, base + act_offset, per_token, n_tok, y + r0, static_cast<size_t>(rows));
        continue;
      }
      for (int64_t t = 0; t < n_tok; ++t) {
        k.rows(cols, wr, rb, nr, base + static_cast<size_t>(t) * per_token + act_offset, y + t * rows + r0);
      }
    }
    if (const Tensor* bias = nodes[i]->src[2]) add_bias_rows(y, static_cast<const float*>(bias->data), rows, r, n, n_tok);
  });
}

void op_matmul_rows_batch(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch,
                          const InputRowFn* computed_input) {
  const Node* one[] = {&n};
  op_matmul_rows_batch(one, pool, kt, scratch, computed_input);
}

bool takes_computed_input(const Node& n, const quant::KernelTable& kt) {
  return n.op == Op::MatMul && n.src[1]->ne[1] > kMaxRowsBatch && !is_decode_matmul(n, kt) &&
         kt.supports(n.src[0]->type);
}

void op_matmul(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch,
               const InputRowFn* computed_input) {
  assert(!computed_input || takes_computed_input(n, kt));
  const Tensor* w = n.src[0];
  const Tensor* x = n.src[1];
  const int64_t rows = w->ne[1], cols = w->ne[0], n_tok = x->ne[1];
  float* y = static_cast<float*>(n.dst->data);
  const float* bias = n.src[2] ? static_cast<const float*>(n.src[2]->data) : nullptr;
  // Tokens [t0, t0 + nt) of rows [r0, r0 + nr) plus their biases, by the
  // thread that computed them (add_bias_rows; after a 256-token prompt's
  // products, on the calling thread, they were 0.7% of its samples).
  const auto add_biases = [&](int64_t r0, int64_t nr, int64_t t0, int64_t nt) {
    if (bias) add_bias_rows(y + t0 * rows, bias, rows, r0, nr, nt);
  };
  const MatmulScratch::Held held = scratch.held;
  scratch.held = {};
  if (is_decode_matmul(n, kt)) {
    const Node* one[] = {&n};
    op_matmul_decode_group(one, pool, kt, scratch);
    return;
  }
  if (!kt.supports(w->type)) {
    matmul_by_rows(n, pool);
    add_biases(0, rows, 0, n_tok);
  } else {
    const quant::TypeKernels& k = kt.get(w->type);
    const size_t ab = static_cast<size_t>(cols / traits(k.act_type).block_elements) * traits(k.act_type).block_bytes;
    const bool plain = w->layout == WeightLayout::Plain;
    // Interleaved weights have their own tiles where the level has them;
    // otherwise every path below reads plain copies of the rows it needs.
    const quant::PrefillKernels& pf = plain ? k.prefill : k.interleaved.prefill;
    const bool prefill_tiles = n_tok > kMaxRowsBatch && pf.gemm;
    // The scratch layout of this product: converted activations, then the
    // kernel's own layout of them, then one weight tile per thread.
    const size_t act_bytes = align_up(ab * static_cast<size_t>(n_tok));
    size_t prepared_bytes = 0, tile_bytes = 0;
    if (prefill_tiles) {
      prepared_bytes = align_up(pf.prepared_bytes(cols, n_tok));
      tile_bytes = align_up(pf.tile_bytes(cols));
    } else if (!plain) {
      tile_bytes = align_up(static_cast<size_t>(kTileRows) * w->row_bytes());
    }
    const size_t need = act_bytes + prepared_bytes + tile_bytes * static_cast<size_t>(pool.size());
    if (scratch.buffer.size() < need) scratch.buffer.resize(need);
    uint8_t* act = scratch.buffer.data();
    uint8_t* prepared = act + act_bytes;
    uint8_t* tiles = prepared + prepared_bytes;

    // The conversion (and the prepared layout) of the previous product's
    // input, when this one reads the same input in the same forms.
    const bool same_act = !computed_input && held.input == x && held.act_type == k.act_type;
    const auto* prepare_fn = reinterpret_cast<const void*>(pf.prepare);
    const bool same_prepared = same_act && prefill_tiles && held.prepare == prepare_fn;
    const float* xd = static_cast<const float*>(x->data);
    // Tokens [b, e) in the kernel's activation format.
    const auto convert = [&](int64_t b, int64_t e, float* row) {
      for (int64_t t = b; t < e; ++t) {
        const float* in = xd + t * cols;
        if (computed_input) {
          (*computed_input)(t, row);
          in = row;
        }
        kt.quantize_activation(k.act_type, in, act + t * ab, cols);
      }
    };
    const auto row_buffer = [&] {
      return computed_input ? std::make_unique_for_overwrite<float[]>(static_cast<size_t>(cols)) : nullptr;
    };
    const int64_t groups = (n_tok + quant::kPrefillColGroup - 1) / quant::kPrefillColGroup;
    // Prompt tiles take each group of tokens to the prepared form while its
    // converted rows are still in the thread's cache, in one pass.
    const bool convert_and_prepare = prefill_tiles && !same_act;
    if (convert_and_prepare) {
      pool.parallel_for(groups, 2, [&](int64_t b, int64_t e, int) {
        const auto row = row_buffer();
        for (int64_t g = b; g < e; ++g) {
          const int64_t c0 = g * quant::kPrefillColGroup, c1 = std::min(n_tok, c0 + quant::kPrefillColGroup);
          convert(c0, c1, row.get());
          pf.prepare(cols, act, ab, c0, c1 - c0, prepared);
        }
      });
    } else if (!same_act) {
      pool.parallel_for(n_tok, 4, [&](int64_t b, int64_t e, int) { convert(b, e, row_buffer().get()); });
    }
    scratch.held = {x, k.act_type, prefill_tiles ? prepare_fn : nullptr};
    const size_t rb = w->row_bytes();
    const auto* wdata = static_cast<const uint8_t*>(w->data);
    // Rows [r0, r0 + nr) (nr <= kTileRows) in the plain layout: in place, or
    // converted into the thread's tile scratch.
    auto rows_at = [&](int64_t r0, int64_t nr, int thread) {
      return plain_rows(*w, r0, nr, tiles + tile_bytes * static_cast<size_t>(thread));
    };
    // The one-call GEMM (no prepared activations) converts its tokens again
    // in every call, so it keeps the largest items.
    const int64_t tile_rows = prefill_tiles ? prompt_tile_rows(rows, pool.size()) : kTileRows;
    if (n_tok <= kMaxRowsBatch) {
      // One token, or a few (a verify pass, a scheduler step) of a type
      // without decode kernels: the row dot per token, so each token gets
      // exactly its one-token result; a row is read from memory once and
      // from cache for the other tokens.
      pool.parallel_for(rows, kDecodeRowGrain, [&](int64_t b, int64_t e, int thread) {
        for (int64_t r = b; r < e; ++r) {
          const uint8_t* row = rows_at(r, 1, thread);
          for (int64_t t = 0; t < n_tok; ++t) y[t * rows + r] = k.vec_dot(cols, row, act + t * ab);
        }
        add_biases(b, e - b, 0, n_tok);
      });
    } else if (prefill_tiles) {
      // Activations prepared once for every tile (in groups of tokens split
      // across the threads), then the tiles.
      if (!same_prepared && !convert_and_prepare) {
        pool.parallel_for(groups, 4, [&](int64_t b, int64_t e, int) {
          const int64_t c0 = b * quant::kPrefillColGroup;
          pf.prepare(cols, act, ab, c0, std::min(n_tok, e * quant::kPrefillColGroup) - c0, prepared);
        });
      }
      if (n_tok <= kTileTokens) {
        // One token tile: rows in guided claims of whole 32-row tiles, so
        // the threads finish together instead of one waiting out the
        // other's last fixed-size item (in Qwen2.5-0.5B 256-token prompts,
        // the pool's samples against the tiles' fell from 8.0-10.5% to
        // 6.7-8.4%, two alternated perf runs of each).
        for_guided_rows(pool, rows, kPromptRowStep, kPromptRowStep, [&](int64_t b, int64_t e, int thread) {
          pf.gemm(cols, wdata + b * rb, rb, e - b, prepared, 0, n_tok, y + b, static_cast<size_t>(rows),
                  tiles + tile_bytes * static_cast<size_t>(thread));
          add_biases(b, e - b, 0, n_tok);
        });
      } else {
        for_tile_items(pool, rows, tile_rows, n_tok, [&](int64_t r0, int64_t nr, int64_t t0, int64_t nt, int thread) {
          pf.gemm(cols, wdata + r0 * rb, rb, nr, prepared, t0, nt, y + t0 * rows + r0, static_cast<size_t>(rows),
                  tiles + tile_bytes * static_cast<size_t>(thread));
          add_biases(r0, nr, t0, nt);
        });
      }
    } else {
      for_tile_items(pool, rows, tile_rows, n_tok, [&](int64_t r0, int64_t nr, int64_t t0, int64_t nt, int thread) {
        k.gemm(cols, rows_at(r0, nr, thread), rb, nr, act + t0 * ab, ab, nt, y + t0 * rows + r0,
               static_cast<size_t>(rows));
        add_biases(r0, nr, t0, nt);
      });
    }
  }
}

}  // namespace hearth::backend::cpu
