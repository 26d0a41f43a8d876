// RoPE's cos/sin pairs of one graph's positions, computed once and shared by
// every rope node that rotates the same positions with the same parameters.
// A transformer ropes Q and K in each of its layers, all with the graph's
// one position input, and the cos/sin pairs (a powf, a cosf and a sinf per
// pair) cost far more than the rotation itself: on Qwen2.5-0.5B they were
// most of op_rope's time, which was 2.6% of a 256-token prompt step and
// 1.3-1.6% of an eight-stream decode step, the pairs recomputed 48 times per
// position. Tables are keyed by the positions' address: positions are graph
// inputs, which no node writes.
#pragma once

#include <hearth/engine/backend/graph.h>

#include <cstdint>
#include <span>
#include <vector>

#include "thread_pool.h"

namespace hearth::backend::cpu {

class RopeTables {
 public:
  // Forgets every table: a new graph's positions may sit where the last
  // one's did with other values.
  void clear() { tables_.clear(); }

  // Token t's pairs: cos at [t * n_dims, t * n_dims + n_dims / 2), sin after
  // them. Computed on first use for (params, positions), with the same
  // rope_cos_sin the op used per token, so every value is unchanged.
  std::span<const float> get(const RopeParams& p, const int32_t* positions, int64_t n_tok, ThreadPool& pool);

 private:
  struct Table {
    RopeParams params;
    const int32_t* positions;
    int64_t n_tok;
    std::vector<float> pairs;
  };
  std::vector<Table> tables_;  // a few per graph (one per distinct rope)
};

}  // namespace hearth::backend::cpu
