// Phi-3 / Phi-3.5: NeoX RoPE, a fused QKV projection (q, k, v stacked in the
// output dimension) and a fused gate/up projection (gate first), sliding
// window on every layer when the metadata gives one.
#include "blocks.h"

namespace hearth::model {
namespace {

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  hp.rope.mode = backend::RopeMode::NeoX;
  HEARTH_TRY(auto window, file.find_uint("phi3.attention.sliding_window"));
  if (window && *window > 0) {
    hp.sliding_window = static_cast<int32_t>(*window);
    hp.window_layers = SlidingWindowLayers::All;
  }
  return {};
}

Status bind(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  HEARTH_CHECK(bind_globals(b, hp, w));
  const int64_t q = hp.n_head * hp.head_dim, kv = hp.n_head_kv * hp.head_dim;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_TRY(lw.wqkv, b.optional(layer_tensor(il, "attn_qkv.weight"), {hp.n_embd, q + 2 * kv}));
    if (lw.wqkv) {
      HEARTH_TRY(lw.attn_norm, b.require(layer_tensor(il, "attn_norm.weight"), {hp.n_embd}));
      HEARTH_TRY(lw.wo, b.require(layer_tensor(il, "attn_output.weight"), {q, hp.n_embd}));
    } else {
      HEARTH_CHECK(bind_attention(b, hp, il, lw));
    }
    HEARTH_TRY(lw.ffn_norm, b.require(layer_tensor(il, "ffn_norm.weight"), {hp.n_embd}));
    HEARTH_TRY(lw.w_gate_up, b.require(layer_tensor(il, "ffn_up.weight"), {hp.n_embd, 2 * hp.n_ff}));
    HEARTH_TRY(lw.w_down, b.require(layer_tensor(il, "ffn_down.weight"), {hp.n_ff, hp.n_embd}));
  }
  return {};
}

}  // namespace

const ArchDef& arch_phi3() {
  static const ArchDef def{"phi3", read, bind, prenorm_layer};
  return def;
}

}  // namespace hearth::model
