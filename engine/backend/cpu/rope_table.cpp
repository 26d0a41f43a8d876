#include "rope_table.h"

#include "ops.h"

namespace hearth::backend::cpu {
namespace {

bool same_params(const RopeParams& a, const RopeParams& b) {
  return a.mode == b.mode && a.n_dims == b.n_dims && a.head_dim == b.head_dim && a.freq_base == b.freq_base &&
         a.freq_scale == b.freq_scale && a.ext_factor == b.ext_factor && a.attn_factor == b.attn_factor &&
         a.beta_fast == b.beta_fast && a.beta_slow == b.beta_slow && a.n_ctx_orig == b.n_ctx_orig &&
         a.freq_factors == b.freq_factors;
}

}  // namespace

std::span<const float> RopeTables::get(const RopeParams& p, const int32_t* positions, int64_t n_tok,
                                       ThreadPool& pool) {
  for (const Table& t : tables_) {
    if (t.positions == positions && t.n_tok == n_tok && same_params(t.params, p)) return t.pairs;
  }
  Table t{p, positions, n_tok, std::vector<float>(static_cast<size_t>(n_tok * p.n_dims))};
  float* pairs = t.pairs.data();
  const int64_t half = p.n_dims / 2;
  pool.parallel_for(n_tok, 16, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      float* c = pairs + i * p.n_dims;
      rope_cos_sin(p, positions[i], c, c + half);
    }
  });
  tables_.push_back(std::move(t));
  return tables_.back().pairs;
}

}  // namespace hearth::backend::cpu
