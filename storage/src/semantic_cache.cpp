#include "hearth/storage/semantic_cache.h"

#include <cstring>
#include <vector>

#include "database_impl.h"

namespace hearth::storage {

Result<std::optional<SemanticHit>> SemanticCache::nearest(std::string_view model_identity,
                                                          std::string_view context_key,
                                                          std::span<const float> embedding, double min_similarity) {
  DatabaseImpl& impl = db_.impl();
  std::optional<SemanticHit> best;
  std::int64_t best_id = -1;
  {
    HEARTH_TRY(auto stmt, impl.prepare("SELECT id, question, embedding, reply, token_count FROM semantic_cache "
                                       "WHERE model_identity = ?1 AND context_sha256 = ?2"));
    stmt.bind(1, model_identity).bind(2, context_key);
    std::vector<float> stored;
    for (;;) {
      HEARTH_TRY(bool row, stmt.step());
      if (!row) break;
      const std::string_view blob = stmt.blob(2);
      if (blob.size() != embedding.size() * sizeof(float)) continue;
      stored.resize(embedding.size());
      std::memcpy(stored.data(), blob.data(), blob.size());
      double dot = 0;
      for (size_t i = 0; i < stored.size(); ++i) dot += static_cast<double>(stored[i]) * embedding[i];
      if (dot < min_similarity || (best && dot <= best->similarity)) continue;
      best = SemanticHit{stmt.text(1), stmt.text(3), stmt.int64(4), dot};
      best_id = stmt.int64(0);
    }
  }
  if (best && impl.options.access == Access::ReadWrite) {
    HEARTH_TRY(auto touch, impl.prepare("UPDATE semantic_cache SET last_used_ms = ?2 WHERE id = ?1"));
    touch.bind(1, best_id).bind(2, impl.now());
    HEARTH_CHECK(touch.run());
  }
  return best;
}

Status SemanticCache::put(const SemanticEntry& e) {
  if (e.embedding.empty()) return make_error(ErrorCode::InvalidArgument, "semantic cache: an empty embedding");
  constexpr std::int64_t kRowOverhead = 96;
  const auto bytes = static_cast<std::int64_t>(e.model_identity.size() + e.context_key.size() + e.question.size() +
                                               e.reply.size() + e.embedding.size_bytes()) +
                     kRowOverhead;
  if (bytes > capacity_bytes_) return {};
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    {
      HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO semantic_cache (model_identity, context_sha256, question, "
                                         "embedding, reply, token_count, size_bytes, created_ms, last_used_ms) "
                                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)"));
      stmt.bind(1, e.model_identity).bind(2, e.context_key).bind(3, e.question);
      stmt.bind_blob(4, e.embedding.data(), e.embedding.size_bytes());
      stmt.bind(5, e.reply).bind(6, e.token_count).bind(7, bytes).bind(8, impl.now());
      HEARTH_CHECK(stmt.run());
    }
    const std::int64_t newest = impl.last_insert_id();
    for (;;) {
      HEARTH_TRY(auto total, impl.prepare("SELECT coalesce(sum(size_bytes), 0) FROM semantic_cache"));
      HEARTH_TRY(bool row, total.step());
      if (!row || total.int64(0) <= capacity_bytes_) break;
      HEARTH_TRY(auto drop, impl.prepare("DELETE FROM semantic_cache WHERE id = (SELECT id FROM semantic_cache "
                                         "WHERE id <> ?1 ORDER BY last_used_ms, id LIMIT 1)"));
      drop.bind(1, newest);
      HEARTH_CHECK(drop.run());
      if (impl.changes() == 0) break;
    }
    return Status{};
  });
}

Status SemanticCache::drop_other_versions(std::string_view prefix, std::string_view keep) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("DELETE FROM semantic_cache WHERE substr(model_identity, 1, length(?1)) = ?1 "
                                           "AND model_identity <> ?2"));
  stmt.bind(1, prefix).bind(2, keep);
  return stmt.run();
}

Result<std::int64_t> SemanticCache::entries() {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT count(*) FROM semantic_cache"));
  HEARTH_TRY(bool row, stmt.step());
  (void)row;
  return stmt.int64(0);
}

}  // namespace hearth::storage
