// Gemma 2: embeddings scaled by sqrt(n_embd), GELU-gated feed-forward, extra
// RMSNorms after attention and after the feed-forward (norm weights carry the
// +1 of Gemma's definition, folded in by the GGUF conversion), soft-capped
// attention scores and logits, and a sliding window on every other layer
// (even layers), NeoX RoPE, tied output.
#include <cmath>

#include "blocks.h"

namespace hearth::model {
namespace {

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  hp.rope.mode = backend::RopeMode::NeoX;
  hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
  HEARTH_TRY(const double attn_cap, float_key(file, "gemma2.attn_logit_softcapping", 50.0, FloatRange::NonNegative));
  HEARTH_TRY(const double final_cap, float_key(file, "gemma2.final_logit_softcapping", 30.0, FloatRange::NonNegative));
  hp.attn_softcap = static_cast<float>(attn_cap);
  hp.final_softcap = static_cast<float>(final_cap);
  HEARTH_TRY(auto window, file.find_uint("gemma2.attention.sliding_window"));
  hp.sliding_window = static_cast<int32_t>(window.value_or(4096));
  hp.window_layers = SlidingWindowLayers::EvenLayers;
  // Gemma 2 scales queries by query_pre_attn_scalar^-1/2, which GGUF does not
  // store: head_dim for 2B and 9B, n_embd / n_head for 27B (46 layers).
  const float scalar = hp.n_layer == 46 ? static_cast<float>(hp.n_embd / hp.n_head) : static_cast<float>(hp.head_dim);
  hp.attn_scale = 1.0f / std::sqrt(scalar);
  return {};
}

Status bind(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  HEARTH_CHECK(bind_globals(b, hp, w));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_CHECK(bind_attention(b, hp, il, lw));
    HEARTH_TRY(lw.post_attn_norm, b.require(layer_tensor(il, "post_attention_norm.weight"), {hp.n_embd}));
    HEARTH_CHECK(bind_ffn(b, hp, il, lw));
    HEARTH_TRY(lw.post_ffn_norm, b.require(layer_tensor(il, "post_ffw_norm.weight"), {hp.n_embd}));
  }
  return {};
}

}  // namespace

const ArchDef& arch_gemma2() {
  static const ArchDef def{"gemma2", read, bind, gemma_layer};
  return def;
}

}  // namespace hearth::model
