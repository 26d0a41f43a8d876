// Qwen2 / Qwen2.5: the Llama layer with Q/K/V biases and NeoX RoPE (rotating
// the first half of each head against the second).
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
    const int64_t q = hp.n_head * hp.head_dim, kv = hp.n_head_kv * hp.head_dim;
    HEARTH_TRY(lw.bq, b.require(layer_tensor(il, "attn_q.bias"), {q}));
    HEARTH_TRY(lw.bk, b.require(layer_tensor(il, "attn_k.bias"), {kv}));
    HEARTH_TRY(lw.bv, b.require(layer_tensor(il, "attn_v.bias"), {kv}));
    HEARTH_CHECK(bind_ffn(b, hp, il, lw));
  }
  return {};
}

}  // namespace

const ArchDef& arch_qwen2() {
  static const ArchDef def{"qwen2", read, bind, prenorm_layer};
  return def;
}

}  // namespace hearth::model
