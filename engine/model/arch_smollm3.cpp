// SmolLM3: the Llama layer (RoPE on adjacent pairs, GQA, SwiGLU), except that
// every 4th layer ((il + 1) % 4 == 0) attends without RoPE ("NoPE"). The
// reference reads no metadata for this: the step of 4 is fixed for the family.
#include "blocks.h"

namespace hearth::model {
namespace {

constexpr int32_t kNoRopeStep = 4;

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  hp.rope.mode = backend::RopeMode::Normal;
  hp.no_rope_step = kNoRopeStep;
  return {};
}

Status bind(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  HEARTH_CHECK(bind_globals(b, hp, w));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_CHECK(bind_attention(b, hp, il, lw));
    HEARTH_CHECK(bind_ffn(b, hp, il, lw));
  }
  return {};
}

backend::Tensor* layer(LayerContext& ctx, backend::Tensor* x) {
  auto& g = ctx.graph;
  backend::Tensor* residual = kept_rows(ctx, x);
  backend::Tensor* attn =
      attention_block(ctx, g.rms_norm(x, ctx.w.attn_norm, ctx.hp.rms_eps), ctx.hp.rope_of_layer(ctx.layer));
  backend::Tensor* h = g.add(residual, attn);
  return g.add(h, ffn_swiglu(ctx, g.rms_norm(h, ctx.w.ffn_norm, ctx.hp.rms_eps)));
}

}  // namespace

const ArchDef& arch_smollm3() {
  static const ArchDef def{"smollm3", read, bind, layer};
  return def;
}

}  // namespace hearth::model
