// Gemma 3: Gemma 2's layer (embeddings scaled by sqrt(n_embd), GELU-gated
// feed-forward, RMSNorms after attention and after the feed-forward) with an
// RMSNorm over each head of Q and K, no score soft-capping, and sliding-window
// ("local") layers in a pattern: by default 5 local then 1 global, or the
// file's own per-layer list. Local layers rotate with their own RoPE base
// (rope.freq_base_swa, 10000 when absent) and no scaling; global layers with
// rope.freq_base and the file's RoPE scaling (linear 8 on 4B and up). NeoX RoPE,
// head size from attention.key_length (not n_embd / n_head), tied output.
#include <fmt/format.h>

#include <cmath>

#include "blocks.h"

namespace hearth::model {
namespace {

// Five local layers, then one global.
constexpr uint64_t kDefaultPeriod = 6;

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  hp.rope.mode = backend::RopeMode::NeoX;
  hp.embd_scale = std::sqrt(static_cast<float>(hp.n_embd));
  HEARTH_TRY(const double final_cap, float_key(file, "gemma3.final_logit_softcapping", 0.0, FloatRange::NonNegative));
  hp.final_softcap = static_cast<float>(final_cap);
  // Queries scaled by query_pre_attn_scalar^-1/2, which GGUF does not store:
  // n_embd / n_head for 27B (62 layers), head_dim for the others.
  const float scalar = hp.n_layer == 62 ? static_cast<float>(hp.n_embd / hp.n_head) : static_cast<float>(hp.head_dim);
  hp.attn_scale = 1.0f / std::sqrt(scalar);

  HEARTH_TRY(const auto window, file.find_uint("gemma3.attention.sliding_window"));
  if (!window || *window == 0) return {};  // no local layers: every layer global
  if (*window > static_cast<uint64_t>(INT32_MAX)) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: key 'gemma3.attention.sliding_window' = {} is out of range",
                                                            file.path().string(), *window));
  }
  hp.sliding_window = static_cast<int32_t>(*window);
  hp.window_layers = SlidingWindowLayers::PerLayer;
  HEARTH_CHECK(read_window_pattern(file, hp, kDefaultPeriod));
  HEARTH_TRY(const double swa_base, float_key(file, "gemma3.rope.freq_base_swa", 10000.0, FloatRange::Positive));
  backend::RopeParams local = hp.rope;
  local.freq_base = static_cast<float>(swa_base);
  local.freq_scale = 1.0f;
  local.ext_factor = 0.0f;
  local.attn_factor = 1.0f;
  hp.rope_swa = local;
  return {};
}

Status bind(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  HEARTH_CHECK(bind_globals(b, hp, w));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_CHECK(bind_attention(b, hp, il, lw));
    HEARTH_TRY(lw.q_norm, b.require(layer_tensor(il, "attn_q_norm.weight"), {hp.head_dim}));
    HEARTH_TRY(lw.k_norm, b.require(layer_tensor(il, "attn_k_norm.weight"), {hp.head_dim}));
    HEARTH_TRY(lw.post_attn_norm, b.require(layer_tensor(il, "post_attention_norm.weight"), {hp.n_embd}));
    HEARTH_CHECK(bind_ffn(b, hp, il, lw));
    HEARTH_TRY(lw.post_ffn_norm, b.require(layer_tensor(il, "post_ffw_norm.weight"), {hp.n_embd}));
  }
  return {};
}

}  // namespace

const ArchDef& arch_gemma3() {
  static const ArchDef def{"gemma3", read, bind, gemma_layer};
  return def;
}

}  // namespace hearth::model
