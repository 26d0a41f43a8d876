#include "hearth/storage/response_cache.h"

#include "database_impl.h"

namespace hearth::storage {
namespace {

// Bytes an entry costs: its texts and key, plus a fixed allowance for the row.
std::int64_t entry_bytes(std::string_view key, std::string_view identity, const CachedReply& reply) {
  constexpr std::int64_t kRowOverhead = 64;
  return static_cast<std::int64_t>(key.size() + identity.size() + reply.reply.size() + reply.reasoning.size()) +
         kRowOverhead;
}

}  // namespace

Result<std::optional<CachedReply>> ResponseCache::get(std::string_view key) {
  DatabaseImpl& impl = db_.impl();
  std::optional<CachedReply> found;
  {
    HEARTH_TRY(auto stmt, impl.prepare("SELECT reply, reasoning, token_count FROM response_cache WHERE key_sha256 = ?1"));
    stmt.bind(1, key);
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return found;
    found = CachedReply{stmt.text(0), stmt.text(1), stmt.int64(2)};
  }
  if (impl.options.access == Access::ReadWrite) {
    HEARTH_TRY(auto touch, impl.prepare("UPDATE response_cache SET last_used_ms = ?2 WHERE key_sha256 = ?1"));
    touch.bind(1, key).bind(2, impl.now());
    HEARTH_CHECK(touch.run());
  }
  return found;
}

Status ResponseCache::put(std::string_view key, std::string_view model_identity, const CachedReply& reply) {
  if (key.empty()) return make_error(ErrorCode::InvalidArgument, "response cache: empty key");
  const std::int64_t bytes = entry_bytes(key, model_identity, reply);
  if (bytes > capacity_bytes_) return {};
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    {
      HEARTH_TRY(auto stmt, impl.prepare(
                                "INSERT OR REPLACE INTO response_cache (key_sha256, model_identity, reply, reasoning, "
                                "token_count, size_bytes, created_ms, last_used_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)"));
      stmt.bind(1, key).bind(2, model_identity).bind(3, reply.reply).bind(4, reply.reasoning);
      stmt.bind(5, reply.token_count).bind(6, bytes).bind(7, impl.now());
      HEARTH_CHECK(stmt.run());
    }
    // Oldest use first; the entry just written is the newest and fits on its own.
    HEARTH_TRY(std::int64_t total, size_bytes());
    while (total > capacity_bytes_) {
      HEARTH_TRY(auto oldest, impl.prepare("SELECT key_sha256, size_bytes FROM response_cache "
                                           "WHERE key_sha256 <> ?1 ORDER BY last_used_ms, rowid LIMIT 1"));
      oldest.bind(1, key);
      HEARTH_TRY(bool row, oldest.step());
      if (!row) break;
      const std::string victim = oldest.text(0);
      total -= oldest.int64(1);
      HEARTH_TRY(auto drop, impl.prepare("DELETE FROM response_cache WHERE key_sha256 = ?1"));
      drop.bind(1, victim);
      HEARTH_CHECK(drop.run());
    }
    return Status{};
  });
}

Status ResponseCache::drop_model(std::string_view model_identity) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("DELETE FROM response_cache WHERE model_identity = ?1"));
  stmt.bind(1, model_identity);
  return stmt.run();
}

Status ResponseCache::drop_other_versions(std::string_view prefix, std::string_view keep) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("DELETE FROM response_cache WHERE substr(model_identity, 1, length(?1)) = ?1 "
                                           "AND model_identity <> ?2"));
  stmt.bind(1, prefix).bind(2, keep);
  return stmt.run();
}

Status ResponseCache::clear() {
  HEARTH_TRY(auto stmt, db_.impl().prepare("DELETE FROM response_cache"));
  return stmt.run();
}

Result<std::int64_t> ResponseCache::size_bytes() {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT coalesce(sum(size_bytes), 0) FROM response_cache"));
  HEARTH_TRY(bool row, stmt.step());
  (void)row;
  return stmt.int64(0);
}

Result<std::int64_t> ResponseCache::entries() {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT count(*) FROM response_cache"));
  HEARTH_TRY(bool row, stmt.step());
  (void)row;
  return stmt.int64(0);
}

}  // namespace hearth::storage
