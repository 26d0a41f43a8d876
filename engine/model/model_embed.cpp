// The forward pass of embedding models: the family's layers over whole
// texts, ending at the hidden states (no language-model head). Encoders
// (BERT) add learned position and token-type embeddings and normalize the
// sum first; every family gets per-text attention from the KV views and
// the key limits of the batch (bidirectional for encoders).
#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "arch.h"
#include "hearth/engine/model/model.h"

namespace hearth::model {

const char* to_string(Pooling pooling) {
  switch (pooling) {
    case Pooling::Unspecified: return "unspecified";
    case Pooling::None: return "none";
    case Pooling::Mean: return "mean";
    case Pooling::Cls: return "cls";
    case Pooling::Last: return "last";
  }
  return "?";
}

Status read_embedding_hparams(const gguf::GgufFile& file, HParams& hp) {
  const std::string pooling_key = hp.architecture + ".pooling_type";
  // Written signed or unsigned by different converters; -1 means unspecified.
  if (const gguf::Value* v = file.find(pooling_key)) {
    int64_t type = -2;
    if (const uint64_t* u = std::get_if<uint64_t>(&v->data)) type = *u > 3 ? -2 : static_cast<int64_t>(*u);
    if (const int64_t* i = std::get_if<int64_t>(&v->data)) type = *i;
    switch (type) {
      case -1: hp.pooling = Pooling::Unspecified; break;
      case 0: hp.pooling = Pooling::None; break;
      case 1: hp.pooling = Pooling::Mean; break;
      case 2: hp.pooling = Pooling::Cls; break;
      case 3: hp.pooling = Pooling::Last; break;
      default:
        return make_error(ErrorCode::Unsupported,
                          fmt::format("{}: key '{}' is not a pooling Hearth knows (0 none, 1 mean, 2 cls, 3 last)",
                                      file.path().string(), pooling_key));
    }
  }
  HEARTH_TRY(const auto causal, file.find_bool(hp.architecture + ".attention.causal"));
  if (causal) hp.causal = *causal;
  return {};
}

Status Model::require_lm_head() const {
  if (has_lm_head()) return {};
  return make_error(ErrorCode::Unsupported,
                    fmt::format("{}: '{}' is an embedding encoder without a language-model head; it cannot generate "
                                "text (use it for embeddings)",
                                file_.path().string(), hparams_.architecture));
}

backend::Tensor* Model::build_hidden(backend::Graph& g, const EmbedBatch& batch,
                                     const std::function<backend::KvView(int64_t)>& layer_view,
                                     std::span<const int32_t> type_ids) const {
  const auto n = static_cast<int64_t>(batch.tokens.size());
  Tensor* ids = g.input(DType::I32, {n, 1, 1, 1}, const_cast<int32_t*>(batch.tokens.data()));
  Tensor* pos = g.input(DType::I32, {n, 1, 1, 1}, const_cast<int32_t*>(batch.positions.data()));
  Tensor* limits = g.input(DType::I32, {n, 1, 1, 1}, const_cast<int32_t*>(batch.key_limits.data()));
  Tensor* x = g.get_rows(weights_.tok_embd, ids);
  if (hparams_.embd_scale > 0.0f) x = g.scale(x, hparams_.embd_scale);
  if (weights_.tok_types) {
    Tensor* types = g.input(DType::I32, {n, 1, 1, 1}, const_cast<int32_t*>(type_ids.data()));
    x = g.add(x, g.get_rows(weights_.tok_types, types));
  }
  if (weights_.pos_embd) x = g.add(x, g.get_rows(weights_.pos_embd, pos));
  if (weights_.tok_embd_norm) x = g.layer_norm(x, weights_.tok_embd_norm, weights_.tok_embd_norm_b, hparams_.norm_eps);
  for (int64_t il = 0; il < hparams_.n_layer; ++il) {
    g.set_layer(static_cast<int32_t>(il));
    LayerContext ctx{g, hparams_, weights_.layers[static_cast<size_t>(il)], pos, layer_view(il), il, limits};
    x = arch_->build_layer(ctx, x);
  }
  g.set_layer(-1);
  if (weights_.output_norm) x = g.rms_norm(x, weights_.output_norm, hparams_.rms_eps);
  g.output = x;
  return x;
}

Status Model::check_embed_batch(const EmbedBatch& batch, int64_t max_positions) const {
  const size_t n = batch.tokens.size();
  if (n == 0 || batch.positions.size() != n || batch.key_limits.size() != n ||
      (!batch.token_seq.empty() && batch.token_seq.size() != n)) {
    return make_error(ErrorCode::InvalidArgument,
                      "hidden_states: empty batch, or positions, key limits or sequences of the wrong length");
  }
  // Learned positions have one row per position the model was trained on.
  const int64_t limit = weights_.pos_embd ? std::min(max_positions, weights_.pos_embd->ne[1]) : max_positions;
  for (size_t i = 0; i < n; ++i) {
    if (batch.tokens[i] < 0 || batch.tokens[i] >= hparams_.n_vocab) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("token id {} is outside the vocabulary (0..{})", batch.tokens[i], hparams_.n_vocab - 1));
    }
    const int32_t p = batch.positions[i], k = batch.key_limits[i];
    if (p < 0 || p >= limit || k < 0 || k >= limit) {
      return make_error(ErrorCode::LimitExceeded,
                        fmt::format("hidden_states: position {} (keys up to {}) is outside the {} positions available",
                                    p, k, limit));
    }
  }
  return {};
}

Status Model::run_hidden(backend::Backend& backend, const EmbedBatch& batch,
                         const std::function<backend::KvView(int64_t)>& layer_view, std::vector<float>& hidden) const {
  if (weight_memory_ == WeightMemory::Mapped) HEARTH_CHECK(file_.check_unchanged());
  backend::Graph graph;
  // Every token is of token type 0 (one text per sequence).
  const std::vector<int32_t> type_ids(batch.tokens.size(), 0);
  backend::Tensor* out = build_hidden(graph, batch, layer_view, type_ids);
  HEARTH_CHECK(backend.compute(graph));
  if (weight_memory_ == WeightMemory::Mapped) HEARTH_CHECK(file_.check_unchanged());
  hidden.assign(out->as<const float>(), out->as<const float>() + out->elements());
  return {};
}

Status Model::hidden_states(backend::Backend& backend, const kv::KvPool& pool, const EmbedBatch& batch,
                            std::vector<float>& hidden) const {
  const int64_t tb = pool.table_blocks();
  HEARTH_CHECK(check_embed_batch(batch, tb * kv::kBlockTokens));
  if (batch.token_seq.empty() || batch.tables.empty() || static_cast<int64_t>(batch.tables.size()) % tb != 0) {
    return make_error(ErrorCode::InvalidArgument, "hidden_states: a pool pass needs token sequences and whole tables");
  }
  const int64_t n_seq = static_cast<int64_t>(batch.tables.size()) / tb;
  for (size_t i = 0; i < batch.tokens.size(); ++i) {
    const int32_t s = batch.token_seq[i];
    if (s < 0 || s >= n_seq) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("hidden_states: token {} names text {} of {}", i, s, n_seq));
    }
    // Every block the token writes or reads must be a pool block.
    const int32_t last = std::max(batch.positions[i], batch.key_limits[i]);
    for (int64_t b = 0; b <= last / kv::kBlockTokens; ++b) {
      const int32_t block = batch.tables[static_cast<size_t>(s * tb + b)];
      if (block < 0 || block >= pool.total_blocks()) {
        return make_error(ErrorCode::InvalidArgument,
                          fmt::format("hidden_states: text {} maps block {} to {}, outside the pool of {}", s, b, block,
                                      pool.total_blocks()));
      }
    }
  }
  return run_hidden(
      backend, batch,
      [&](int64_t il) { return pool.layer_view(il, batch.token_seq.data(), batch.tables.data()); }, hidden);
}

Status Model::hidden_states(backend::Backend& backend, const kv::KvCache& cache, const EmbedBatch& batch,
                            std::vector<float>& hidden) const {
  HEARTH_CHECK(check_embed_batch(batch, cache.capacity()));
  if (!batch.token_seq.empty() || cache.has_rings()) {
    return make_error(ErrorCode::InvalidArgument,
                      "hidden_states: a cache pass holds one text in a cache without sliding-window rings");
  }
  return run_hidden(backend, batch, [&](int64_t il) { return cache.layer_view(il); }, hidden);
}

}  // namespace hearth::model
