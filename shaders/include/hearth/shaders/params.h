// Push-constant blocks shared by the GLSL shaders and the C++ launchers: one
// definition, compiled as C++ (hearth::shaders) and as GLSL (via #include).
// Members are 32-bit scalars only, so std430 push-constant layout equals the
// C++ layout; the static_asserts at the end keep it that way.
#ifndef HEARTH_SHADERS_PARAMS_H
#define HEARTH_SHADERS_PARAMS_H

#ifdef __cplusplus
#include <cstdint>
namespace hearth::shaders {
using uint = std::uint32_t;
#endif

// d[i] = a[i] (op) b[i % b_len]; b_len < n broadcasts b (a bias or a row).
struct BinaryParams {
  uint n;
  uint b_len;
};

// y[i] = f(x[i]) with f = scale (x * scale), GELU (tanh form), SiLU or
// softcap (scale * tanh(x / scale)).
struct UnaryParams {
  uint n;
  float scale;
};

// out[i] = act(gate[i]) * up[i], act = SiLU (SwiGLU) or GELU (GeGLU); the
// clamped form (OP_SWIGLU_OAI, gpt-oss): x = min(gate, limit),
// y = clamp(up, -limit, limit), out = x * sigmoid(alpha * x) * (y + 1).
struct GluParams {
  uint n;
  float alpha;
  float limit;
};

// y[r][c] = x[r][c] / sqrt(mean_c(x[r]^2) + eps) * w[c]; x, y: [nrows][ncols]
struct RmsNormParams {
  uint ncols;
  uint nrows;
  float eps;
};

// In place on x: [n_tokens][n_heads][head_dim]; the first n_dims of each head
// are rotated. Pair i's angle: e = positions[token] * freq_base^(-2i/n_dims)
// (divided by freq_factors[i] when has_freq_factors != 0, Llama 3.1), then
// t = freq_scale * e; with YaRN (ext_factor > 0) the angle is
// t * (1 - mix) + e * mix, mix = ext_factor * (1 - clamp((i - corr_low) /
// max(0.001, corr_high - corr_low), 0, 1)). cos and sin are scaled by mscale
// (attn_factor, times YaRN's magnitude correction). corr_low/high and mscale
// are computed on the host. Normal style rotates pairs (2i, 2i+1); NeoX
// style pairs (i, i + n_dims/2).
struct RopeParams {
  uint head_dim;
  uint n_dims;
  uint n_heads;
  uint n_tokens;
  float freq_base;
  float freq_scale;
  float ext_factor;
  float corr_low;
  float corr_high;
  float mscale;
  uint has_freq_factors;
};

// out[i][c] = dequant(table[ids[i]])[c]; table: [n_rows][ncols] of the shader's
// type with rows row_stride storage units apart (floats for F32, 16-bit words
// otherwise); out: [n_ids][ncols] f32.
struct GetRowsParams {
  uint ncols;
  uint n_ids;
  uint row_stride;
  // The bound table holds rows [row_begin, row_begin + row_count): tables
  // larger than the device's storage-buffer range are bound in pieces, and
  // each dispatch writes only the ids that fall in its piece.
  uint row_begin;
  uint row_count;
};

// y[r] = sum_c W[r][c] * x[c]; W: [nrows][ncols] of the shader's type, rows
// row_stride storage units apart; x: [ncols] f32; y: [nrows] f32.
struct MatvecParams {
  uint ncols;
  uint nrows;
  uint row_stride;
  uint bias;      // 1: each row's bias (binding 3) is added where its sum is written
  uint residual;  // 1: then the residual (binding 4, y's shape) is added too
};

// Activations quantized to 8-bit blocks (quantize_q8.comp) for the
// integer-dot matvec: x: [n_tokens][ncols] f32, ncols a multiple of 32.
struct QuantizeParams {
  uint ncols;
  uint n_tokens;
};
// Per token: padded_blocks(nb) blocks of 8 code words, then one (d, sum)
// float pair per block, so a token's codes and pairs start on 16 bytes.
#ifdef __cplusplus
#define HEARTH_SHARED_FN constexpr
#else
#define HEARTH_SHARED_FN
#endif
HEARTH_SHARED_FN uint padded_blocks(uint nb) { return (nb + 1u) & ~1u; }
HEARTH_SHARED_FN uint token_words(uint nb) { return 10u * padded_blocks(nb); }
#undef HEARTH_SHARED_FN

// Products by expert id: slot s (token s / k, its (s % k)-th expert) gives
// y[s][r] = sum_c W[ids[s]][r][c] * x[xs][c], xs = s when x_per_slot != 0
// (one input row per slot), s / k otherwise (the token's row); the experts'
// matrices lie expert_stride storage units apart. The binding holds experts
// expert_begin .. expert_begin + expert_count - 1 (stacks larger than one
// storage binding are bound in pieces); other slots are left to the
// dispatches of their pieces.
struct MatvecIdParams {
  uint ncols;
  uint nrows;
  uint row_stride;
  uint expert_stride;
  uint k;
  uint x_per_slot;
  uint expert_begin;
  uint expert_count;
};

// Mixture-of-experts routing and combination, per token t:
// top-k: ids[t][0..k) = the k largest of logits[t][0..n_expert), largest
// first, ties to the lower index; gate: w[t][s] from logits[t] at ids[t][s]
// (gating 0: softmax over every expert; 1: softmax over the chosen ones),
// divided by max(sum, 2^-14) when normalize != 0, times scale; sum:
// out[t][c] = sum_s w[t][s] * y[t * k + s][c] over rows of `width`; add_id:
// out[s][c] = y[s][c] + bias[ids[s]][c] for the n_tokens * k slots.
struct MoeRouteParams {
  uint n_expert;
  uint k;
  uint n_tokens;
  uint width;
  uint gating;
  uint normalize;
  float scale;
};

// Y[n][m] = sum_k W[m][k] * X[n][k]; W: [m_rows][k] (shader's type, rows
// row_stride storage units apart); X: [n_tokens][k] f32; Y: [n_tokens][m_rows].
struct MatmulParams {
  uint m_rows;
  uint n_tokens;
  uint k;
  uint row_stride;
};

// Causal attention of n_tokens queries over a paged F16 KV cache (decode is
// n_tokens = 1). q: [n_tokens][n_heads][head_dim] f32; positions: [n_tokens] i32;
// k, v: the cache regions, where position p of KV head h lives in row
// ((block_table[p / block_tokens] * n_kv_heads + h) * block_tokens + p % block_tokens)
// of head_dim f16 values; out: [n_tokens][n_heads][head_dim] f32. Query token t
// sees positions max(0, pos - window + 1) .. pos (window 0 = all); query head h
// reads KV head h / (n_heads / n_kv_heads); softcap > 0 applies
// cap * tanh(score / cap) after scaling. has_sinks != 0: head h's softmax
// also holds the logit sinks[h] (unscaled), which weighs no value.
// Several sequences in one pass (continuous batching): block_table holds one
// table of table_stride entries per sequence, and query token t reads the
// table at block_table[token_seq[t] * table_stride]; its positions are those
// of its own sequence. table_stride 0: one table for every token (token_seq
// is then never needed and may be any bound buffer).
struct AttentionParams {
  uint head_dim;
  uint n_heads;
  uint n_kv_heads;
  uint n_tokens;
  uint block_tokens;
  uint window;
  float scale;
  float softcap;
  uint has_sinks;
  uint table_stride;
  // n_splits > 1: workgroup z = split handles the positions
  // [first + z * per, first + (z + 1) * per) of the `len` its query sees,
  // per = ceil(len / n_splits), and writes its unnormalized output, running
  // max and sum to the partials (out's binding: AttentionCombineParams);
  // sinks are left to the combine pass.
  uint n_splits;
};

// Merges split attention (attention_combine.comp): partials hold, per
// (token, head, split), head_dim accumulated values then the split's max and
// sum; out = sum_s acc_s * exp(m_s - M) / sum_s l_s * exp(m_s - M) (plus the
// head's sink logit in the sum when has_sinks != 0), M the largest of them.
struct AttentionCombineParams {
  uint head_dim;
  uint n_heads;
  uint n_tokens;
  uint n_splits;
  uint has_sinks;
};

// Writes K and V rows (f32, [n_tokens][n_kv_heads][head_dim]) as f16 into
// the paged cache at positions[t], same row addressing (and per-token
// tables through token_seq and table_stride) as AttentionParams.
struct KvStoreParams {
  uint head_dim;
  uint n_kv_heads;
  uint n_tokens;
  uint block_tokens;
  uint table_stride;
};

#ifdef __cplusplus
static_assert(sizeof(BinaryParams) == 8);
static_assert(sizeof(UnaryParams) == 8);
static_assert(sizeof(GluParams) == 12);
static_assert(sizeof(RmsNormParams) == 12);
static_assert(sizeof(RopeParams) == 44);
static_assert(sizeof(GetRowsParams) == 20);
static_assert(sizeof(MatvecParams) == 20);
static_assert(sizeof(QuantizeParams) == 8);
static_assert(sizeof(MatmulParams) == 16);
static_assert(sizeof(MatvecIdParams) == 32);
static_assert(sizeof(MoeRouteParams) == 28);
static_assert(sizeof(AttentionParams) == 44);
static_assert(sizeof(AttentionCombineParams) == 20);
static_assert(sizeof(KvStoreParams) == 20);
}  // namespace hearth::shaders
#endif

#endif  // HEARTH_SHADERS_PARAMS_H
