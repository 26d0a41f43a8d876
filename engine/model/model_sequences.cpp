// The forward pass over several sequences at once (continuous batching):
// the same layers as Model::build_forward, with the K/V views of a shared
// kv::KvPool that carry one block table per sequence, and the logits of
// chosen rows only (each sequence's last token in the batch).
#include <fmt/format.h>

#include "arch.h"
#include "graph_output.h"
#include "hearth/engine/model/model.h"

namespace hearth::model {

backend::Tensor* Model::build_sequences(backend::Graph& g, const SequenceBatch& batch, const kv::KvPool& pool) const {
  const auto n = static_cast<int64_t>(batch.tokens.size());
  const auto n_out = static_cast<int64_t>(batch.logit_tokens.size());
  Tensor* ids = g.input(DType::I32, {n, 1, 1, 1}, const_cast<int32_t*>(batch.tokens.data()));
  Tensor* pos = g.input(DType::I32, {n, 1, 1, 1}, const_cast<int32_t*>(batch.positions.data()));
  Tensor* rows = g.input(DType::I32, {n_out, 1, 1, 1}, const_cast<int32_t*>(batch.logit_tokens.data()));
  Tensor* x = g.get_rows(weights_.tok_embd, ids);
  if (hparams_.embd_scale > 0.0f) x = g.scale(x, hparams_.embd_scale);
  // Only the rows that are sampled go through the output matrix (the
  // vocabulary-wide product is the largest of a step), and past its K/V
  // store the last layer computes only those rows (KeptRows).
  const bool keep = n_out < n;
  KeptRows kept;
  if (keep) {
    std::vector<int32_t> kept_positions, kept_seqs;
    for (const int32_t r : batch.logit_tokens) {
      kept_positions.push_back(batch.positions[static_cast<size_t>(r)]);
      kept_seqs.push_back(batch.token_seq[static_cast<size_t>(r)]);
    }
    kept.rows = rows;
    kept.positions = g.input(DType::I32, {n_out, 1, 1, 1}, const_cast<int32_t*>(g.hold(std::move(kept_positions))));
    kept.kv = pool.layer_view(hparams_.n_layer - 1, g.hold(std::move(kept_seqs)), batch.tables.data());
  }
  for (int64_t il = 0; il < hparams_.n_layer; ++il) {
    g.set_layer(static_cast<int32_t>(il));
    LayerContext ctx{g,   hparams_, weights_.layers[static_cast<size_t>(il)],
                     pos, pool.layer_view(il, batch.token_seq.data(), batch.tables.data()), il, pos};
    if (keep && il == hparams_.n_layer - 1) ctx.kept = &kept;
    x = arch_->build_layer(ctx, x);
  }
  g.set_layer(-1);
  if (!keep) x = g.get_rows(x, rows);
  x = g.rms_norm(x, weights_.output_norm, hparams_.rms_eps);
  Tensor* logits = g.matmul(weights_.output, x);
  if (hparams_.final_softcap > 0.0f) logits = g.softcap(logits, hparams_.final_softcap);
  g.output = logits;
  return logits;
}

Status Model::forward_sequences(backend::Backend& backend, const kv::KvPool& pool, const SequenceBatch& batch,
                                std::vector<float>& logits) const {
  if (weight_memory_ == WeightMemory::Mapped) HEARTH_CHECK(file_.check_unchanged());
  HEARTH_CHECK(require_lm_head());
  const size_t n = batch.tokens.size();
  if (n == 0 || batch.positions.size() != n || batch.token_seq.size() != n || batch.logit_tokens.empty()) {
    return make_error(ErrorCode::InvalidArgument,
                      "forward_sequences: empty batch, no logit rows, or positions/sequences of the wrong length");
  }
  const int64_t tb = pool.table_blocks();
  if (batch.tables.empty() || static_cast<int64_t>(batch.tables.size()) % tb != 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("forward_sequences: {} table entries are not whole tables of {}", batch.tables.size(), tb));
  }
  const int64_t n_seq = static_cast<int64_t>(batch.tables.size()) / tb;
  const int64_t max_pos = tb * kv::kBlockTokens;
  for (size_t i = 0; i < n; ++i) {
    if (batch.tokens[i] < 0 || batch.tokens[i] >= hparams_.n_vocab) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("token id {} is outside the vocabulary (0..{})", batch.tokens[i], hparams_.n_vocab - 1));
    }
    const int32_t s = batch.token_seq[i];
    const int32_t p = batch.positions[i];
    if (s < 0 || s >= n_seq) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("forward_sequences: token {} names sequence {} of {}", i, s, n_seq));
    }
    if (p < 0 || p >= max_pos) {
      return make_error(ErrorCode::LimitExceeded,
                        fmt::format("position {} is outside a sequence's {} positions", p, max_pos));
    }
    // Every block the token's attention reads (0..p) must be a pool block.
    for (int64_t b = 0; b <= p / kv::kBlockTokens; ++b) {
      const int32_t block = batch.tables[static_cast<size_t>(s * tb + b)];
      if (block < 0 || block >= pool.total_blocks()) {
        return make_error(ErrorCode::InvalidArgument,
                          fmt::format("forward_sequences: sequence {} maps block {} to {}, outside the pool of {}", s,
                                      b, block, pool.total_blocks()));
      }
    }
  }
  for (const int32_t r : batch.logit_tokens) {
    if (r < 0 || static_cast<size_t>(r) >= n) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("forward_sequences: logit row {} of {} tokens", r, n));
    }
  }
  backend::Graph graph;
  build_sequences(graph, batch, pool);
  HEARTH_CHECK(compute_into(backend, graph, logits));
  if (weight_memory_ == WeightMemory::Mapped) HEARTH_CHECK(file_.check_unchanged());
  return {};
}

}  // namespace hearth::model
