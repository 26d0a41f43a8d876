// A forward pass as a sequence of ops. Model code builds a Graph; a Backend
// executes it. The graph never holds backend state, so the same graph can run
// on the CPU, on Vulkan, or split between them (each node records the layer it
// belongs to, which is what a partial-offload placement decides on).
#pragma once

#include <hearth/engine/backend/tensor.h>

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

namespace hearth::backend {

class Buffer;

enum class Op {
  GetRows,     // dst[t] = dequant(src0 row src1[t]); src1: I32 ids {n}
  RmsNorm,     // dst = x / rms(x) * w, rows of `group` elements (group = ne0 by default)
  MatMul,      // dst[t][r] = sum_c src0[r][c] * src1[t][c] (+ src2[r] bias); src0 any weight type
  Add,         // dst = src0 + src1 (same shape)
  Scale,       // dst = src0 * scalar
  Rope,        // rotate pairs of each head of src0 at positions src1 (I32 {n_tokens})
  KvStore,     // write src0 (K) and src1 (V) rows at positions into the KV view; no dst data
  Attention,   // attention of src0 (Q) over the KV view, query t seeing key positions up to src1[t] (its own
               // position: causal; its sequence's last position: bidirectional); src2: optional per-head sinks (F32 {n_head})
  SwiGlu,      // dst = silu(src0) * src1
  GeluGlu,     // dst = gelu_tanh(src0) * src1
  SoftCap,     // dst = cap * tanh(src0 / cap)
  SliceCols,   // dst = src0[:, offset : offset + dst.ne0]
  LastRows,    // dst = the last dst.ne1 rows of src0
  // Mixture of experts (see moe_* below).
  TopK,        // dst I32 {k, n}: indices of the k largest values of each row of src0, largest first
  MoeGate,     // dst {k, n}: routing weights of the experts src1 (I32 {k, n}) from router logits src0
  MatMulId,    // dst[t*k+s][r] = sum_c src0[src2[t][s]][r][c] * x[c]; x = src1 row t (shared) or t*k+s
  MoeSum,      // dst[t][c] = sum_s src1[t][s] * src0[t*k+s][c]
  // gpt-oss (appended so the ops above keep their numbers).
  SwiGluOai,   // dst = x * sigmoid(alpha * x) * (y + 1), x = min(src0, limit), y = clamp(src1, -limit, limit)
  AddId,       // dst[t*k+s][c] = src0[t*k+s][c] + src1[src2[t][s]][c]: each slot's expert bias
  // Encoders (BERT; appended so the ops above keep their numbers).
  LayerNorm,   // dst = (x - mean(x)) / sqrt(var(x) + eps) * src1 + src2, rows of ne0; src1/src2 F32 {ne0}
  Gelu,        // dst = gelu_tanh(src0)
};
inline constexpr int kOpCount = static_cast<int>(Op::Gelu) + 1;
const char* to_string(Op op);

enum class RopeMode { Normal, NeoX };  // adjacent pairs / first and second halves

struct RopeParams {
  RopeMode mode = RopeMode::Normal;
  int32_t n_dims = 0;        // rotated dimensions of each head (<= head_dim)
  int32_t head_dim = 0;
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;   // 1 / linear scaling factor
  // YaRN (ext_factor > 0); zero leaves plain (or linear) RoPE.
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  int32_t n_ctx_orig = 0;
  const float* freq_factors = nullptr;  // {n_dims / 2}: Llama 3.1 rope_freqs, divides each frequency
};

// Where one layer's K and V live. Positions are grouped in blocks of
// `block_tokens`; `block_table[b]` is the physical block that holds logical
// block b. Inside a physical block, each KV head has `block_tokens` rows of
// `head_dim` elements: row address = base + ((phys * n_head_kv + h) * block_tokens + t) * row_bytes.
struct KvView {
  DType type = DType::F16;  // F16, Q8_0 or F32
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  int32_t block_tokens = 0;
  size_t row_bytes = 0;
  uint8_t* k = nullptr;  // host addresses (null when the cache is not host-visible)
  uint8_t* v = nullptr;
  Buffer* buffer = nullptr;  // the cache's buffer, and where K and V start in it,
  size_t k_offset = 0;             // for backends that address device memory
  size_t v_offset = 0;
  // block_table has table_blocks entries (logical blocks: the whole
  // context); the layer's K and V regions hold n_blocks physical blocks each.
  // They differ for a sliding-window ring, whose table maps logical block b
  // to b % n_blocks.
  const int32_t* block_table = nullptr;
  int32_t table_blocks = 0;
  int32_t n_blocks = 0;
  // Several sequences in one pass (runtime::Scheduler over a kv::KvPool):
  // when token_seq is set, token t of the op belongs to sequence
  // token_seq[t], whose own block table (table_blocks entries) starts at
  // seq_tables + token_seq[t] * table_blocks, and block_table is unused. A
  // token's query sees the keys of its own sequence only, causally by
  // position. Null for the single-sequence pass.
  const int32_t* token_seq = nullptr;
  const int32_t* seq_tables = nullptr;
};

// The block table that token `t` of a KvStore/Attention op reads and writes.
inline const int32_t* token_block_table(const KvView& kv, int64_t t) {
  return kv.token_seq ? kv.seq_tables + static_cast<int64_t>(kv.token_seq[t]) * kv.table_blocks : kv.block_table;
}

struct AttentionParams {
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  float scale = 1.0f;          // applied to q.k
  float softcap = 0.0f;        // > 0: score = cap * tanh(score / cap) (Gemma 2)
  int32_t window = 0;          // > 0: sliding window, keys within the last `window` positions
  // With a sinks tensor (the node's src2, gpt-oss): head h's softmax also
  // holds one logit sinks[h] that weighs no value, so it only adds
  // exp(sinks[h] - max) to the denominator. The logit is not scaled.
};

// SwiGLU with clamped inputs (gpt-oss's experts): alpha scales the sigmoid's
// argument, limit clamps the gate from above and the up projection both ways.
struct GluParams {
  float alpha = 1.702f;
  float limit = 7.0f;
};

// How router logits become the weights of the chosen experts.
enum class MoeGating {
  Softmax,          // softmax over all experts, the chosen ones' probabilities (Qwen MoE)
  SoftmaxSelected,  // softmax over the chosen experts' logits only (gpt-oss)
};

struct MoeParams {
  MoeGating gating = MoeGating::Softmax;
  bool normalize = false;  // divide by the chosen weights' sum (clamped below at 2^-14, as the reference does)
  float scale = 1.0f;      // multiplies the weights at the end
};

struct OpParams {
  float eps = 0.0f;
  float scalar = 1.0f;
  int64_t group = 0;     // RmsNorm group size (per-head norms); 0 = whole row
  int64_t offset = 0;    // SliceCols
  RopeParams rope;
  AttentionParams attn;
  KvView kv;
  MoeParams moe;
  GluParams glu;  // SwiGluOai
};

struct Node {
  Op op = Op::Add;
  // src[3] is set only by a backend's own fusion (graph_fusion.h): a
  // MatMul's residual, dst = W x + bias + residual.
  std::array<Tensor*, 4> src{nullptr, nullptr, nullptr, nullptr};
  Tensor* dst = nullptr;
  OpParams params;
  int32_t layer = -1;  // the model layer, -1 outside layers: what placement decides on
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Tensors created here live as long as the graph (stable addresses).
  Tensor* input(DType type, std::array<int64_t, 4> ne, void* data);
  Tensor* activation(std::array<int64_t, 4> ne);
  // Host integers that live as long as the graph: the data of an input the
  // graph derives (a subset of the batch's positions), a KvView's token_seq.
  const int32_t* hold(std::vector<int32_t> values);

  void set_layer(int32_t layer) { layer_ = layer; }

  Tensor* get_rows(Tensor* weight, Tensor* ids);
  Tensor* rms_norm(Tensor* x, Tensor* weight, float eps, int64_t group = 0);
  Tensor* matmul(Tensor* weight, Tensor* x, Tensor* bias = nullptr);
  Tensor* add(Tensor* a, Tensor* b);
  Tensor* scale(Tensor* x, float s);
  Tensor* rope(Tensor* x, Tensor* positions, const RopeParams& p);
  void kv_store(Tensor* k, Tensor* v, Tensor* positions, const KvView& kv);
  // sinks: null, or F32 {n_head} (AttentionParams). `positions` (I32
  // {n_tokens}) is the last key position each query sees: the tokens' own
  // positions make it causal; every token of a sequence given that
  // sequence's last position makes it bidirectional (embedding encoders),
  // with no other change to the kernels.
  Tensor* attention(Tensor* q, Tensor* positions, const KvView& kv, const AttentionParams& p, Tensor* sinks = nullptr);
  Tensor* swiglu(Tensor* gate, Tensor* up);
  Tensor* swiglu_oai(Tensor* gate, Tensor* up, const GluParams& p);
  Tensor* geglu(Tensor* gate, Tensor* up);
  Tensor* softcap(Tensor* x, float cap);
  Tensor* slice_cols(Tensor* x, int64_t offset, int64_t width);
  Tensor* last_rows(Tensor* x, int64_t n);
  // LayerNorm over each row with weight and bias (F32 {x.ne0} each).
  Tensor* layer_norm(Tensor* x, Tensor* weight, Tensor* bias, float eps);
  Tensor* gelu(Tensor* x);

  // Mixture of experts. Router logits {n_expert, n} -> top_k ids I32 {k, n}
  // -> moe_gate weights {k, n}; matmul_id runs each token's chosen experts
  // of a stacked weight {cols, rows, n_expert} on x ({cols, n}: one row per
  // token shared by its k experts, or {cols, k*n}: one row per (token,
  // expert) slot) giving {rows, k*n}; moe_sum weighs and adds the k slots.
  Tensor* top_k(Tensor* scores, int64_t k);
  Tensor* moe_gate(Tensor* logits, Tensor* ids, const MoeParams& p);
  Tensor* matmul_id(Tensor* experts, Tensor* x, Tensor* ids);
  Tensor* moe_sum(Tensor* y, Tensor* weights);
  // Adds to each slot row of y ({width, k*n}) its expert's row of a stacked
  // bias {width, n_expert} (the chosen ids {k, n}).
  Tensor* add_id(Tensor* y, Tensor* bias, Tensor* ids);

  const std::vector<Node>& nodes() const { return nodes_; }
  std::vector<Node>& nodes() { return nodes_; }
  // The tensor the caller reads after compute (set by model code).
  Tensor* output = nullptr;

 private:
  Node& push(Op op, Tensor* dst, Tensor* a, Tensor* b = nullptr, Tensor* c = nullptr);
  std::deque<Tensor> tensors_;
  std::deque<std::vector<int32_t>> held_;
  std::vector<Node> nodes_;
  int32_t layer_ = -1;
};

}  // namespace hearth::backend
