// Query tiles of the CPU attention kernels. A tile's queries share each K/V
// block converted to floats, so in a pass over several sequences
// (KvView::token_seq) a tile never crosses from one sequence to the next:
// its queries all read the same block table.
#pragma once

#include <hearth/engine/backend/graph.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hearth::backend::cpu {

struct QueryTile {
  int64_t t0 = 0;  // first query token
  int64_t nt = 0;  // query tokens
};

// Tiles of at most `tile` consecutive tokens. One sequence: tiles start at
// multiples of `tile`. Several: each sequence's run of tokens is cut apart.
inline std::vector<QueryTile> query_tiles(const KvView& kv, int64_t n_tok, int64_t tile) {
  std::vector<QueryTile> tiles;
  int64_t t = 0;
  while (t < n_tok) {
    int64_t end = std::min(n_tok, t + tile);
    if (kv.token_seq) {
      for (int64_t u = t + 1; u < end; ++u) {
        if (kv.token_seq[u] != kv.token_seq[t]) {
          end = u;
          break;
        }
      }
    }
    tiles.push_back(QueryTile{t, end - t});
    t = end;
  }
  return tiles;
}

}  // namespace hearth::backend::cpu
