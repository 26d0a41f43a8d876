// Small repositories: system-prompt presets, the local model registry, the on-disk
// prefix-cache index and context events.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"
#include "hearth/storage/types.h"

namespace hearth::storage {

class PromptPresets {
 public:
  explicit PromptPresets(Database& db) : db_(db) {}

  // Names are unique; a duplicate is InvalidArgument.
  Result<PresetId> create(std::string_view name, std::string_view content);
  Status update(PresetId id, std::string_view name, std::string_view content);
  Result<PromptPreset> get(PresetId id);
  Result<std::vector<PromptPreset>> list();  // by name
  Status remove(PresetId id);

 private:
  Database& db_;
};

struct NewModelEntry {
  std::string path;
  std::int64_t size_bytes = 0;
  std::string sha256;
  std::string source_url;
  std::string quant;
};

class ModelRegistry {
 public:
  explicit ModelRegistry(Database& db) : db_(db) {}

  // Adds the model, or updates size/hash/source/quant of the entry with that path.
  Result<ModelId> upsert(const NewModelEntry& model);
  Result<ModelEntry> get(ModelId id);
  Result<std::optional<ModelEntry>> find_by_path(std::string_view path);
  // Most recently used first, never-used last (by path).
  Result<std::vector<ModelEntry>> list();
  Status mark_used(ModelId id);
  Status remove(ModelId id);

 private:
  Database& db_;
};

struct NewPrefixCacheEntry {
  std::string model_sha256;
  std::string prefix_hash;
  std::int64_t token_count = 0;
  std::string file_path;
  std::int64_t size_bytes = 0;
};

class PrefixCacheIndex {
 public:
  explicit PrefixCacheIndex(Database& db) : db_(db) {}

  // Adds the entry or replaces the one with the same (model_sha256, prefix_hash).
  Result<PrefixCacheId> upsert(const NewPrefixCacheEntry& entry);
  Result<std::optional<PrefixCacheEntry>> find(std::string_view model_sha256, std::string_view prefix_hash);
  Status touch(PrefixCacheId id);
  // Least recently used first: the eviction order for the disk budget.
  Result<std::vector<PrefixCacheEntry>> least_recently_used(std::int64_t limit);
  Result<std::int64_t> total_size_bytes();
  Status remove(PrefixCacheId id);

 private:
  Database& db_;
};

struct NewContextEvent {
  ContextEventKind kind = ContextEventKind::Dropped;
  MessageId first_message;
  MessageId last_message;
  std::int64_t tokens_removed = 0;
  std::string summary;
};

class ContextEvents {
 public:
  explicit ContextEvents(Database& db) : db_(db) {}

  Result<ContextEventId> add(ConversationId conversation, const NewContextEvent& event);
  // In the order they happened.
  Result<std::vector<ContextEvent>> list(ConversationId conversation);

 private:
  Database& db_;
};

}  // namespace hearth::storage
