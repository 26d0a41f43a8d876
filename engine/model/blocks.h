// Blocks shared by the architectures: metadata reading, the standard weight
// binding, attention and feed-forward sub-graphs.
#pragma once

#include "arch.h"

namespace hearth::model {

// Reads the keys every family shares ({arch}.embedding_length, ...).
Status read_common_hparams(const gguf::GgufFile& file, HParams& hp);

// A float key, `fallback` when absent; a NaN, an infinity, a value beyond
// float range or one outside `range` is InvalidFormat naming the key and file.
enum class FloatRange { Positive, NonNegative };
Result<double> float_key(const gguf::GgufFile& file, const std::string& key, double fallback, FloatRange range);

// Token embedding, output norm and output (tied to the embedding when absent),
// and rope_freqs.
Status bind_globals(WeightBinder& b, const HParams& hp, ModelWeights& w);
// attn_norm, separate Q/K/V (with optional biases), attn_output.
Status bind_attention(WeightBinder& b, const HParams& hp, int64_t layer, LayerWeights& lw);
// ffn_norm, ffn_gate, ffn_up, ffn_down.
Status bind_ffn(WeightBinder& b, const HParams& hp, int64_t layer, LayerWeights& lw);
std::string layer_tensor(int64_t layer, const char* name);
// {arch}.expert_count, expert_used_count and expert_feed_forward_length
// (n_ff / expert_used_count when absent), checked against each other.
Status read_moe_hparams(const gguf::GgufFile& file, HParams& hp);
// attention.sliding_window_pattern into hp.window_pattern: a period p
// (layer l is windowed unless l % p == p - 1; 0 windows every layer;
// `default_period` when absent), or one bool or integer per layer.
Status read_window_pattern(const gguf::GgufFile& file, HParams& hp, uint64_t default_period);
// ffn_norm, the router ffn_gate_inp and the stacked ffn_{gate,up,down}_exps.
Status bind_moe_ffn(WeightBinder& b, const HParams& hp, int64_t layer, LayerWeights& lw);

// x itself, or its rows that the layer keeps (LayerContext::kept): what a
// layer adds its attention output to.
backend::Tensor* kept_rows(LayerContext& ctx, backend::Tensor* x);

// Self-attention on the normalized input: Q/K/V (fused or separate, with
// biases and per-head norms when bound), RoPE, KV store, attention (with
// sinks when bound), output (with its bias when bound). With ctx.kept, the
// queries and the output are those of the kept rows only.
backend::Tensor* attention_block(LayerContext& ctx, backend::Tensor* x);
// The same with the layer's own RoPE (Gemma 3's local layers), or none at all
// when `rope` is null (SmolLM3's NoPE layers).
backend::Tensor* attention_block(LayerContext& ctx, backend::Tensor* x, const backend::RopeParams* rope);
// silu(gate) * up -> down (fused gate_up when bound).
backend::Tensor* ffn_swiglu(LayerContext& ctx, backend::Tensor* x);
// gelu(gate) * up -> down.
backend::Tensor* ffn_geglu(LayerContext& ctx, backend::Tensor* x);
// Gemma 2 and 3: attention and GeGLU feed-forward, each between a pre- and a
// post-norm, with the layer's own RoPE (HParams::rope_of_layer).
backend::Tensor* gemma_layer(LayerContext& ctx, backend::Tensor* x);
// Mixture of experts with SwiGLU experts: router logits, top-k, gate
// weights (hp.moe), each chosen expert's silu(gate) * up -> down, weighted sum.
backend::Tensor* ffn_moe_swiglu(LayerContext& ctx, backend::Tensor* x);
// The pre-norm residual layer of Llama-like families:
// x + attn(norm(x)), then h + ffn(norm(h)).
backend::Tensor* prenorm_layer(LayerContext& ctx, backend::Tensor* x);

}  // namespace hearth::model
