// Typed launchers for the compute shaders: each records one dispatch into a
// CommandSequence, checking shapes and sizes first. This is the surface the
// Backend adapter calls; it knows ops and tensor types, not models.
#pragma once

#include <hearth/engine/backend/vulkan/command.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>

namespace hearth::vulkan {

enum class RopeStyle { Normal, NeoX };
enum class GluKind { SwiGlu, GeGlu };
// How matvec reduces a row: subgroupAdd where the device has subgroup
// arithmetic, a shared-memory tree otherwise.
enum class Reduction { Subgroup, SharedMemory };

// Workgroup sizes (specialization constant 0), chosen per device.
struct KernelTuning {
  uint32_t elementwise = 256;
  uint32_t row_reduce = 64;  // RMSNorm (power of two)
  uint32_t matvec = 32;      // power of two
  Reduction matvec_reduction = Reduction::SharedMemory;
  uint32_t matvec_rows = 1;  // rows per workgroup with Reduction::Subgroup
  uint32_t get_rows = 64;
  uint32_t attention = 32;   // power of two; head_dim <= 8 * attention
  // Attention of up to kMatvecMaxTokens queries over a cache where a query
  // may see more than this many positions is split into slices, about one
  // per this many positions of the table (at most attention_max_splits):
  // flash decoding. Each query's slices are cut from what it sees now, so
  // a short conversation in a long table is spread too. Unsplit, one
  // token's attention is n_heads workgroups each walking every position:
  // 96 us per layer at 512 positions on an H200. 0 = never split (CPU
  // devices: the heads already fill their threads, and the merge pass
  // would be pure cost).
  uint32_t attention_split_positions = 64;
  uint32_t attention_max_splits = 32;
};
KernelTuning default_tuning(const VulkanContext& ctx);

struct RopeShape {
  uint32_t head_dim = 0;
  uint32_t n_dims = 0;  // rotated dims per head (even, <= head_dim)
  uint32_t n_heads = 0;
  uint32_t n_tokens = 0;
};

// How RoPE angles are made (see RopeParams in params.h): base and linear
// scale, YaRN (ext_factor > 0) and Llama 3.1 per-frequency factors.
struct RopeFrequencies {
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;  // 1 / linear scaling factor
  float ext_factor = 0.0f;  // YaRN extrapolation mix; 0 = off
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  uint32_t n_ctx_orig = 0;  // YaRN: the training context
  BufferView freq_factors;  // [n_dims / 2] f32; no buffer = none
};

// The paged KV cache as the shaders address it: position p of KV head h
// is row ((block_table[p / block_tokens] * n_kv_heads + h) * block_tokens +
// p % block_tokens) in the K and V regions. A row is head_dim halves (F16)
// or head_dim / 32 Q8_0 blocks of 34 bytes (Q8_0, head_dim a multiple of 32).
struct KvLayout {
  uint32_t head_dim = 0;
  uint32_t n_kv_heads = 0;
  uint32_t block_tokens = 0;
  DType type = DType::F16;  // F16 or Q8_0
};

struct AttentionShape {
  uint32_t n_heads = 0;   // query heads; a multiple of n_kv_heads
  uint32_t n_tokens = 0;  // queries (1 for decode)
};

// How one attention dispatch splits positions (Kernels::attention_split);
// partials: attention_partial_bytes() of scratch when n_splits > 1.
struct AttentionSplit {
  uint32_t n_splits = 1;
  // The most positions one slice takes: the table's (or window's) visible
  // length over n_splits. The shader cuts what each query sees now into
  // n_splits equal slices, so no slice is longer.
  uint32_t split_len = 0;
  BufferView partials;
};

struct AttentionOptions {
  float scale = 1.0f;    // applied to q.k
  float softcap = 0.0f;  // > 0: cap * tanh(score / cap)
  uint32_t window = 0;   // > 0: only the last `window` positions are visible
};

// The cache regions and the block table (i32, one entry per logical block).
struct KvBuffers {
  BufferView k, v, block_table;
};

// Several sequences in one dispatch (continuous batching): block_table holds
// one table of table_blocks entries per sequence, and token t reads and
// writes through the table of sequence token_seq[t] (i32 [n_tokens]). The
// default (table_blocks 0, no buffer) is one table for every token.
struct TokenTables {
  BufferView token_seq;
  uint32_t table_blocks = 0;
  uint32_t n_tables = 1;  // tables in block_table; token_seq values are below it
};

class Kernels {
 public:
  Kernels(const VulkanContext& ctx, PipelineSet& pipelines, KernelTuning tuning)
      : ctx_(ctx), pipelines_(pipelines), tuning_(tuning) {}

  // Whether matvec/matmul/get_rows have a shader for this weight type.
  static bool supports_weights(DType type);

  // Element-wise, all f32. d[i] = a[i] + b[i % b_len]
  Status add(CommandSequence& seq, const BufferView& a, const BufferView& b, const BufferView& d, uint32_t n,
             uint32_t b_len);
  Status scale(CommandSequence& seq, const BufferView& x, const BufferView& y, uint32_t n, float factor);
  Status softcap(CommandSequence& seq, const BufferView& x, const BufferView& y, uint32_t n, float cap);
  Status glu(CommandSequence& seq, GluKind kind, const BufferView& gate, const BufferView& up,
             const BufferView& out, uint32_t n);
  Status swiglu(CommandSequence& seq, const BufferView& gate, const BufferView& up, const BufferView& out,
                uint32_t n) {
    return glu(seq, GluKind::SwiGlu, gate, up, out, n);
  }
  // gpt-oss's clamped SwiGLU (params.h: GluParams).
  Status swiglu_oai(CommandSequence& seq, const BufferView& gate, const BufferView& up, const BufferView& out,
                    uint32_t n, float alpha, float limit);
  Status gelu(CommandSequence& seq, const BufferView& x, const BufferView& y, uint32_t n);
  // x, y: [nrows][ncols] f32; w, b: [ncols] f32
  Status layer_norm(CommandSequence& seq, const BufferView& x, const BufferView& w, const BufferView& b,
                    const BufferView& y, uint32_t ncols, uint32_t nrows, float eps);
  // x, y: [nrows][ncols] f32; w: [ncols] f32
  Status rms_norm(CommandSequence& seq, const BufferView& x, const BufferView& w, const BufferView& y,
                  uint32_t ncols, uint32_t nrows, float eps);
  // In place on x: [n_tokens][n_heads][head_dim] f32; positions: [n_tokens] i32
  Status rope(CommandSequence& seq, RopeStyle style, const BufferView& x, const BufferView& positions,
              const RopeShape& shape, const RopeFrequencies& freqs);
  Status rope(CommandSequence& seq, RopeStyle style, const BufferView& x, const BufferView& positions,
              const RopeShape& shape, float freq_base, float freq_scale) {
    RopeFrequencies f;
    f.freq_base = freq_base;
    f.freq_scale = freq_scale;
    return rope(seq, style, x, positions, shape, f);
  }
  // table: [n_rows][ncols] of `type`; ids: [n_ids] i32; out: [n_ids][ncols] f32
  Status get_rows(CommandSequence& seq, DType type, const BufferView& table, const BufferView& ids,
                  const BufferView& out, uint32_t ncols, uint32_t n_ids, uint32_t row_begin = 0,
                  uint32_t row_count = UINT32_MAX);
  // w: [nrows][ncols] of `type`; x: [n_tokens][ncols] f32; y: [n_tokens][nrows]
  // f32, n_tokens in 1..kMatvecMaxTokens. Each weight chunk is read once for
  // all tokens, and each token's row of y is bit for bit what a one-token
  // matvec computes (speculative verify passes rely on it). The addends
  // join each value where it is written: y = (W x + bias) + residual.
  static constexpr uint32_t kMatvecMaxTokens = 8;
  struct MatvecAddends {
    BufferView bias;      // f32 [nrows]; empty: none
    BufferView residual;  // f32 [n_tokens][nrows], y's shape; empty: none
  };
  Status matvec(CommandSequence& seq, DType type, const BufferView& w, const BufferView& x, const BufferView& y,
                uint32_t ncols, uint32_t nrows, uint32_t n_tokens = 1, const MatvecAddends& add = {});
  // The integer-dot path (MatvecPath::IntegerDot): x: [n_tokens][ncols] f32
  // -> xq, 8-bit blocks of quantized_bytes(ncols, n_tokens) bytes (layout:
  // quantize_q8.comp); then y = W xq as matvec() computes it, with packed
  // 4x8-bit dot products on the weights' codes. The device must have
  // DeviceDescription::integer_dot; only supports_int_dot() types have shaders.
  static bool supports_int_dot(DType type);
  static uint64_t quantized_bytes(uint32_t ncols, uint32_t n_tokens);
  Status quantize_activations(CommandSequence& seq, const BufferView& x, const BufferView& xq, uint32_t ncols,
                              uint32_t n_tokens);
  Status matvec_int_dot(CommandSequence& seq, DType type, const BufferView& w, const BufferView& xq,
                        const BufferView& y, uint32_t ncols, uint32_t nrows, uint32_t n_tokens = 1,
                        const MatvecAddends& add = {});
  // w: [m_rows][k] of `type`; x: [n_tokens][k] f32; y: [n_tokens][m_rows] f32
  Status matmul(CommandSequence& seq, DType type, const BufferView& w, const BufferView& x, const BufferView& y,
                uint32_t m_rows, uint32_t n_tokens, uint32_t k);
  // The prompt tiles of the integer-dot path: xq, quantized_bytes(k,
  // n_tokens) bytes from quantize_activations(); k a multiple of 32; the
  // same tiles as matmul() with packed dot products on the weights' codes.
  Status matmul_int_dot(CommandSequence& seq, DType type, const BufferView& w, const BufferView& xq,
                        const BufferView& y, uint32_t m_rows, uint32_t n_tokens, uint32_t k);
  // Products by expert id: w: [n_expert][nrows][ncols] of `type`; ids:
  // [n_slots] i32 (slot s: token s / k); x: [n_slots][ncols] f32 when
  // x_per_slot, else [n_slots / k][ncols]; y: [n_slots][nrows] f32.
  struct MatvecIdShape {
    uint32_t ncols = 0, nrows = 0, n_expert = 0, k = 0, n_slots = 0;
    bool x_per_slot = false;
    // w holds experts [expert_begin, expert_begin + n_expert) of the stack;
    // only the slots routed to them are written.
    uint32_t expert_begin = 0;
  };
  Status matvec_id(CommandSequence& seq, DType type, const BufferView& w, const BufferView& x, const BufferView& ids,
                   const BufferView& y, const MatvecIdShape& shape);
  // The same on 8-bit activations (quantize_activations of x's rows).
  Status matvec_id_int_dot(CommandSequence& seq, DType type, const BufferView& w, const BufferView& xq,
                           const BufferView& ids, const BufferView& y, const MatvecIdShape& shape);
  // Mixture-of-experts routing (params.h: MoeRouteParams). top_k: logits
  // [n_tokens][n_expert] -> ids [n_tokens][k] i32; gate: logits, ids ->
  // weights [n_tokens][k]; sum: y [n_tokens * k][width], weights ->
  // out [n_tokens][width].
  struct MoeShape {
    uint32_t n_expert = 0, k = 0, n_tokens = 0, width = 0;
  };
  Status moe_top_k(CommandSequence& seq, const BufferView& logits, const BufferView& ids, const MoeShape& shape);
  Status moe_gate(CommandSequence& seq, const BufferView& logits, const BufferView& ids, const BufferView& weights,
                  const MoeShape& shape, uint32_t gating, bool normalize, float scale);
  Status moe_sum(CommandSequence& seq, const BufferView& y, const BufferView& weights, const BufferView& out,
                 const MoeShape& shape);
  // y, out: [n_tokens * k][width]; ids [n_tokens][k] i32; bias
  // [n_expert][width]: out[s] = y[s] + bias[ids[s]].
  Status moe_add_id(CommandSequence& seq, const BufferView& y, const BufferView& bias, const BufferView& ids,
                    const BufferView& out, const MoeShape& shape);
  // k_new, v_new: [n_tokens][n_kv_heads][head_dim] f32, written as the
  // layout's type (f16, or Q8_0 quantized like the CPU's) at positions[t]
  // (i32). The block table must cover every position; `tables` gives each
  // token its sequence's table (TokenTables).
  Status kv_store(CommandSequence& seq, const BufferView& k_new, const BufferView& v_new, const KvBuffers& kv,
                  const KvLayout& layout, const BufferView& positions, uint32_t n_tokens,
                  const TokenTables& tables = {});
  // q: [n_tokens][n_heads][head_dim] f32; positions: [n_tokens] i32 (causal:
  // token t sees cached positions up to positions[t]); out like q; sinks:
  // [n_heads] f32 per-head sink logits (gpt-oss), or no buffer for none;
  // `tables`: each query's sequence table (TokenTables), so a query sees
  // only its own sequence's keys.
  // With split.n_splits > 1 the positions are split (flash decoding) and a
  // second pass merges the partials into out.
  Status attention(CommandSequence& seq, const BufferView& q, const KvBuffers& kv, const KvLayout& layout,
                   const BufferView& positions, const BufferView& out, const AttentionShape& shape,
                   const AttentionOptions& options, const BufferView& sinks = {}, const TokenTables& tables = {},
                   const AttentionSplit& split = {});
  // The split for `n_tokens` queries that may each see up to `max_visible`
  // positions, by the tuning (one split when it says never, or for more
  // than kMatvecMaxTokens queries: a prefill has workgroups enough). The
  // same for 1..kMatvecMaxTokens queries, so a verify pass rounds as decode does.
  AttentionSplit attention_split(uint32_t n_tokens, uint32_t max_visible) const;
  static uint64_t attention_partial_bytes(uint32_t head_dim, uint32_t n_heads, uint32_t n_tokens, uint32_t n_splits);

  const KernelTuning& tuning() const { return tuning_; }

 private:
  Status run(CommandSequence& seq, ShaderId shader, uint32_t workgroup, std::span<const Binding> bindings,
             const void* push, uint32_t push_bytes, DispatchSize groups, std::string_view label);
  DispatchSize grid(uint64_t groups) const;
  // One product by expert id (checks the shape, ids, weights and y; the
  // caller checks x in its own form).
  Status dispatch_matvec_id(CommandSequence& seq, ShaderId shader, DType type, const BufferView& w,
                            const BufferView& x, const BufferView& ids, const BufferView& y,
                            const MatvecIdShape& s, std::string_view label);
  // One matvec dispatch with the tuning's reduction (params.h: MatvecParams),
  // after checking the addends' sizes.
  Status dispatch_matvec(CommandSequence& seq, ShaderId plain, ShaderId subgroup, const BufferView& w,
                         const BufferView& x, const BufferView& y, const MatvecAddends& add, uint32_t ncols,
                         uint32_t nrows, uint32_t row_stride, uint32_t n_tokens, std::string_view label);
  // One prompt-tile dispatch (matmul.comp), float or integer-dot.
  Status dispatch_matmul(CommandSequence& seq, ShaderId shader, std::span<const Binding> bind, uint32_t m_rows,
                         uint32_t n_tokens, uint32_t k, uint32_t row_stride, std::string_view label);

  const VulkanContext& ctx_;
  PipelineSet& pipelines_;
  KernelTuning tuning_;
};

}  // namespace hearth::vulkan
