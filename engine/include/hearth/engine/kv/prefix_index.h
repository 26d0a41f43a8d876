// In-memory prefix cache: K/V rows of whole blocks of kBlockTokens tokens,
// keyed by a hash chained over the tokens of every block up to and including
// this one, seeded by the model identity. A new request restores the longest
// cached prefix into its cache and only prefills the rest (same system prompt
// in a new conversation, a regenerated reply, an edited last message).
// Entries are copies, so none is referenced once restore() returns; the least
// recently used are dropped to stay within the byte budget.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/kv/kv_cache.h>

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>
#include <vector>

namespace hearth::kv {

struct PrefixIndexStats {
  uint64_t bytes = 0;       // payload bytes held
  size_t blocks = 0;
  uint64_t hit_blocks = 0;  // blocks restored since creation
  uint64_t evicted_blocks = 0;
};

class PrefixIndex {
 public:
  // `model_seed` (e.g. ModelIdentity::content_hash) keeps the keys of different
  // models apart; `budget_bytes` bounds the payload held.
  PrefixIndex(uint64_t model_seed, uint64_t budget_bytes) : seed_(model_seed), budget_(budget_bytes) {}

  // Stores the whole blocks of `tokens` (positions 0.. of `cache`) not held
  // yet, then trims to the budget.
  Status store(const KvCache& cache, std::span<const int32_t> tokens);

  // Restores the longest cached block-aligned prefix of `tokens`, at most
  // `max_tokens` long, into positions 0.. of `cache`; returns its length.
  Result<int64_t> restore(KvCache& cache, std::span<const int32_t> tokens, int64_t max_tokens);

  PrefixIndexStats stats() const { return stats_; }
  void clear();

 private:
  struct Entry {
    std::vector<int32_t> tokens;  // this block's tokens, checked on lookup against hash collisions
    uint64_t parent = 0;          // key of the previous block (the seed for block 0)
    std::vector<uint8_t> payload;
    std::list<uint64_t>::iterator lru;
  };
  void touch(Entry& e, uint64_t key);
  void trim();

  uint64_t seed_;
  uint64_t budget_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::list<uint64_t> lru_;  // front: most recently used
  PrefixIndexStats stats_;
};

}  // namespace hearth::kv
