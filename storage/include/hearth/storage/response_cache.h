// The exact response cache: a deterministic request (temperature 0, the same model
// file, the same rendered prompt tokens and settings) maps to the reply it gave.
// The caller derives the key (a hash of those inputs); entries of a model file that
// changed never match again because its identity is part of the key, and
// drop_model() reclaims their space at once. Entries beyond the size cap are evicted
// least recently used first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"

namespace hearth::storage {

struct CachedReply {
  std::string reply;
  std::string reasoning;
  std::int64_t token_count = 0;
};

class ResponseCache {
 public:
  ResponseCache(Database& db, std::int64_t capacity_bytes) : db_(db), capacity_bytes_(capacity_bytes) {}

  // The reply stored under `key`, marking it used now; nullopt on a miss.
  Result<std::optional<CachedReply>> get(std::string_view key);
  // Stores (or replaces) the reply under `key`, then evicts the least recently used
  // entries until the cache fits its capacity. A reply larger than the whole
  // capacity is not stored.
  Status put(std::string_view key, std::string_view model_identity, const CachedReply& reply);
  // Removes every entry of a model (its file changed or was deleted).
  Status drop_model(std::string_view model_identity);
  // Removes the entries of every identity that starts with `prefix` except
  // `keep`: the earlier versions of a model file, when identities are
  // "<path><separator><size>:<time>".
  Status drop_other_versions(std::string_view prefix, std::string_view keep);
  Status clear();
  Result<std::int64_t> size_bytes();
  Result<std::int64_t> entries();

 private:
  Database& db_;
  std::int64_t capacity_bytes_;
};

}  // namespace hearth::storage
