#include "hearth/engine/kv/prefix_index.h"

#include <hearth/engine/kv/kv_rows.h>
#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/sizing.h>

#include <algorithm>

namespace hearth::kv {

void PrefixIndex::touch(Entry& e, uint64_t key) {
  lru_.erase(e.lru);
  lru_.push_front(key);
  e.lru = lru_.begin();
}

void PrefixIndex::trim() {
  while (stats_.bytes > budget_ && !lru_.empty()) {
    const uint64_t key = lru_.back();
    lru_.pop_back();
    auto it = entries_.find(key);
    stats_.bytes -= it->second.payload.size();
    entries_.erase(it);
    ++stats_.evicted_blocks;
  }
  stats_.blocks = entries_.size();
}

void PrefixIndex::clear() {
  entries_.clear();
  lru_.clear();
  stats_.bytes = 0;
  stats_.blocks = 0;
}

Status PrefixIndex::store(const KvCache& cache, std::span<const int32_t> tokens) {
  const int64_t n_blocks = std::min<int64_t>(static_cast<int64_t>(tokens.size()), cache.used()) / kBlockTokens;
  uint64_t key = seed_;
  for (int64_t b = 0; b < n_blocks; ++b) {
    const auto block = tokens.subspan(static_cast<size_t>(b * kBlockTokens), kBlockTokens);
    const uint64_t parent = key;
    key = hash_tokens(block, parent);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      touch(it->second, key);
      continue;
    }
    HEARTH_TRY(auto payload, read_positions(cache, b * kBlockTokens, (b + 1) * kBlockTokens));
    stats_.bytes += payload.size();
    lru_.push_front(key);
    entries_.emplace(key, Entry{{block.begin(), block.end()}, parent, std::move(payload), lru_.begin()});
  }
  trim();
  return {};
}

Result<int64_t> PrefixIndex::restore(KvCache& cache, std::span<const int32_t> tokens, int64_t max_tokens) {
  const int64_t limit = std::min<int64_t>({static_cast<int64_t>(tokens.size()), max_tokens, cache.capacity()});
  uint64_t key = seed_;
  int64_t b = 0;
  for (; (b + 1) * kBlockTokens <= limit; ++b) {
    const auto block = tokens.subspan(static_cast<size_t>(b * kBlockTokens), kBlockTokens);
    const uint64_t parent = key;
    key = hash_tokens(block, parent);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.parent != parent ||
        !std::equal(block.begin(), block.end(), it->second.tokens.begin(), it->second.tokens.end())) {
      break;
    }
    HEARTH_CHECK(write_positions(cache, b * kBlockTokens, it->second.payload));
    touch(it->second, key);
    ++stats_.hit_blocks;
  }
  return b * kBlockTokens;
}

}  // namespace hearth::kv
