// Llama family (Llama 2/3.x, Mistral, TinyLlama, SmolLM): pre-norm residual
// layers, GQA, RoPE on adjacent pairs, tied or separate output matrix,
// optional Llama 3.1 rope_freqs.
#include "blocks.h"

namespace hearth::model {
namespace {

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  hp.rope.mode = backend::RopeMode::Normal;
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

}  // namespace

const ArchDef& arch_llama() {
  static const ArchDef def{"llama", read, bind, prenorm_layer};
  return def;
}

}  // namespace hearth::model
