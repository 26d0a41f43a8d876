#include "hearth/documents/retriever.h"

#include <algorithm>
#include <unordered_map>

namespace hearth::documents {

std::vector<RetrievedChunk> fuse_ranks(std::span<const storage::ChunkId> keyword, std::span<const VectorHit> vector,
                                       double rrf_k) {
  std::unordered_map<storage::ChunkId, RetrievedChunk> by_chunk;
  for (std::size_t i = 0; i < keyword.size(); ++i) {
    RetrievedChunk& r = by_chunk[keyword[i]];
    r.chunk = keyword[i];
    r.keyword_rank = static_cast<std::int64_t>(i + 1);
    r.score += 1.0 / (rrf_k + static_cast<double>(i + 1));
  }
  for (std::size_t i = 0; i < vector.size(); ++i) {
    RetrievedChunk& r = by_chunk[vector[i].chunk];
    r.chunk = vector[i].chunk;
    r.vector_rank = static_cast<std::int64_t>(i + 1);
    r.similarity = vector[i].similarity;
    r.score += 1.0 / (rrf_k + static_cast<double>(i + 1));
  }
  std::vector<RetrievedChunk> out;
  out.reserve(by_chunk.size());
  for (auto& [id, r] : by_chunk) out.push_back(r);
  // Equal scores: the better single rank first, then the older chunk, so the
  // order never depends on the hash map's.
  std::sort(out.begin(), out.end(), [](const RetrievedChunk& a, const RetrievedChunk& b) {
    if (a.score != b.score) return a.score > b.score;
    auto best = [](const RetrievedChunk& r) {
      std::int64_t k = r.keyword_rank > 0 ? r.keyword_rank : INT64_MAX;
      std::int64_t v = r.vector_rank > 0 ? r.vector_rank : INT64_MAX;
      return std::min(k, v);
    };
    if (best(a) != best(b)) return best(a) < best(b);
    return a.chunk < b.chunk;
  });
  return out;
}

Result<const VectorIndex*> Retriever::index_for(storage::LibraryId library) {
  HEARTH_TRY(storage::Library info, libraries_.get(library));
  auto it = indexes_.find(library);
  if (it != indexes_.end() && it->second.updated_ms == info.updated_ms) return &it->second.index;
  HEARTH_TRY(VectorIndex index, VectorIndex::load(libraries_, library));
  CachedIndex& cached = indexes_[library];
  cached.updated_ms = info.updated_ms;
  cached.index = std::move(index);
  return &cached.index;
}

Result<std::vector<RetrievedChunk>> Retriever::search(std::span<const storage::LibraryId> libraries,
                                                      std::string_view query, const RetrievalOptions& options) {
  if (options.top_k <= 0 || options.candidates <= 0) {
    return make_error(ErrorCode::InvalidArgument, "retrieval: top_k and candidates must be positive");
  }
  const std::int64_t candidates = std::max(options.candidates, options.top_k);
  std::vector<storage::ChunkId> keyword;
  if (options.mode != RetrievalMode::Vector) {
    HEARTH_TRY(auto hits, libraries_.keyword_search(libraries, query, candidates));
    for (const auto& h : hits) keyword.push_back(h.chunk);
  }
  std::vector<VectorHit> vector;
  if (options.mode != RetrievalMode::Keyword) {
    if (!embed_) {
      return make_error(ErrorCode::Unsupported, "vector retrieval needs an embedding model; none is loaded");
    }
    HEARTH_TRY(std::vector<float> q, embed_(query));
    for (storage::LibraryId library : libraries) {
      HEARTH_TRY(const VectorIndex* index, index_for(library));
      if (index->size() == 0) continue;
      HEARTH_TRY(auto hits, index->search(q, candidates));
      vector.insert(vector.end(), hits.begin(), hits.end());
    }
    std::sort(vector.begin(), vector.end(), [](const VectorHit& a, const VectorHit& b) {
      return a.similarity != b.similarity ? a.similarity > b.similarity : a.chunk < b.chunk;
    });
    if (static_cast<std::int64_t>(vector.size()) > candidates) vector.resize(static_cast<std::size_t>(candidates));
  }
  auto fused = fuse_ranks(keyword, vector, options.rrf_k);
  if (static_cast<std::int64_t>(fused.size()) > options.top_k) fused.resize(static_cast<std::size_t>(options.top_k));
  return fused;
}

}  // namespace hearth::documents
