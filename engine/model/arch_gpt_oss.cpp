// gpt-oss (OpenAI's open-weight mixture of experts): pre-norm layers whose
// attention has biases on Q, K, V and the output and a learned sink logit per
// head; sliding-window attention on alternating layers (layer 0 windowed by
// default: attention.sliding_window_pattern, period 2); NeoX RoPE with YaRN
// scaling; queries scaled by rope.dimension_count^-1/2. The feed-forward is a
// mixture of experts: a router with a bias, top-k of its logits, a softmax
// over the chosen ones only (no further normalization, and no
// expert_weights_scale: the reference ignores that key here), each expert's
// gate and up products plus that expert's bias, the clamped SwiGLU
// (alpha 1.702, limit 7), the down product plus its bias. The norm before the
// feed-forward is stored as post_attention_norm. Separate output matrix.
#include <fmt/format.h>

#include <cmath>

#include "blocks.h"

namespace hearth::model {
namespace {

constexpr uint64_t kDefaultWindowPeriod = 2;
constexpr backend::GluParams kSwigluOai{1.702f, 7.0f};

Status read(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_CHECK(read_common_hparams(file, hp));
  hp.rope.mode = backend::RopeMode::NeoX;
  hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.rope.n_dims));
  HEARTH_CHECK(read_moe_hparams(file, hp));
  hp.moe.gating = backend::MoeGating::SoftmaxSelected;
  hp.moe.normalize = false;
  hp.moe.scale = 1.0f;

  const std::string where = file.path().string();
  HEARTH_TRY(const auto window, file.find_uint("gpt-oss.attention.sliding_window"));
  if (!window) {
    return make_error(ErrorCode::NotFound,
                      fmt::format("{}: required key 'gpt-oss.attention.sliding_window' is missing", where));
  }
  if (*window > static_cast<uint64_t>(INT32_MAX)) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: key 'gpt-oss.attention.sliding_window' = {} is out of range", where, *window));
  }
  if (*window == 0) return {};  // no window: every layer global
  hp.sliding_window = static_cast<int32_t>(*window);
  hp.window_layers = SlidingWindowLayers::PerLayer;
  HEARTH_CHECK(read_window_pattern(file, hp, kDefaultWindowPeriod));
  // Windowed layers may rotate with their own base, keeping the scaling.
  HEARTH_TRY(const auto swa_base, file.find_float("gpt-oss.rope.freq_base_swa"));
  if (swa_base) {
    HEARTH_TRY(const double base, float_key(file, "gpt-oss.rope.freq_base_swa", 1.0, FloatRange::Positive));
    backend::RopeParams local = hp.rope;
    local.freq_base = static_cast<float>(base);
    hp.rope_swa = local;
  }
  return {};
}

Status bind(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  HEARTH_TRY(w.tok_embd, b.require("token_embd.weight", {hp.n_embd, hp.n_vocab}));
  HEARTH_TRY(w.output_norm, b.require("output_norm.weight", {hp.n_embd}));
  HEARTH_TRY(w.output, b.require("output.weight", {hp.n_embd, hp.n_vocab}));
  const int64_t E = hp.n_embd, F = hp.n_ff_exp, X = hp.n_expert;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    auto& lw = w.layers[static_cast<size_t>(il)];
    HEARTH_CHECK(bind_attention(b, hp, il, lw));
    // Optional for the other families, required here (the missing one is named).
    if (!lw.bq) {
      HEARTH_TRY(lw.bq, b.require(layer_tensor(il, "attn_q.bias"), {hp.n_head * hp.head_dim}));
    }
    if (!lw.bk) {
      HEARTH_TRY(lw.bk, b.require(layer_tensor(il, "attn_k.bias"), {hp.n_head_kv * hp.head_dim}));
    }
    if (!lw.bv) {
      HEARTH_TRY(lw.bv, b.require(layer_tensor(il, "attn_v.bias"), {hp.n_head_kv * hp.head_dim}));
    }
    HEARTH_TRY(lw.bo, b.require(layer_tensor(il, "attn_output.bias"), {E}));
    HEARTH_TRY(lw.attn_sinks, b.require(layer_tensor(il, "attn_sinks.weight"), {hp.n_head}));
    HEARTH_TRY(lw.ffn_norm, b.require(layer_tensor(il, "post_attention_norm.weight"), {E}));
    HEARTH_TRY(lw.ffn_gate_inp, b.require(layer_tensor(il, "ffn_gate_inp.weight"), {E, X}));
    HEARTH_TRY(lw.ffn_gate_exps, b.require(layer_tensor(il, "ffn_gate_exps.weight"), {E, F, X}));
    HEARTH_TRY(lw.ffn_up_exps, b.require(layer_tensor(il, "ffn_up_exps.weight"), {E, F, X}));
    HEARTH_TRY(lw.ffn_down_exps, b.require(layer_tensor(il, "ffn_down_exps.weight"), {F, E, X}));
    HEARTH_TRY(lw.ffn_gate_inp_b, b.require(layer_tensor(il, "ffn_gate_inp.bias"), {X}));
    HEARTH_TRY(lw.ffn_gate_exps_b, b.require_f32(layer_tensor(il, "ffn_gate_exps.bias"), {F, X}));
    HEARTH_TRY(lw.ffn_up_exps_b, b.require_f32(layer_tensor(il, "ffn_up_exps.bias"), {F, X}));
    HEARTH_TRY(lw.ffn_down_exps_b, b.require_f32(layer_tensor(il, "ffn_down_exps.bias"), {E, X}));
  }
  return {};
}

Tensor* ffn_moe_oai(LayerContext& ctx, Tensor* x) {
  auto& g = ctx.graph;
  const LayerWeights& w = ctx.w;
  Tensor* logits = g.matmul(w.ffn_gate_inp, x, w.ffn_gate_inp_b);
  Tensor* ids = g.top_k(logits, ctx.hp.n_expert_used);
  Tensor* weights = g.moe_gate(logits, ids, ctx.hp.moe);
  Tensor* gate = g.add_id(g.matmul_id(w.ffn_gate_exps, x, ids), w.ffn_gate_exps_b, ids);
  Tensor* up = g.add_id(g.matmul_id(w.ffn_up_exps, x, ids), w.ffn_up_exps_b, ids);
  Tensor* down = g.add_id(g.matmul_id(w.ffn_down_exps, g.swiglu_oai(gate, up, kSwigluOai), ids), w.ffn_down_exps_b, ids);
  return g.moe_sum(down, weights);
}

Tensor* layer(LayerContext& ctx, Tensor* x) {
  auto& g = ctx.graph;
  const float eps = ctx.hp.rms_eps;
  Tensor* residual = kept_rows(ctx, x);
  Tensor* attn = attention_block(ctx, g.rms_norm(x, ctx.w.attn_norm, eps), ctx.hp.rope_of_layer(ctx.layer));
  Tensor* h = g.add(residual, attn);
  return g.add(h, ffn_moe_oai(ctx, g.rms_norm(h, ctx.w.ffn_norm, eps)));
}

}  // namespace

const ArchDef& arch_gpt_oss() {
  static const ArchDef def{"gpt-oss", read, bind, layer};
  return def;
}

}  // namespace hearth::model
