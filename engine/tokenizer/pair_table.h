// An open-addressing hash table from a pair of symbol ids to a merge
// (rank, merged symbol). BPE looks pairs up in its innermost loop, so this
// avoids std::unordered_map's node chasing and per-lookup hashing of strings.
#pragma once

#include <cstdint>
#include <vector>

namespace hearth::tokenizer::detail {

struct Merge {
  int32_t rank = -1;
  int32_t merged = -1;  // symbol id of the concatenation
};

class PairTable {
 public:
  void reserve(size_t count) {
    size_t capacity = 16;
    while (capacity < count * 2) capacity <<= 1;
    keys_.assign(capacity, kEmpty);
    values_.assign(capacity, Merge{});
    mask_ = capacity - 1;
  }

  // Keeps the first insertion of a pair, like the reference's map emplace.
  void insert(int32_t left, int32_t right, Merge merge) {
    if (keys_.empty() || (size_ + 1) * 2 > keys_.size()) grow();
    const uint64_t key = make_key(left, right);
    for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      if (keys_[i] == kEmpty) {
        keys_[i] = key;
        values_[i] = merge;
        ++size_;
        return;
      }
      if (keys_[i] == key) return;
    }
  }

  const Merge* find(int32_t left, int32_t right) const {
    if (keys_.empty()) return nullptr;
    const uint64_t key = make_key(left, right);
    for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
      if (keys_[i] == key) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }

  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t make_key(int32_t left, int32_t right) {
    return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
  }
  static size_t hash(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<size_t>(key);
  }
  void grow() {
    std::vector<uint64_t> old_keys = std::move(keys_);
    std::vector<Merge> old_values = std::move(values_);
    reserve(old_keys.empty() ? 16 : old_keys.size());
    size_ = 0;
    for (size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] != kEmpty) {
        insert(int32_t(uint32_t(old_keys[i] >> 32)), int32_t(uint32_t(old_keys[i])), old_values[i]);
      }
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<Merge> values_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace hearth::tokenizer::detail
