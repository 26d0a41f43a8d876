// The exact response cache in front of an engine: a deterministic request
// (temperature 0, the request asks for the cache) whose model file, turns,
// sampling settings, reasoning switch and length limit match an earlier one gets
// that earlier reply without running the model. The prompt the engine renders
// is a function of exactly these inputs (the template and tokenizer come with
// the model file), so equal keys mean equal prompt tokens.
//
// The model's identity is its path, size and modification time: a changed file
// never matches its old entries, and a load drops them. Entries live in their
// own SQLite file (the engine thread's connection, apart from the conversation
// database's single writer), capped in bytes with least-recently-used eviction.
#pragma once

#include <hearth/storage/database.h>
#include <hearth/storage/response_cache.h>

#include <QString>

#include <filesystem>
#include <memory>
#include <optional>

#include "engine_service/chat_engine.h"

namespace hearth::app {

class CachingChatEngine final : public ChatEngine {
 public:
  static constexpr std::int64_t kDefaultCapacityBytes = 64ll << 20;

  CachingChatEngine(std::unique_ptr<ChatEngine> inner, std::filesystem::path cache_file,
                    std::int64_t capacity_bytes = kDefaultCapacityBytes, const Logger& logger = {});

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn& progress,
                             const CancelledFn& cancelled) override;
  void unload() override;
  Result<ui::GenerationStats> generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                       const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                       const CancelledFn& cancelled) override;
  ui::LocalApiStatus configure_local_api(const ui::LocalApiRequest& request) override {
    return inner_->configure_local_api(request);
  }
  ui::LocalApiStatus local_api_status() const override { return inner_->local_api_status(); }
  bool has_background_work() const override { return inner_->has_background_work(); }
  Status background_step(const ContextEventFn& on_event) override { return inner_->background_step(on_event); }

  // The key of a request on the loaded model (exposed for tests).
  std::string key_of(const ui::GenerationRequest& request) const;

 private:
  storage::ResponseCache* cache();

  std::unique_ptr<ChatEngine> inner_;
  std::filesystem::path cache_file_;
  std::int64_t capacity_bytes_;
  Logger logger_;
  std::optional<storage::Database> db_;
  std::unique_ptr<storage::ResponseCache> cache_;
  bool unavailable_ = false;   // the cache file could not be opened: run without it
  std::string model_identity_;  // empty: no model loaded
};

}  // namespace hearth::app
