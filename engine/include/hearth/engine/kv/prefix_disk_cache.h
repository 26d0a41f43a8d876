// Persistent prefix cache: KV data of token prefixes (system prompts, whole
// conversations) saved to disk so a restarted engine, or a switch back to a
// model, skips their prefill. Files are versioned and checksummed and keyed by
// the model file's identity; a stale or corrupt file is deleted, never trusted.
// The folder is bounded by a disk budget with least-recently-used cleanup.
#pragma once

#include <hearth/core/log.h>
#include <hearth/core/result.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hearth::kv {

// Who the cached KV data belongs to. Two files with the same identity hold the
// same weights (same size, modification time and sampled content).
struct ModelIdentity {
  uint64_t content_hash = 0;  // xxh3 over size, mtime and the first and last MiB
  uint64_t file_size = 0;
  bool operator==(const ModelIdentity&) const = default;
  std::string to_hex() const;
};

Result<ModelIdentity> identify_model_file(const std::filesystem::path& model_path);

// The shape the KV payload was produced with; a cache entry is only used by a
// cache of exactly the same layout.
struct KvLayout {
  DType kv_type = DType::F16;
  int64_t n_layer = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  bool operator==(const KvLayout&) const = default;
};

// Hash of a token sequence, seeded so that prefix keys of different models
// never collide by construction.
uint64_t hash_tokens(std::span<const int32_t> tokens, uint64_t seed);

struct CachedPrefix {
  std::vector<int32_t> tokens;   // the exact prefix the payload covers
  std::vector<uint8_t> payload;  // KV data as the cache serialised it
};

class PrefixDiskCache {
 public:
  PrefixDiskCache(std::filesystem::path folder, uint64_t disk_budget_bytes, Logger logger = {});

  // Saves `payload` for exactly `tokens`, atomically (temporary file, fsync,
  // rename), then trims the folder to the budget. An entry larger than the
  // whole budget is refused with LimitExceeded.
  Status save(const ModelIdentity& model, const KvLayout& layout, std::span<const int32_t> tokens,
              std::span<const uint8_t> payload);

  // The longest saved prefix of `tokens` for this model and layout, or
  // nullopt. Files that fail validation are deleted (and logged), never used.
  Result<std::optional<CachedPrefix>> load_longest_prefix(const ModelIdentity& model, const KvLayout& layout,
                                                          std::span<const int32_t> tokens);

  // Deletes least-recently-used entries until the folder fits the budget.
  Status enforce_budget();
  // Deletes every entry of `model` (e.g. when the user deletes the model).
  Status forget_model(const ModelIdentity& model);

  uint64_t bytes_on_disk() const;
  size_t entry_count() const;
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
  uint64_t budget_bytes_;
  Logger logger_;
};

}  // namespace hearth::kv
