// CPU implementations of the graph ops. Each takes the node and the pool; the
// scalar versions here are the reference the fast paths are tested against.
#pragma once

#include <hearth/engine/backend/graph.h>
#include <hearth/engine/quant/kernels.h>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "rope_table.h"
#include "thread_pool.h"

namespace hearth::backend::cpu {

void op_get_rows(const Node& n, ThreadPool& pool);
void op_rms_norm(const Node& n, ThreadPool& pool);
void op_add(const Node& n, ThreadPool& pool);
void op_scale(const Node& n, ThreadPool& pool);
// Rows [r0, r0 + nr) of n_tok tokens' outputs (`rows` apart) plus their
// biases, added by the thread that just computed those rows: on the calling
// thread after the product, the biases of Qwen2.5-0.5B's Q, K and V were a
// loop the other thread waited out (0.7% of the samples of an eight-stream
// decode, and of a 256-token prompt).
void add_bias_rows(float* __restrict y, const float* __restrict bias, int64_t rows, int64_t r0, int64_t nr,
                   int64_t n_tok);
void op_swiglu(const Node& n, ThreadPool& pool, const quant::KernelTable& kt);
// Row t of op_swiglu's output into `row`, with the same kernel: the op's own
// values wherever the row width is a multiple of 16 (ops_basic.cpp).
void swiglu_row(const Node& n, int64_t t, float* row, const quant::KernelTable& kt);
void op_swiglu_oai(const Node& n, ThreadPool& pool);
void op_geglu(const Node& n, ThreadPool& pool);
void op_softcap(const Node& n, ThreadPool& pool);
void op_layer_norm(const Node& n, ThreadPool& pool);
void op_gelu(const Node& n, ThreadPool& pool, const quant::KernelTable& kt);
void op_slice_cols(const Node& n, ThreadPool& pool);
void op_last_rows(const Node& n, ThreadPool& pool);
void op_rope(const Node& n, ThreadPool& pool, RopeTables& tables);
void op_kv_store(const Node& n, ThreadPool& pool, const quant::KernelTable& kt);
void op_attention(const Node& n, ThreadPool& pool, const quant::KernelTable& kt);
// Joins an attention sink (a logit with no value) to one row's online
// softmax state: running max m, sum l and unnormalized output acc[hd].
void add_sink(float sink, float& m, float& l, float* acc, int64_t hd);
// Memory the matrix products reuse from op to op (owned by the backend): one
// buffer holding, in this order, the activations converted for the dot
// products, their decode or prefill layout, and one repacked-weight tile per
// thread. The backend reserves it up front (kv::ScratchSizes::matmul_bytes())
// and counts any growth.
struct MatmulScratch {
  std::vector<uint8_t> buffer;
  // What the front of `buffer` holds after op_matmul: `input` converted to
  // `act_type` and, when `prepare` is set, that conversion in the prompt
  // tiles' layout. The next product of the same input (K and V after Q, up
  // after gate) then skips both. The products that rewrite the buffer in
  // other layouts clear it, and the backend clears it before every node that
  // is not a product, so the input is still the one converted.
  struct Held {
    const Tensor* input = nullptr;
    DType act_type = DType::F32;
    const void* prepare = nullptr;
  } held;
  // Products by expert id (op_matmul_id): one expert's input rows gathered
  // together and its output rows before they are scattered to their slots.
  // Reserved up front with the rest (kv::ScratchSizes::expert_bytes).
  std::vector<uint8_t> expert;
};
// Token t's input row of a product computed on the way in instead of read
// from the input tensor (a SwiGLU fused into the product after it): writes
// the row's n.src[0]->ne[0] values into `row`.
using InputRowFn = std::function<void(int64_t t, float* row)>;
// With `computed_input` (only where takes_computed_input), the input tensor
// is never read: each token's row is computed and converted right away, so a
// prompt's FFN activation (up to tens of MB) is never written out and read
// back, which made op_swiglu 3-4% of a prompt.
void op_matmul(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch,
               const InputRowFn* computed_input = nullptr);
// Whether op_matmul converts n's whole input up front (prompt-sized
// products of supported types), so that it can take a computed input.
bool takes_computed_input(const Node& n, const quant::KernelTable& kt);

// A few tokens of different sequences (a scheduler step): each token's
// activation row prepared once, then, for each range of weight rows (small
// enough to stay in cache), the decode kernel for every token. Each weight
// row is read from memory once for all tokens, and each token's result is
// what a one-token decode of it gives. Used for passes over several
// sequences of at most kMaxRowsBatch tokens with a multi-row decode kernel:
// the GEMM tiles repack every weight tile per product, which a handful of
// tokens does not repay. With the interleaved kernels (8 tokens per pass,
// more tokens in further passes over a group still in cache), 2 threads,
// Zen 4: 8 tokens by rows 31.8 ms (1B Q4_0) and 21.2 ms (Qwen2.5-0.5B
// Q4_K_M), by tiles 9 tokens 76.7 / 40.9 ms, 16 tokens 94.1 / 49.4 ms, 24
// tokens 119.4 / 62.3 ms. Up to 16 the rows stay ahead, and a 9-token
// verify pass (8 drafts) or a 16-stream step stays bit-identical per token.
inline constexpr int64_t kMaxRowsBatch = 16;
bool is_rows_batch_matmul(const Node& n, const quant::KernelTable& kt);
// With `computed_input`, each token's row is computed and converted in the
// thread that converts it, as op_matmul's computed_input: a scheduler step's
// SwiGLU then skips writing its rows and the product skips reading them back
// (the other core had written half of each row: in an eight-stream decode of
// Qwen2.5-0.5B the Q8_K conversion waited on those reads).
void op_matmul_rows_batch(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch,
                          const InputRowFn* computed_input = nullptr);
// As can_share_decode, for few-token products (the same token count, more
// than one): Q, K and V, or gate and up, of a scheduler step or a verify
// pass convert each token's activation once and split their rows once.
bool can_share_rows_batch(const Node& first, const Node& next, const quant::KernelTable& kt);
// Few-token products of one input (each passed can_share_rows_batch with the
// first, at most kMaxDecodeGroup) as one range of rows split across the
// threads; each token's results are those of op_matmul_rows_batch alone.
void op_matmul_rows_batch(std::span<const Node* const> nodes, ThreadPool& pool, const quant::KernelTable& kt,
                          MatmulScratch& scratch, const InputRowFn* computed_input = nullptr);

// One-token products the multi-row decode kernels handle.
bool is_decode_matmul(const Node& n, const quant::KernelTable& kt);
// Whether `next` may run together with `first` (and any products between
// them that passed this test): both decode products of the same input with
// one activation conversion, and outputs that overlap neither each other
// nor the input. Q, K and V, or gate and up, then cost one conversion and
// one meeting of the threads instead of three or two.
bool can_share_decode(const Node& first, const Node& next, const quant::KernelTable& kt);
constexpr size_t kMaxDecodeGroup = 4;
// Decode products of one input (each passed can_share_decode with the
// first) as one range of rows split across the threads.
void op_matmul_decode_group(std::span<const Node* const> nodes, ThreadPool& pool, const quant::KernelTable& kt,
                            MatmulScratch& scratch);

// One-token products of several weight ranges, each with its own prepared
// activation (as DecodeKernels::prepare left it), run as one range of rows
// split across the threads.
struct DecodePart {
  const quant::TypeKernels* k = nullptr;
  const uint8_t* w = nullptr;  // first row
  size_t rb = 0;               // bytes per row
  int64_t rows = 0;
  const uint8_t* act = nullptr;
  float* y = nullptr;
};
void run_decode_parts(std::span<const DecodePart> parts, int64_t cols, ThreadPool& pool);

// Mixture of experts (graph.h: TopK, MoeGate, MatMulId, MoeSum).
void op_top_k(const Node& n, ThreadPool& pool);
void op_moe_gate(const Node& n, ThreadPool& pool);
void op_moe_sum(const Node& n, ThreadPool& pool);
void op_add_id(const Node& n, ThreadPool& pool);
// One token: only the chosen experts' rows are read, all slots in one split
// of rows. More tokens: grouped by expert, one product per expert over the
// tokens that chose it.
void op_matmul_id(const Node& n, ThreadPool& pool, const quant::KernelTable& kt, MatmulScratch& scratch);

// RoPE cos/sin for one position, shared with the KV shift of the cache.
void rope_cos_sin(const RopeParams& p, int32_t position, float* cos_out, float* sin_out);

}  // namespace hearth::backend::cpu
