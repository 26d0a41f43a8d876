// Qwen3: the Llama layer with NeoX RoPE, no biases, and an RMSNorm over each
// head of Q and K (weights {head_dim}) before RoPE.
#include "blocks.h"

namespace hearth::model {
namespace {

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  hp.rope.mode = backend::RopeMode::NeoX;
  return {};
}

Status bind(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  HEARTH_CHECK(bind_globals(b, hp, w));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_CHECK(bind_attention(b, hp, il, lw));
    HEARTH_TRY(lw.q_norm, b.require(layer_tensor(il, "attn_q_norm.weight"), {hp.head_dim}));
    HEARTH_TRY(lw.k_norm, b.require(layer_tensor(il, "attn_k_norm.weight"), {hp.head_dim}));
    HEARTH_CHECK(bind_ffn(b, hp, il, lw));
  }
  return {};
}

}  // namespace

const ArchDef& arch_qwen3() {
  static const ArchDef def{"qwen3", read, bind, prenorm_layer};
  return def;
}

}  // namespace hearth::model
