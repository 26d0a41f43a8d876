// Shared by the scheduler tests on every backend: logits of fixture tokens
// through Model::forward_sequences for several staggered sequences fed in
// uneven chunks over scattered pool blocks, and the single-sequence pass
// over the same tokens.
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/kv/kv_pool.h>
#include <hearth/engine/model/model.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace hearth::runtime::testing {

// Logits of every position of each sequence of `texts` (sequence s is
// texts[s]; they start at different passes), through forward_sequences.
// Sequences of different tokens catch a token that reads another
// sequence's keys; sequences of the same tokens would not.
inline std::vector<std::vector<float>> batched_logits(const model::Model& m, backend::Backend& be,
                                                      const std::vector<std::vector<int32_t>>& texts) {
  const auto n_seqs = static_cast<int>(texts.size());
  int32_t longest = 0, blocks = 1;
  for (const auto& t : texts) {
    longest = std::max(longest, static_cast<int32_t>(t.size()));
    blocks += (static_cast<int32_t>(t.size()) + 31) / 32;
  }
  const model::HParams& hp = m.hparams();
  auto pool = kv::KvPool::create(be, kv::KvPoolConfig{hp.n_layer, hp.n_head_kv, hp.head_dim, DType::F16, blocks,
                                                      longest});
  EXPECT_TRUE(pool.ok()) << pool.error().message;
  if (!pool.ok()) return {};
  // Waste one block first so no table is the identity.
  EXPECT_TRUE((*pool)->allocate().ok());
  const int32_t tb = (*pool)->table_blocks();
  std::vector<int32_t> tables(static_cast<size_t>(n_seqs * tb), 0);
  std::vector<int32_t> done(static_cast<size_t>(n_seqs), 0), held(static_cast<size_t>(n_seqs), 0);
  std::vector<std::vector<float>> out(static_cast<size_t>(n_seqs));
  const int32_t chunks[] = {7, 1, 13, 3, 1, 9};
  for (int pass = 0; pass < 200; ++pass) {
    std::vector<int32_t> ids, pos, seq, rows;
    for (int s = 0; s < n_seqs; ++s) {
      if (pass < 2 * s) continue;  // staggered start
      const std::vector<int32_t>& tokens = texts[static_cast<size_t>(s)];
      const auto n = static_cast<int32_t>(tokens.size());
      int32_t& d = done[static_cast<size_t>(s)];
      const int32_t k = std::min(chunks[(pass + s) % 6], n - d);
      for (int32_t i = 0; i < k; ++i) {
        while (held[static_cast<size_t>(s)] * 32 <= d + i) {
          auto b = (*pool)->allocate();
          EXPECT_TRUE(b.ok());
          tables[static_cast<size_t>(s * tb + held[static_cast<size_t>(s)]++)] = *b;
        }
        ids.push_back(tokens[static_cast<size_t>(d + i)]);
        pos.push_back(d + i);
        seq.push_back(s);
        rows.push_back(static_cast<int32_t>(ids.size() - 1));
      }
      d += k;
    }
    if (ids.empty()) {
      if (pass >= 2 * n_seqs) break;  // every sequence has started and finished
      continue;
    }
    std::vector<float> logits;
    auto st = m.forward_sequences(be, **pool, model::SequenceBatch{ids, pos, seq, tables, rows}, logits);
    EXPECT_TRUE(st.ok()) << st.error().message;
    if (!st.ok()) break;
    for (size_t r = 0; r < rows.size(); ++r) {
      auto& o = out[static_cast<size_t>(seq[r])];
      o.insert(o.end(), logits.begin() + static_cast<std::ptrdiff_t>(r * static_cast<size_t>(hp.n_vocab)),
               logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * static_cast<size_t>(hp.n_vocab)));
    }
  }
  return out;
}

// `n_seqs` sequences of the same tokens.
inline std::vector<std::vector<float>> batched_logits(const model::Model& m, backend::Backend& be,
                                                      const std::vector<int32_t>& tokens, int n_seqs) {
  return batched_logits(m, be, std::vector<std::vector<int32_t>>(static_cast<size_t>(n_seqs), tokens));
}

// Logits of every position in one single-sequence pass.
inline std::vector<float> solo_logits(const model::Model& m, backend::Backend& be, const std::vector<int32_t>& tokens) {
  auto cache = kv::KvCache::create(be, m.kv_config(static_cast<int64_t>(tokens.size()), DType::F16));
  EXPECT_TRUE(cache.ok()) << cache.error().message;
  if (!cache.ok()) return {};
  std::vector<int32_t> pos(tokens.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<float> logits;
  EXPECT_TRUE(m.forward(be, **cache, model::Batch{tokens, pos}, model::LogitsRows::All, logits).ok());
  return logits;
}

}  // namespace hearth::runtime::testing
