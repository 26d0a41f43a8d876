// Qwen3-MoE: the Qwen3 layer (NeoX RoPE, per-head Q and K RMSNorm) with a
// mixture-of-experts feed-forward: softmax router over every expert, the top
// expert_used_count chosen, their probabilities renormalized to sum to one.
#include "blocks.h"

namespace hearth::model {
namespace {

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  hp.rope.mode = backend::RopeMode::NeoX;
  HEARTH_CHECK(read_moe_hparams(file, hp));
  hp.moe.gating = backend::MoeGating::Softmax;
  hp.moe.normalize = true;
  return {};
}

Status bind(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  HEARTH_CHECK(bind_globals(b, hp, w));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_CHECK(bind_attention(b, hp, il, lw));
    HEARTH_TRY(lw.q_norm, b.require(layer_tensor(il, "attn_q_norm.weight"), {hp.head_dim}));
    HEARTH_TRY(lw.k_norm, b.require(layer_tensor(il, "attn_k_norm.weight"), {hp.head_dim}));
    HEARTH_CHECK(bind_moe_ffn(b, hp, il, lw));
  }
  return {};
}

backend::Tensor* layer(LayerContext& ctx, backend::Tensor* x) {
  auto& g = ctx.graph;
  backend::Tensor* residual = kept_rows(ctx, x);
  backend::Tensor* h = g.add(residual, attention_block(ctx, g.rms_norm(x, ctx.w.attn_norm, ctx.hp.rms_eps)));
  return g.add(h, ffn_moe_swiglu(ctx, g.rms_norm(h, ctx.w.ffn_norm, ctx.hp.rms_eps)));
}

}  // namespace

const ArchDef& arch_qwen3moe() {
  static const ArchDef def{"qwen3moe", read, bind, layer};
  return def;
}

}  // namespace hearth::model
