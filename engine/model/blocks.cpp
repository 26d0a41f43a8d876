#include "blocks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

namespace hearth::model {

using backend::Tensor;

namespace {

std::string key(const HParams& hp, const char* suffix) { return fmt::format("{}.{}", hp.architecture, suffix); }

Result<int64_t> positive(const gguf::GgufFile& file, const std::string& k, std::optional<uint64_t> fallback) {
  HEARTH_TRY(auto v, file.find_uint(k));
  if (!v && !fallback) {
    return make_error(ErrorCode::NotFound, fmt::format("{}: required key '{}' is missing", file.path().string(), k));
  }
  const uint64_t value = v ? *v : *fallback;
  if (value == 0 || value > (1ull << 31)) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: key '{}' = {} is out of range", file.path().string(), k, value));
  }
  return static_cast<int64_t>(value);
}

}  // namespace

Result<double> float_key(const gguf::GgufFile& file, const std::string& k, double fallback, FloatRange range) {
  HEARTH_TRY(auto v, file.find_float(k));
  if (!v) return fallback;
  // The engine computes in float: a value beyond its range becomes inf.
  const double value = *v;
  const bool finite = std::isfinite(value) && std::fabs(value) <= static_cast<double>(std::numeric_limits<float>::max());
  const bool ok = finite && (range == FloatRange::Positive ? value > 0.0 : value >= 0.0);
  if (!ok) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: key '{}' = {} must be a finite number {}", file.path().string(), k, value,
                                  range == FloatRange::Positive ? "greater than 0" : "of at least 0"));
  }
  return value;
}

std::string layer_tensor(int64_t layer, const char* name) { return fmt::format("blk.{}.{}", layer, name); }

Status read_common_hparams(const gguf::GgufFile& file, HParams& hp) {
  HEARTH_TRY(hp.n_embd, positive(file, key(hp, "embedding_length"), std::nullopt));
  HEARTH_TRY(hp.n_layer, positive(file, key(hp, "block_count"), std::nullopt));
  HEARTH_TRY(hp.n_ff, positive(file, key(hp, "feed_forward_length"), std::nullopt));
  HEARTH_TRY(hp.n_head, positive(file, key(hp, "attention.head_count"), std::nullopt));
  HEARTH_TRY(hp.n_head_kv, positive(file, key(hp, "attention.head_count_kv"), static_cast<uint64_t>(hp.n_head)));
  HEARTH_TRY(hp.n_ctx_train, positive(file, key(hp, "context_length"), 4096));
  HEARTH_TRY(hp.head_dim, positive(file, key(hp, "attention.key_length"), static_cast<uint64_t>(hp.n_embd / hp.n_head)));
  HEARTH_TRY(hp.head_dim_v, positive(file, key(hp, "attention.value_length"), static_cast<uint64_t>(hp.head_dim)));
  // Zero, negative or non-finite values would turn every norm or rotation
  // into NaN or garbage silently: refused here with the key and file.
  HEARTH_TRY(const double eps, float_key(file, key(hp, "attention.layer_norm_rms_epsilon"), 1e-5, FloatRange::Positive));
  hp.rms_eps = static_cast<float>(eps);

  const std::string where = file.path().string();
  if (hp.n_head % hp.n_head_kv != 0) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: head_count {} is not a multiple of head_count_kv {}",
                                                            where, hp.n_head, hp.n_head_kv));
  }
  if (hp.head_dim_v != hp.head_dim || hp.head_dim % 2 != 0) {
    return make_error(ErrorCode::Unsupported, fmt::format("{}: key length {} and value length {} must be equal and even",
                                                          where, hp.head_dim, hp.head_dim_v));
  }

  auto& r = hp.rope;
  r.head_dim = static_cast<int32_t>(hp.head_dim);
  HEARTH_TRY(const int64_t n_rot, positive(file, key(hp, "rope.dimension_count"), static_cast<uint64_t>(hp.head_dim)));
  if (n_rot > hp.head_dim || n_rot % 2 != 0) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: rope.dimension_count {} does not fit head size {}",
                                                            where, n_rot, hp.head_dim));
  }
  r.n_dims = static_cast<int32_t>(n_rot);
  HEARTH_TRY(const double base, float_key(file, key(hp, "rope.freq_base"), 10000.0, FloatRange::Positive));
  r.freq_base = static_cast<float>(base);

  // rope.scaling.*: linear divides positions by the factor; YaRN blends
  // interpolation and extrapolation per frequency.
  HEARTH_TRY(auto scaling_type, file.find_string(key(hp, "rope.scaling.type")));
  HEARTH_TRY(auto factor, file.find_float(key(hp, "rope.scaling.factor")));
  HEARTH_TRY(auto legacy_linear, file.find_float(key(hp, "rope.scale_linear")));
  HEARTH_TRY(auto orig_ctx, file.find_uint(key(hp, "rope.scaling.original_context_length")));
  HEARTH_TRY(const double attn_factor,
             float_key(file, key(hp, "rope.scaling.attn_factor"), 1.0, FloatRange::Positive));
  // Validated only when present, so a file without them keeps the defaults.
  if (factor) HEARTH_CHECK(float_key(file, key(hp, "rope.scaling.factor"), 1.0, FloatRange::Positive));
  if (legacy_linear) HEARTH_CHECK(float_key(file, key(hp, "rope.scale_linear"), 1.0, FloatRange::Positive));
  const std::string type = scaling_type.value_or(legacy_linear ? "linear" : "none");
  const double f = factor ? *factor : legacy_linear.value_or(1.0);
  r.n_ctx_orig = static_cast<int32_t>(orig_ctx.value_or(static_cast<uint64_t>(hp.n_ctx_train)));
  r.attn_factor = static_cast<float>(attn_factor);
  if (type == "linear" || type == "yarn") {
    if (f > 0.0) r.freq_scale = static_cast<float>(1.0 / f);
    if (type == "yarn") r.ext_factor = 1.0f;
  } else if (type != "none" && type != "llama3") {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("{}: rope.scaling.type '{}' is not supported (none, linear, yarn)", where, type));
  }
  hp.attn_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  return {};
}

Result<Tensor*> WeightBinder::optional(const std::string& name, std::vector<int64_t> shape) {
  const gguf::TensorInfo* info = file_.find_tensor(name);
  if (!info) return static_cast<Tensor*>(nullptr);
  for (size_t i = 0; i < gguf::kMaxDims; ++i) {
    const int64_t want = i < shape.size() ? shape[i] : 1;
    if (info->dims[i] != want) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: tensor '{}' has shape [{}, {}, {}], expected [{}]", file_.path().string(), name,
                                    info->dims[0], info->dims[1], info->dims[2], fmt::join(shape, ", ")));
    }
  }
  if (shape.size() == 1 && info->type != DType::F32) {
    return make_error(ErrorCode::Unsupported, fmt::format("{}: vector tensor '{}' is {}, expected F32",
                                                          file_.path().string(), name, traits(info->type).name));
  }
  Tensor& t = store_.emplace_back();
  t.type = info->type;
  t.ne = {info->dims[0], info->dims[1], info->dims[2], info->dims[3]};
  t.kind = backend::TensorKind::Weight;
  t.data = const_cast<uint8_t*>(file_.tensor_data(*info).data());
  t.name = name;
  bound_bytes_ += info->bytes;
  return &t;
}

Result<Tensor*> WeightBinder::require(const std::string& name, std::vector<int64_t> shape) {
  HEARTH_TRY(Tensor * t, optional(name, shape));
  if (!t) {
    return make_error(ErrorCode::NotFound, fmt::format("{}: required tensor '{}' is missing", file_.path().string(), name));
  }
  return t;
}

Result<Tensor*> WeightBinder::require_f32(const std::string& name, std::vector<int64_t> shape) {
  HEARTH_TRY(Tensor * t, require(name, std::move(shape)));
  if (t->type != DType::F32) {
    return make_error(ErrorCode::Unsupported, fmt::format("{}: tensor '{}' is {}, expected F32", file_.path().string(),
                                                          name, traits(t->type).name));
  }
  return t;
}

Status bind_globals(WeightBinder& b, const HParams& hp, ModelWeights& w) {
  HEARTH_TRY(w.tok_embd, b.require("token_embd.weight", {hp.n_embd, hp.n_vocab}));
  HEARTH_TRY(w.output_norm, b.require("output_norm.weight", {hp.n_embd}));
  HEARTH_TRY(w.output, b.optional("output.weight", {hp.n_embd, hp.n_vocab}));
  if (!w.output) w.output = w.tok_embd;  // tied embeddings
  HEARTH_TRY(w.rope_freqs, b.optional("rope_freqs.weight", {hp.rope.n_dims / 2}));
  return {};
}

Status bind_attention(WeightBinder& b, const HParams& hp, int64_t il, LayerWeights& lw) {
  const int64_t q = hp.n_head * hp.head_dim, kv = hp.n_head_kv * hp.head_dim;
  HEARTH_TRY(lw.attn_norm, b.require(layer_tensor(il, "attn_norm.weight"), {hp.n_embd}));
  HEARTH_TRY(lw.wq, b.require(layer_tensor(il, "attn_q.weight"), {hp.n_embd, q}));
  HEARTH_TRY(lw.wk, b.require(layer_tensor(il, "attn_k.weight"), {hp.n_embd, kv}));
  HEARTH_TRY(lw.wv, b.require(layer_tensor(il, "attn_v.weight"), {hp.n_embd, kv}));
  HEARTH_TRY(lw.bq, b.optional(layer_tensor(il, "attn_q.bias"), {q}));
  HEARTH_TRY(lw.bk, b.optional(layer_tensor(il, "attn_k.bias"), {kv}));
  HEARTH_TRY(lw.bv, b.optional(layer_tensor(il, "attn_v.bias"), {kv}));
  HEARTH_TRY(lw.wo, b.require(layer_tensor(il, "attn_output.weight"), {q, hp.n_embd}));
  return {};
}

Status bind_ffn(WeightBinder& b, const HParams& hp, int64_t il, LayerWeights& lw) {
  HEARTH_TRY(lw.ffn_norm, b.require(layer_tensor(il, "ffn_norm.weight"), {hp.n_embd}));
  HEARTH_TRY(lw.w_gate, b.require(layer_tensor(il, "ffn_gate.weight"), {hp.n_embd, hp.n_ff}));
  HEARTH_TRY(lw.w_up, b.require(layer_tensor(il, "ffn_up.weight"), {hp.n_embd, hp.n_ff}));
  HEARTH_TRY(lw.w_down, b.require(layer_tensor(il, "ffn_down.weight"), {hp.n_ff, hp.n_embd}));
  return {};
}

Status read_moe_hparams(const gguf::GgufFile& file, HParams& hp) {
  const std::string where = file.path().string();
  HEARTH_TRY(hp.n_expert, positive(file, key(hp, "expert_count"), std::nullopt));
  HEARTH_TRY(hp.n_expert_used, positive(file, key(hp, "expert_used_count"), std::nullopt));
  if (hp.n_expert_used > hp.n_expert) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: expert_used_count {} exceeds expert_count {}", where,
                                                            hp.n_expert_used, hp.n_expert));
  }
  HEARTH_TRY(hp.n_ff_exp, positive(file, key(hp, "expert_feed_forward_length"),
                                   static_cast<uint64_t>(std::max<int64_t>(1, hp.n_ff / hp.n_expert_used))));
  HEARTH_TRY(const double scale, float_key(file, key(hp, "expert_weights_scale"), 0.0, FloatRange::NonNegative));
  // 0 (absent) and 1 leave the weights as they are.
  hp.moe.scale = scale == 0.0 ? 1.0f : static_cast<float>(scale);
  return {};
}

Status read_window_pattern(const gguf::GgufFile& file, HParams& hp, uint64_t default_period) {
  const std::string k = key(hp, "attention.sliding_window_pattern");
  const std::string where = file.path().string();
  hp.window_pattern.assign(static_cast<size_t>(hp.n_layer), false);
  const gguf::Value* v = file.find(k);
  const auto* list = v ? std::get_if<gguf::Array>(&v->data) : nullptr;
  if (list) {
    if (list->items.size() != static_cast<size_t>(hp.n_layer)) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: key '{}' has {} entries for {} layers", where, k,
                                                              list->items.size(), hp.n_layer));
    }
    for (size_t l = 0; l < list->items.size(); ++l) {
      const auto& d = list->items[l].data;
      if (const bool* b = std::get_if<bool>(&d)) {
        hp.window_pattern[l] = *b;
      } else if (const uint64_t* u = std::get_if<uint64_t>(&d)) {
        hp.window_pattern[l] = *u != 0;
      } else if (const int64_t* i = std::get_if<int64_t>(&d)) {
        hp.window_pattern[l] = *i != 0;
      } else {
        return make_error(ErrorCode::InvalidFormat,
                          fmt::format("{}: key '{}' element {} is neither a bool nor an integer", where, k, l));
      }
    }
    return {};
  }
  HEARTH_TRY(const auto period_value, file.find_uint(k));
  const uint64_t period = period_value.value_or(default_period);
  for (int64_t l = 0; l < hp.n_layer; ++l) {
    hp.window_pattern[static_cast<size_t>(l)] = period == 0 || static_cast<uint64_t>(l) % period < period - 1;
  }
  return {};
}

Status bind_moe_ffn(WeightBinder& b, const HParams& hp, int64_t il, LayerWeights& lw) {
  const int64_t E = hp.n_embd, F = hp.n_ff_exp, X = hp.n_expert;
  HEARTH_TRY(lw.ffn_norm, b.require(layer_tensor(il, "ffn_norm.weight"), {E}));
  HEARTH_TRY(lw.ffn_gate_inp, b.require(layer_tensor(il, "ffn_gate_inp.weight"), {E, X}));
  HEARTH_TRY(lw.ffn_gate_exps, b.require(layer_tensor(il, "ffn_gate_exps.weight"), {E, F, X}));
  HEARTH_TRY(lw.ffn_up_exps, b.require(layer_tensor(il, "ffn_up_exps.weight"), {E, F, X}));
  HEARTH_TRY(lw.ffn_down_exps, b.require(layer_tensor(il, "ffn_down_exps.weight"), {F, E, X}));
  return {};
}

Tensor* kept_rows(LayerContext& ctx, Tensor* x) {
  if (!ctx.kept) return x;
  return ctx.kept->rows ? ctx.graph.get_rows(x, ctx.kept->rows) : ctx.graph.last_rows(x, ctx.kept->last);
}

Tensor* attention_block(LayerContext& ctx, Tensor* x) { return attention_block(ctx, x, &ctx.hp.rope); }

Tensor* attention_block(LayerContext& ctx, Tensor* x, const backend::RopeParams* rope) {
  auto& g = ctx.graph;
  const HParams& hp = ctx.hp;
  const LayerWeights& w = ctx.w;
  const KeptRows* kept = ctx.kept;
  const int64_t qw = hp.n_head * hp.head_dim, kw = hp.n_head_kv * hp.head_dim;
  Tensor *q, *k, *v;
  if (w.wqkv) {
    Tensor* qkv = g.matmul(w.wqkv, x);
    q = kept_rows(ctx, g.slice_cols(qkv, 0, qw));
    k = g.slice_cols(qkv, qw, kw);
    v = g.slice_cols(qkv, qw + kw, kw);
  } else {
    q = g.matmul(w.wq, kept_rows(ctx, x), w.bq);
    k = g.matmul(w.wk, x, w.bk);
    v = g.matmul(w.wv, x, w.bv);
  }
  // Keys are stored for every token; the queries are the kept rows'.
  Tensor* q_positions = kept ? kept->positions : ctx.positions;
  if (w.q_norm) q = g.rms_norm(q, w.q_norm, hp.rms_eps, hp.head_dim);
  if (w.k_norm) k = g.rms_norm(k, w.k_norm, hp.rms_eps, hp.head_dim);
  if (rope) {
    q = g.rope(q, q_positions, *rope);
    k = g.rope(k, ctx.positions, *rope);
  }
  g.kv_store(k, v, ctx.positions, ctx.kv);
  backend::AttentionParams ap;
  ap.n_head = static_cast<int32_t>(hp.n_head);
  ap.n_head_kv = static_cast<int32_t>(hp.n_head_kv);
  ap.head_dim = static_cast<int32_t>(hp.head_dim);
  ap.scale = hp.attn_scale;
  ap.softcap = hp.attn_softcap;
  ap.window = hp.window_of_layer(ctx.layer);
  Tensor* limits = kept ? kept->positions : (ctx.key_limits ? ctx.key_limits : ctx.positions);
  Tensor* attn = g.attention(q, limits, kept ? kept->kv : ctx.kv, ap, w.attn_sinks);
  return g.matmul(w.wo, attn, w.bo);
}

Tensor* ffn_swiglu(LayerContext& ctx, Tensor* x) {
  auto& g = ctx.graph;
  const LayerWeights& w = ctx.w;
  Tensor *gate, *up;
  if (w.w_gate_up) {
    Tensor* gu = g.matmul(w.w_gate_up, x);
    gate = g.slice_cols(gu, 0, ctx.hp.n_ff);
    up = g.slice_cols(gu, ctx.hp.n_ff, ctx.hp.n_ff);
  } else {
    gate = g.matmul(w.w_gate, x);
    up = g.matmul(w.w_up, x);
  }
  return g.matmul(w.w_down, g.swiglu(gate, up));
}

Tensor* ffn_geglu(LayerContext& ctx, Tensor* x) {
  auto& g = ctx.graph;
  return g.matmul(ctx.w.w_down, g.geglu(g.matmul(ctx.w.w_gate, x), g.matmul(ctx.w.w_up, x)));
}

Tensor* ffn_moe_swiglu(LayerContext& ctx, Tensor* x) {
  auto& g = ctx.graph;
  const LayerWeights& w = ctx.w;
  // Top-k of the logits is the top-k of their softmax (it is monotonic).
  Tensor* logits = g.matmul(w.ffn_gate_inp, x);
  Tensor* ids = g.top_k(logits, ctx.hp.n_expert_used);
  Tensor* weights = g.moe_gate(logits, ids, ctx.hp.moe);
  Tensor* gate = g.matmul_id(w.ffn_gate_exps, x, ids);
  Tensor* up = g.matmul_id(w.ffn_up_exps, x, ids);
  Tensor* down = g.matmul_id(w.ffn_down_exps, g.swiglu(gate, up), ids);
  return g.moe_sum(down, weights);
}

Tensor* prenorm_layer(LayerContext& ctx, Tensor* x) {
  auto& g = ctx.graph;
  // The kept rows first, so the add follows the output projection (a backend
  // may fuse the two: graph_fusion.h).
  Tensor* residual = kept_rows(ctx, x);
  Tensor* h = g.add(residual, attention_block(ctx, g.rms_norm(x, ctx.w.attn_norm, ctx.hp.rms_eps)));
  return g.add(h, ffn_swiglu(ctx, g.rms_norm(h, ctx.w.ffn_norm, ctx.hp.rms_eps)));
}

backend::Tensor* gemma_layer(LayerContext& ctx, backend::Tensor* x) {
  auto& g = ctx.graph;
  const float eps = ctx.hp.rms_eps;
  backend::Tensor* residual = kept_rows(ctx, x);
  backend::Tensor* attn = attention_block(ctx, g.rms_norm(x, ctx.w.attn_norm, eps), ctx.hp.rope_of_layer(ctx.layer));
  backend::Tensor* h = g.add(residual, g.rms_norm(attn, ctx.w.post_attn_norm, eps));
  backend::Tensor* ffn = ffn_geglu(ctx, g.rms_norm(h, ctx.w.ffn_norm, eps));
  return g.add(h, g.rms_norm(ffn, ctx.w.post_ffn_norm, eps));
}

}  // namespace hearth::model
