#include "hearth/storage/catalog.h"

#include "database_impl.h"

namespace hearth::storage {
namespace {

Status expect_changed(DatabaseImpl& impl, const std::string& what) {
  if (impl.changes() == 0) return make_error(ErrorCode::NotFound, what + " does not exist");
  return {};
}

// A UNIQUE violation is the caller's mistake (a duplicate name), not an I/O problem.
Error duplicate_or(Error error, const std::string& what) {
  if (error.code == ErrorCode::InvalidArgument) error.message = what + " already exists (" + error.message + ")";
  return error;
}

PromptPreset read_preset(const Statement& s) {
  return PromptPreset{s.id<PresetId>(0), s.text(1), s.text(2), s.int64(3), s.int64(4)};
}

ModelEntry read_model(const Statement& s) {
  return ModelEntry{s.id<ModelId>(0), s.text(1), s.int64(2), s.text(3), s.text(4), s.text(5), s.int64(6),
                    s.optional_int64(7)};
}

PrefixCacheEntry read_prefix(const Statement& s) {
  return PrefixCacheEntry{s.id<PrefixCacheId>(0), s.text(1), s.text(2), s.int64(3),
                          s.text(4),              s.int64(5), s.int64(6), s.int64(7)};
}

}  // namespace

// ---- PromptPresets ----

Result<PresetId> PromptPresets::create(std::string_view name, std::string_view content) {
  return in_transaction(db_, Durability::Normal, [&]() -> Result<PresetId> {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO prompt_presets (name, content, created_ms, updated_ms) "
                                       "VALUES (?1, ?2, ?3, ?3)"));
    stmt.bind(1, name).bind(2, content).bind(3, impl.now());
    if (auto ran = stmt.run(); !ran.ok()) return duplicate_or(ran.take_error(), "preset '" + std::string(name) + "'");
    return PresetId{impl.last_insert_id()};
  });
}

Status PromptPresets::update(PresetId id, std::string_view name, std::string_view content) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE prompt_presets SET name = ?2, content = ?3, updated_ms = ?4 "
                                       "WHERE id = ?1"));
    stmt.bind(1, id).bind(2, name).bind(3, content).bind(4, impl.now());
    if (auto ran = stmt.run(); !ran.ok()) return duplicate_or(ran.take_error(), "preset '" + std::string(name) + "'");
    return expect_changed(impl, describe("preset", id));
  });
}

Result<PromptPreset> PromptPresets::get(PresetId id) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT id, name, content, created_ms, updated_ms FROM prompt_presets "
                                           "WHERE id = ?1"));
  stmt.bind(1, id);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::NotFound, describe("preset", id) + " does not exist");
  return read_preset(stmt);
}

Result<std::vector<PromptPreset>> PromptPresets::list() {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT id, name, content, created_ms, updated_ms FROM prompt_presets "
                                           "ORDER BY name, id"));
  std::vector<PromptPreset> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    out.push_back(read_preset(stmt));
  }
}

Status PromptPresets::remove(PresetId id) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    HEARTH_TRY(auto stmt, db_.impl().prepare("DELETE FROM prompt_presets WHERE id = ?1"));
    stmt.bind(1, id);
    HEARTH_CHECK(stmt.run());
    return expect_changed(db_.impl(), describe("preset", id));
  });
}

// ---- ModelRegistry ----

#define HEARTH_MODEL_COLUMNS "id, path, size_bytes, sha256, source_url, quant, added_ms, last_used_ms"

Result<ModelId> ModelRegistry::upsert(const NewModelEntry& m) {
  return in_transaction(db_, Durability::Normal, [&]() -> Result<ModelId> {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO models (path, size_bytes, sha256, source_url, quant, added_ms) "
                                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
                                       "ON CONFLICT (path) DO UPDATE SET size_bytes = excluded.size_bytes, "
                                       "sha256 = excluded.sha256, source_url = excluded.source_url, "
                                       "quant = excluded.quant RETURNING id"));
    stmt.bind(1, m.path).bind(2, m.size_bytes).bind(3, m.sha256).bind(4, m.source_url).bind(5, m.quant);
    stmt.bind(6, impl.now());
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return make_error(ErrorCode::Internal, "model upsert returned no id for '" + m.path + "'");
    const ModelId id = stmt.id<ModelId>(0);
    HEARTH_CHECK(stmt.run());  // finish the statement so the write completes
    return id;
  });
}

Result<ModelEntry> ModelRegistry::get(ModelId id) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT " HEARTH_MODEL_COLUMNS " FROM models WHERE id = ?1"));
  stmt.bind(1, id);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::NotFound, describe("model", id) + " does not exist");
  return read_model(stmt);
}

Result<std::optional<ModelEntry>> ModelRegistry::find_by_path(std::string_view path) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT " HEARTH_MODEL_COLUMNS " FROM models WHERE path = ?1"));
  stmt.bind(1, path);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return std::optional<ModelEntry>{};
  return std::optional<ModelEntry>{read_model(stmt)};
}

Result<std::vector<ModelEntry>> ModelRegistry::list() {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT " HEARTH_MODEL_COLUMNS " FROM models "
                                           "ORDER BY last_used_ms IS NULL, last_used_ms DESC, path"));
  std::vector<ModelEntry> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    out.push_back(read_model(stmt));
  }
}

Status ModelRegistry::mark_used(ModelId id) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    HEARTH_TRY(auto stmt, db_.impl().prepare("UPDATE models SET last_used_ms = ?2 WHERE id = ?1"));
    stmt.bind(1, id).bind(2, db_.impl().now());
    HEARTH_CHECK(stmt.run());
    return expect_changed(db_.impl(), describe("model", id));
  });
}

Status ModelRegistry::remove(ModelId id) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    HEARTH_TRY(auto stmt, db_.impl().prepare("DELETE FROM models WHERE id = ?1"));
    stmt.bind(1, id);
    HEARTH_CHECK(stmt.run());
    return expect_changed(db_.impl(), describe("model", id));
  });
}

// ---- PrefixCacheIndex ----

#define HEARTH_PREFIX_COLUMNS \
  "id, model_sha256, prefix_hash, token_count, file_path, size_bytes, created_ms, last_used_ms"

Result<PrefixCacheId> PrefixCacheIndex::upsert(const NewPrefixCacheEntry& e) {
  return in_transaction(db_, Durability::Normal, [&]() -> Result<PrefixCacheId> {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO prefix_cache (model_sha256, prefix_hash, token_count, file_path, "
                                       "size_bytes, created_ms, last_used_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) "
                                       "ON CONFLICT (model_sha256, prefix_hash) DO UPDATE SET "
                                       "token_count = excluded.token_count, file_path = excluded.file_path, "
                                       "size_bytes = excluded.size_bytes, created_ms = excluded.created_ms, "
                                       "last_used_ms = excluded.last_used_ms RETURNING id"));
    stmt.bind(1, e.model_sha256).bind(2, e.prefix_hash).bind(3, e.token_count).bind(4, e.file_path);
    stmt.bind(5, e.size_bytes).bind(6, impl.now());
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return make_error(ErrorCode::Internal, "prefix cache upsert returned no id");
    const PrefixCacheId id = stmt.id<PrefixCacheId>(0);
    HEARTH_CHECK(stmt.run());
    return id;
  });
}

Result<std::optional<PrefixCacheEntry>> PrefixCacheIndex::find(std::string_view model_sha256,
                                                               std::string_view prefix_hash) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT " HEARTH_PREFIX_COLUMNS " FROM prefix_cache "
                                           "WHERE model_sha256 = ?1 AND prefix_hash = ?2"));
  stmt.bind(1, model_sha256).bind(2, prefix_hash);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return std::optional<PrefixCacheEntry>{};
  return std::optional<PrefixCacheEntry>{read_prefix(stmt)};
}

Status PrefixCacheIndex::touch(PrefixCacheId id) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    HEARTH_TRY(auto stmt, db_.impl().prepare("UPDATE prefix_cache SET last_used_ms = ?2 WHERE id = ?1"));
    stmt.bind(1, id).bind(2, db_.impl().now());
    HEARTH_CHECK(stmt.run());
    return expect_changed(db_.impl(), describe("prefix cache entry", id));
  });
}

Result<std::vector<PrefixCacheEntry>> PrefixCacheIndex::least_recently_used(std::int64_t limit) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT " HEARTH_PREFIX_COLUMNS " FROM prefix_cache "
                                           "ORDER BY last_used_ms, id LIMIT ?1"));
  stmt.bind(1, limit);
  std::vector<PrefixCacheEntry> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    out.push_back(read_prefix(stmt));
  }
}

Result<std::int64_t> PrefixCacheIndex::total_size_bytes() {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT coalesce(sum(size_bytes), 0) FROM prefix_cache"));
  HEARTH_TRY(bool row, stmt.step());
  (void)row;
  return stmt.int64(0);
}

Status PrefixCacheIndex::remove(PrefixCacheId id) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    HEARTH_TRY(auto stmt, db_.impl().prepare("DELETE FROM prefix_cache WHERE id = ?1"));
    stmt.bind(1, id);
    HEARTH_CHECK(stmt.run());
    return expect_changed(db_.impl(), describe("prefix cache entry", id));
  });
}

// ---- ContextEvents ----

Result<ContextEventId> ContextEvents::add(ConversationId conversation, const NewContextEvent& e) {
  return in_transaction(db_, Durability::Normal, [&]() -> Result<ContextEventId> {
    DatabaseImpl& impl = db_.impl();
    // The messages must belong to this conversation; the foreign keys alone would
    // accept any message.
    HEARTH_TRY(auto check, impl.prepare("SELECT count(*) FROM messages WHERE conversation_id = ?1 AND id IN (?2, ?3)"));
    check.bind(1, conversation).bind(2, e.first_message).bind(3, e.last_message);
    HEARTH_TRY(bool row, check.step());
    (void)row;
    const std::int64_t expected = (e.first_message.valid() ? 1 : 0) +
                                  (e.last_message.valid() && e.last_message != e.first_message ? 1 : 0);
    if (check.int64(0) != expected) {
      return make_error(ErrorCode::InvalidArgument, "context event messages " + std::to_string(e.first_message.value()) +
                                                        ".." + std::to_string(e.last_message.value()) +
                                                        " are not in " + describe("conversation", conversation));
    }
    HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO context_events (conversation_id, kind, created_ms, "
                                       "first_message_id, last_message_id, tokens_removed, summary) "
                                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
    stmt.bind(1, conversation).bind(2, to_string(e.kind)).bind(3, impl.now()).bind(4, e.first_message);
    stmt.bind(5, e.last_message).bind(6, e.tokens_removed).bind(7, e.summary);
    HEARTH_CHECK(stmt.run());
    return ContextEventId{impl.last_insert_id()};
  });
}

Result<std::vector<ContextEvent>> ContextEvents::list(ConversationId conversation) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT id, conversation_id, kind, created_ms, first_message_id, "
                                           "last_message_id, tokens_removed, summary FROM context_events "
                                           "WHERE conversation_id = ?1 ORDER BY id"));
  stmt.bind(1, conversation);
  std::vector<ContextEvent> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    HEARTH_TRY(ContextEventKind kind, parse_context_event_kind(stmt.text(2)));
    out.push_back(ContextEvent{stmt.id<ContextEventId>(0), stmt.id<ConversationId>(1), kind, stmt.int64(3),
                               stmt.id<MessageId>(4), stmt.id<MessageId>(5), stmt.int64(6), stmt.text(7)});
  }
}

}  // namespace hearth::storage
