// The local API's semantic cache: a question close enough in meaning to one
// answered before gets the stored reply. Entries are grouped by the model file
// (its identity: path, size, time) and a context key the caller derives (a hash
// of the system prompt, the earlier turns and the request's settings), so a
// reply never crosses system prompts, conversations or models. Within a group
// the nearest stored question by cosine similarity of the (L2-normalised)
// embeddings answers when it reaches the threshold. Entries beyond the size cap
// are evicted least recently used first.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"

namespace hearth::storage {

struct SemanticHit {
  std::string question;  // the stored question that matched
  std::string reply;
  std::int64_t token_count = 0;
  double similarity = 0;  // cosine, in [-1, 1]
};

struct SemanticEntry {
  std::string_view model_identity;
  std::string_view context_key;
  std::string_view question;
  std::span<const float> embedding;  // [dims], L2-normalised
  std::string_view reply;
  std::int64_t token_count = 0;
};

class SemanticCache {
 public:
  SemanticCache(Database& db, std::int64_t capacity_bytes) : db_(db), capacity_bytes_(capacity_bytes) {}

  // The nearest stored question of this model and context whose similarity is
  // at least `min_similarity`, marked used now; nullopt when none is. Stored
  // vectors of another length (another embedding model) never match.
  Result<std::optional<SemanticHit>> nearest(std::string_view model_identity, std::string_view context_key,
                                             std::span<const float> embedding, double min_similarity);
  // Stores an entry, then evicts the least recently used ones until the cache
  // fits its capacity. An entry larger than the whole capacity is not stored.
  Status put(const SemanticEntry& entry);
  // Removes the entries of every identity starting with `prefix` except `keep`
  // (the earlier versions of a model file).
  Status drop_other_versions(std::string_view prefix, std::string_view keep);
  Result<std::int64_t> entries();

 private:
  Database& db_;
  std::int64_t capacity_bytes_;
};

}  // namespace hearth::storage
