#include "engine_service/caching_chat_engine.h"

#include <hearth/documents/indexer.h>

#include <QElapsedTimer>

#include <chrono>

namespace hearth::app {
namespace {

// Separates the path from the file's size and time in an identity: a byte no
// path holds.
constexpr char kIdentitySeparator = '\x1f';

std::string identity_of(const QString& path) {
  const std::filesystem::path p(path.toStdString());
  std::error_code ec;
  const auto size = std::filesystem::file_size(p, ec);
  const auto time = std::filesystem::last_write_time(p, ec);
  if (ec) return {};
  return p.string() + kIdentitySeparator + std::to_string(size) + ":" +
         std::to_string(time.time_since_epoch().count());
}

// Length-prefixed fields, so no two different requests serialize the same way.
void field(std::string& out, std::string_view value) {
  out += std::to_string(value.size());
  out += ':';
  out += value;
}

bool deterministic(const ui::GenerationRequest& request) { return request.sampling.temperature <= 0.0; }

// A reply that ended on its own (end of text, a stop string, the length limit) is
// what the model says to this request; a stopped, cut or overflowing one is not.
bool ended_on_its_own(const QString& stop_reason) {
  return stop_reason == QLatin1String("end_of_generation") || stop_reason == QLatin1String("stop_string") ||
         stop_reason == QLatin1String("max_tokens");
}

}  // namespace

CachingChatEngine::CachingChatEngine(std::unique_ptr<ChatEngine> inner, std::filesystem::path cache_file,
                                     std::int64_t capacity_bytes, const Logger& logger)
    : inner_(std::move(inner)), cache_file_(std::move(cache_file)), capacity_bytes_(capacity_bytes), logger_(logger) {}

storage::ResponseCache* CachingChatEngine::cache() {
  if (cache_) return cache_.get();
  if (unavailable_ || cache_file_.empty()) return nullptr;
  auto db = storage::Database::open(cache_file_);
  if (!db.ok()) {
    // Not fatal: replies are generated as without a cache, and the log says why.
    unavailable_ = true;
    logger_.warn("response cache unavailable: {}", db.error().message);
    return nullptr;
  }
  db_.emplace(std::move(db).value());
  cache_ = std::make_unique<storage::ResponseCache>(*db_, capacity_bytes_);
  return cache_.get();
}

Result<ui::ModelInfo> CachingChatEngine::load(const ui::LoadRequest& request, const ProgressFn& progress,
                                              const CancelledFn& cancelled) {
  model_identity_.clear();
  HEARTH_TRY(ui::ModelInfo info, inner_->load(request, progress, cancelled));
  model_identity_ = identity_of(request.model_path);
  if (!model_identity_.empty()) {
    if (storage::ResponseCache* c = cache()) {
      // Replies of an earlier version of this file can never be asked for again.
      const std::string prefix = request.model_path.toStdString() + kIdentitySeparator;
      if (auto dropped = c->drop_other_versions(prefix, model_identity_); !dropped.ok()) {
        logger_.warn("response cache: {}", dropped.error().message);
      }
    }
  }
  return info;
}

void CachingChatEngine::unload() {
  model_identity_.clear();
  inner_->unload();
}

std::string CachingChatEngine::key_of(const ui::GenerationRequest& request) const {
  std::string s;
  field(s, model_identity_);
  for (const ui::ChatTurn& turn : request.turns) {
    field(s, std::to_string(static_cast<int>(turn.role)));
    field(s, turn.text.toStdString());
    field(s, turn.reasoning.toStdString());
  }
  const ui::Sampling& p = request.sampling;
  field(s, std::to_string(p.temperature) + "/" + std::to_string(p.top_k) + "/" + std::to_string(p.top_p) + "/" +
               std::to_string(p.min_p) + "/" + std::to_string(p.repeat_penalty) + "/" + std::to_string(p.seed));
  field(s, request.overflow_policy.toStdString());
  field(s, request.reasoning.toStdString());
  field(s, std::to_string(request.max_new_tokens));
  return documents::sha256_hex(s);
}

Result<ui::GenerationStats> CachingChatEngine::generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                                        const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                                        const CancelledFn& cancelled) {
  storage::ResponseCache* c = nullptr;
  if (request.use_response_cache && deterministic(request) && !model_identity_.empty()) c = cache();
  if (c == nullptr) return inner_->generate(request, on_piece, on_reasoning, on_event, cancelled);

  QElapsedTimer clock;
  clock.start();
  const std::string key = key_of(request);
  auto hit = c->get(key);
  if (hit.ok() && hit->has_value()) {
    const storage::CachedReply& reply = **hit;
    if (!reply.reasoning.empty()) on_reasoning(reply.reasoning);
    on_piece(reply.reply);
    ui::GenerationStats stats;
    stats.ttft_ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
    stats.generated_tokens = static_cast<int>(reply.token_count);
    stats.stop_reason = QStringLiteral("end_of_generation");
    stats.from_cache = true;
    return stats;
  }
  if (!hit.ok()) logger_.warn("response cache: {}", hit.error().message);

  std::string text;
  std::string reasoning;
  auto stats = inner_->generate(
      request,
      [&](std::string_view piece) {
        text += piece;
        on_piece(piece);
      },
      [&](std::string_view piece) {
        reasoning += piece;
        on_reasoning(piece);
      },
      on_event, cancelled);
  if (stats.ok() && ended_on_its_own(stats->stop_reason)) {
    auto stored = c->put(key, model_identity_, storage::CachedReply{text, reasoning, stats->generated_tokens});
    if (!stored.ok()) logger_.warn("response cache: {}", stored.error().message);
  }
  return stats;
}

}  // namespace hearth::app
