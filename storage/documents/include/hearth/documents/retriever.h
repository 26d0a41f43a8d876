// Hybrid retrieval over document libraries: BM25 (SQLite FTS5) and vector
// similarity, each ranking its own candidates, fused by reciprocal rank
// (score = sum over the lists of 1 / (rrf_k + rank)). Rank fusion needs no
// calibration between a BM25 score and a cosine, and a passage both lists like
// rises above one only a single list likes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/documents/vector_index.h"
#include "hearth/storage/libraries.h"

namespace hearth::documents {

enum class RetrievalMode { Hybrid, Keyword, Vector };

struct RetrievalOptions {
  RetrievalMode mode = RetrievalMode::Hybrid;
  std::int64_t top_k = 5;
  std::int64_t candidates = 50;  // taken from each list before fusion
  double rrf_k = 60;             // damping of reciprocal rank fusion
};

struct RetrievedChunk {
  storage::ChunkId chunk;
  double score = 0;              // the fused score (higher is better)
  std::int64_t keyword_rank = 0;  // 1-based place in the BM25 list, 0: absent
  std::int64_t vector_rank = 0;   // 1-based place in the vector list, 0: absent
  float similarity = 0;           // cosine, when in the vector list
};

// Embeds a query (with the model's query instruction, if it has one).
using QueryEmbedder = std::function<Result<std::vector<float>>(std::string_view query)>;

class Retriever {
 public:
  // `embed` may be empty: then only keyword retrieval is possible.
  Retriever(storage::Libraries& libraries, QueryEmbedder embed) : libraries_(libraries), embed_(std::move(embed)) {}

  Result<std::vector<RetrievedChunk>> search(std::span<const storage::LibraryId> libraries, std::string_view query,
                                             const RetrievalOptions& options = {});

  // Drops the in-memory vectors (they are reloaded when a library's updated_ms moves).
  void forget() { indexes_.clear(); }

 private:
  Result<const VectorIndex*> index_for(storage::LibraryId library);

  struct CachedIndex {
    std::int64_t updated_ms = 0;
    VectorIndex index{0};
  };
  storage::Libraries& libraries_;
  QueryEmbedder embed_;
  std::map<storage::LibraryId, CachedIndex> indexes_;
};

// Reciprocal rank fusion of ranked lists of chunk ids (best first). Exposed for tests.
std::vector<RetrievedChunk> fuse_ranks(std::span<const storage::ChunkId> keyword,
                                       std::span<const VectorHit> vector, double rrf_k);

}  // namespace hearth::documents
