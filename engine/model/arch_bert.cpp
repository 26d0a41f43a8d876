// BERT encoders (sentence-embedding models such as all-MiniLM and bge):
// token + learned position + token-type embeddings through a LayerNorm,
// then post-norm layers: LayerNorm(x + attention(x)), LayerNorm(h + FFN(h))
// with a GELU feed-forward, biases everywhere and bidirectional attention
// without RoPE. No language-model head: the hidden states are pooled.
//
// nomic-bert (nomic-embed-text) is the same post-norm encoder with RoPE
// (NeoX halves) instead of learned positions, a fused QKV projection and a
// SwiGLU feed-forward, without biases.
#include <fmt/format.h>

#include "blocks.h"

namespace hearth::model {
namespace {

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  HEARTH_TRY(const double eps,
             float_key(file, hp.architecture + ".attention.layer_norm_epsilon", 1e-12, FloatRange::Positive));
  hp.norm_eps = static_cast<float>(eps);
  const gguf::TensorInfo* types = file.find_tensor("token_types.weight");
  hp.n_token_types = types ? types->dims[1] : 0;
  // Absent means the encoder's default: attention sees the whole text.
  HEARTH_TRY(const auto causal, file.find_bool(hp.architecture + ".attention.causal"));
  hp.causal = causal.value_or(false);
  return {};
}

Status read_nomic(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read(file, hp));
  hp.rope.mode = backend::RopeMode::NeoX;
  return {};
}

Status bind_embeddings(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  const int64_t E = hp.n_embd;
  HEARTH_TRY(w.tok_embd, b.require("token_embd.weight", {E, hp.n_vocab}));
  if (hp.n_token_types > 0) {
    HEARTH_TRY(w.tok_types, b.require("token_types.weight", {E, hp.n_token_types}));
  }
  HEARTH_TRY(w.tok_embd_norm, b.require("token_embd_norm.weight", {E}));
  HEARTH_TRY(w.tok_embd_norm_b, b.require("token_embd_norm.bias", {E}));
  return {};
}

// The two LayerNorms every layer of both families ends its halves with.
Status bind_post_norms(WeightBinder& b, const HParams& hp, int64_t il, LayerWeights& lw) {
  const int64_t E = hp.n_embd;
  HEARTH_TRY(lw.post_attn_norm, b.require(layer_tensor(il, "attn_output_norm.weight"), {E}));
  HEARTH_TRY(lw.post_attn_norm_b, b.require(layer_tensor(il, "attn_output_norm.bias"), {E}));
  HEARTH_TRY(lw.post_ffn_norm, b.require(layer_tensor(il, "layer_output_norm.weight"), {E}));
  HEARTH_TRY(lw.post_ffn_norm_b, b.require(layer_tensor(il, "layer_output_norm.bias"), {E}));
  return {};
}

Status bind_nomic(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  const int64_t E = hp.n_embd;
  HEARTH_CHECK(bind_embeddings(b, hp, w));
  const int64_t q = hp.n_head * hp.head_dim, kv = hp.n_head_kv * hp.head_dim;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_TRY(lw.wqkv, b.require(layer_tensor(il, "attn_qkv.weight"), {E, q + 2 * kv}));
    HEARTH_TRY(lw.wo, b.require(layer_tensor(il, "attn_output.weight"), {q, E}));
    HEARTH_TRY(lw.w_gate, b.require(layer_tensor(il, "ffn_gate.weight"), {E, hp.n_ff}));
    HEARTH_TRY(lw.w_up, b.require(layer_tensor(il, "ffn_up.weight"), {E, hp.n_ff}));
    HEARTH_TRY(lw.w_down, b.require(layer_tensor(il, "ffn_down.weight"), {hp.n_ff, E}));
    HEARTH_CHECK(bind_post_norms(b, hp, il, lw));
  }
  return {};
}

Status bind(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  const int64_t E = hp.n_embd;
  HEARTH_CHECK(bind_embeddings(b, hp, w));
  HEARTH_TRY(w.pos_embd, b.require("position_embd.weight", {E, hp.n_ctx_train}));
  const int64_t q = hp.n_head * hp.head_dim, kv = hp.n_head_kv * hp.head_dim;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_TRY(lw.wq, b.require(layer_tensor(il, "attn_q.weight"), {E, q}));
    HEARTH_TRY(lw.wk, b.require(layer_tensor(il, "attn_k.weight"), {E, kv}));
    HEARTH_TRY(lw.wv, b.require(layer_tensor(il, "attn_v.weight"), {E, kv}));
    HEARTH_TRY(lw.bq, b.require(layer_tensor(il, "attn_q.bias"), {q}));
    HEARTH_TRY(lw.bk, b.require(layer_tensor(il, "attn_k.bias"), {kv}));
    HEARTH_TRY(lw.bv, b.require(layer_tensor(il, "attn_v.bias"), {kv}));
    HEARTH_TRY(lw.wo, b.require(layer_tensor(il, "attn_output.weight"), {q, E}));
    HEARTH_TRY(lw.bo, b.require(layer_tensor(il, "attn_output.bias"), {E}));
    HEARTH_TRY(lw.w_up, b.require(layer_tensor(il, "ffn_up.weight"), {E, hp.n_ff}));
    HEARTH_TRY(lw.b_up, b.require(layer_tensor(il, "ffn_up.bias"), {hp.n_ff}));
    HEARTH_TRY(lw.w_down, b.require(layer_tensor(il, "ffn_down.weight"), {hp.n_ff, E}));
    HEARTH_TRY(lw.b_down, b.require(layer_tensor(il, "ffn_down.bias"), {E}));
    HEARTH_CHECK(bind_post_norms(b, hp, il, lw));
  }
  return {};
}

backend::Tensor* layer(LayerContext& ctx, backend::Tensor* x) {
  auto& g = ctx.graph;
  const LayerWeights& w = ctx.w;
  const float eps = ctx.hp.norm_eps;
  backend::Tensor* residual = kept_rows(ctx, x);
  backend::Tensor* attn = attention_block(ctx, x, nullptr);
  backend::Tensor* h = g.layer_norm(g.add(residual, attn), w.post_attn_norm, w.post_attn_norm_b, eps);
  backend::Tensor* ffn = g.matmul(w.w_down, g.gelu(g.matmul(w.w_up, h, w.b_up)), w.b_down);
  return g.layer_norm(g.add(h, ffn), w.post_ffn_norm, w.post_ffn_norm_b, eps);
}

backend::Tensor* nomic_layer(LayerContext& ctx, backend::Tensor* x) {
  auto& g = ctx.graph;
  const LayerWeights& w = ctx.w;
  const float eps = ctx.hp.norm_eps;
  backend::Tensor* residual = kept_rows(ctx, x);
  backend::Tensor* attn = attention_block(ctx, x, &ctx.hp.rope);
  backend::Tensor* h = g.layer_norm(g.add(residual, attn), w.post_attn_norm, w.post_attn_norm_b, eps);
  return g.layer_norm(g.add(h, ffn_swiglu(ctx, h)), w.post_ffn_norm, w.post_ffn_norm_b, eps);
}

}  // namespace

const ArchDef& arch_bert() {
  static const ArchDef def{"bert", read, bind, layer};
  return def;
}

const ArchDef& arch_nomic_bert() {
  static const ArchDef def{"nomic-bert", read_nomic, bind_nomic, nomic_layer};
  return def;
}

}  // namespace hearth::model
