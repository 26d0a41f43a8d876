#include "migrations.h"

#include <string>

namespace hearth::storage {
namespace {

// Version 1: conversations, the message tree, presets, the model registry and the
// full-text index. FTS tables use external content (no second copy of the text) and
// are kept in sync by triggers.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE conversations (
  id             INTEGER PRIMARY KEY,
  title          TEXT    NOT NULL DEFAULT '',
  created_ms     INTEGER NOT NULL,
  updated_ms     INTEGER NOT NULL,
  model_file     TEXT    NOT NULL DEFAULT '',
  model_quant    TEXT    NOT NULL DEFAULT '',
  system_prompt  TEXT    NOT NULL DEFAULT '',
  settings_json  TEXT    NOT NULL DEFAULT '{}',
  pinned         INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  archived       INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  active_leaf_id INTEGER REFERENCES messages(id) ON DELETE SET NULL
);
CREATE INDEX conversations_by_listing ON conversations(archived, pinned DESC, updated_ms DESC, id DESC);
CREATE INDEX conversations_by_active_leaf ON conversations(active_leaf_id);

CREATE TABLE messages (
  id                INTEGER PRIMARY KEY,
  conversation_id   INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  parent_id         INTEGER REFERENCES messages(id),
  role              TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content           TEXT    NOT NULL DEFAULT '',
  created_ms        INTEGER NOT NULL,
  updated_ms        INTEGER NOT NULL,
  state             TEXT    NOT NULL CHECK (state IN ('complete', 'streaming', 'interrupted', 'error')),
  error_message     TEXT    NOT NULL DEFAULT '',
  token_count       INTEGER NOT NULL DEFAULT 0,
  ttft_ms           REAL,
  tokens_per_second REAL,
  backend           TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
CREATE INDEX messages_by_parent ON messages(parent_id, id);
CREATE INDEX messages_streaming ON messages(state) WHERE state = 'streaming';

CREATE TABLE prompt_presets (
  id         INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL UNIQUE,
  content    TEXT    NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);

CREATE TABLE models (
  id           INTEGER PRIMARY KEY,
  path         TEXT    NOT NULL UNIQUE,
  size_bytes   INTEGER NOT NULL DEFAULT 0,
  sha256       TEXT    NOT NULL DEFAULT '',
  source_url   TEXT    NOT NULL DEFAULT '',
  quant        TEXT    NOT NULL DEFAULT '',
  added_ms     INTEGER NOT NULL,
  last_used_ms INTEGER
);

CREATE VIRTUAL TABLE message_fts USING fts5(
  content, content='messages', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2', prefix='2 3');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO message_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO message_fts(message_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO message_fts(message_fts, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO message_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE VIRTUAL TABLE conversation_fts USING fts5(
  title, content='conversations', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2', prefix='2 3');
CREATE TRIGGER conversations_fts_insert AFTER INSERT ON conversations BEGIN
  INSERT INTO conversation_fts(rowid, title) VALUES (new.id, new.title);
END;
CREATE TRIGGER conversations_fts_delete AFTER DELETE ON conversations BEGIN
  INSERT INTO conversation_fts(conversation_fts, rowid, title) VALUES ('delete', old.id, old.title);
END;
CREATE TRIGGER conversations_fts_update AFTER UPDATE OF title ON conversations BEGIN
  INSERT INTO conversation_fts(conversation_fts, rowid, title) VALUES ('delete', old.id, old.title);
  INSERT INTO conversation_fts(rowid, title) VALUES (new.id, new.title);
END;
)sql";

// Version 2: context events (what the overflow policy dropped or summarized) and
// the index of KV-cache prefixes saved to disk.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE context_events (
  id               INTEGER PRIMARY KEY,
  conversation_id  INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  kind             TEXT    NOT NULL CHECK (kind IN ('dropped', 'summarized')),
  created_ms       INTEGER NOT NULL,
  first_message_id INTEGER REFERENCES messages(id) ON DELETE SET NULL,
  last_message_id  INTEGER REFERENCES messages(id) ON DELETE SET NULL,
  tokens_removed   INTEGER NOT NULL DEFAULT 0,
  summary          TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX context_events_by_conversation ON context_events(conversation_id, id);
CREATE INDEX context_events_by_first_message ON context_events(first_message_id);
CREATE INDEX context_events_by_last_message ON context_events(last_message_id);

CREATE TABLE prefix_cache (
  id           INTEGER PRIMARY KEY,
  model_sha256 TEXT    NOT NULL,
  prefix_hash  TEXT    NOT NULL,
  token_count  INTEGER NOT NULL,
  file_path    TEXT    NOT NULL,
  size_bytes   INTEGER NOT NULL,
  created_ms   INTEGER NOT NULL,
  last_used_ms INTEGER NOT NULL,
  UNIQUE (model_sha256, prefix_hash)
);
CREATE INDEX prefix_cache_by_use ON prefix_cache(last_used_ms, id);
)sql";

// Version 3: a reply's reasoning ("thinking") kept apart from its answer, and the
// conversation's reasoning switch (names as in ReasoningSetting). Reasoning has its own
// FTS table so the default search leaves it out and an opt-in search can reach it.
// Its update trigger fires only when the text changed: a streamed reply rewrites the
// row every flush, mostly while only the answer grows. The rebuild indexes the rows
// that exist (all with empty reasoning) so the external-content index matches them.
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
ALTER TABLE messages ADD COLUMN reasoning_ms REAL;
ALTER TABLE conversations ADD COLUMN reasoning TEXT NOT NULL DEFAULT 'default'
  CHECK (reasoning IN ('default', 'off', 'on', 'low', 'medium', 'high'));

CREATE VIRTUAL TABLE message_reasoning_fts USING fts5(
  reasoning, content='messages', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2', prefix='2 3');
INSERT INTO message_reasoning_fts(message_reasoning_fts) VALUES ('rebuild');
CREATE TRIGGER messages_reasoning_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO message_reasoning_fts(rowid, reasoning) VALUES (new.id, new.reasoning);
END;
CREATE TRIGGER messages_reasoning_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO message_reasoning_fts(message_reasoning_fts, rowid, reasoning) VALUES ('delete', old.id, old.reasoning);
END;
CREATE TRIGGER messages_reasoning_fts_update AFTER UPDATE OF reasoning ON messages
  WHEN old.reasoning IS NOT new.reasoning BEGIN
  INSERT INTO message_reasoning_fts(message_reasoning_fts, rowid, reasoning) VALUES ('delete', old.id, old.reasoning);
  INSERT INTO message_reasoning_fts(rowid, reasoning) VALUES (new.id, new.reasoning);
END;
)sql";

// Version 4: document libraries for retrieval (chat with your documents) and the
// exact response cache. A document's chunks are replaced as a whole in one
// transaction, so an indexing run killed half-way leaves every file either fully
// indexed (by content hash) or not at all. Chunk vectors sit in their own table
// (int8 components with one scale) so loading a library's vectors for search reads
// no chunk text. chunk_fts indexes heading and text with the Porter stemmer; chunks
// are never updated in place, only inserted and deleted. message_sources keeps the
// passages a reply was given exactly as the model saw them, so they survive a
// re-index or the library's removal.
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE libraries (
  id              INTEGER PRIMARY KEY,
  name            TEXT    NOT NULL,
  created_ms      INTEGER NOT NULL,
  updated_ms      INTEGER NOT NULL,
  embedding_model TEXT    NOT NULL DEFAULT '',
  embedding_dim   INTEGER NOT NULL DEFAULT 0 CHECK (embedding_dim >= 0)
);

CREATE TABLE library_roots (
  library_id INTEGER NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
  path       TEXT    NOT NULL,
  added_ms   INTEGER NOT NULL,
  PRIMARY KEY (library_id, path)
);

CREATE TABLE documents (
  id             INTEGER PRIMARY KEY,
  library_id     INTEGER NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
  path           TEXT    NOT NULL,
  content_sha256 TEXT    NOT NULL,
  size_bytes     INTEGER NOT NULL,
  modified_ms    INTEGER NOT NULL,
  kind           TEXT    NOT NULL,
  state          TEXT    NOT NULL CHECK (state IN ('indexed', 'failed')),
  error_message  TEXT    NOT NULL DEFAULT '',
  indexed_ms     INTEGER NOT NULL,
  UNIQUE (library_id, path)
);

CREATE TABLE chunks (
  id             INTEGER PRIMARY KEY,
  document_id    INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal        INTEGER NOT NULL,
  heading        TEXT    NOT NULL DEFAULT '',
  text           TEXT    NOT NULL,
  page           INTEGER,
  line_first     INTEGER NOT NULL,
  line_last      INTEGER NOT NULL,
  token_estimate INTEGER NOT NULL DEFAULT 0,
  UNIQUE (document_id, ordinal)
);

CREATE TABLE chunk_vectors (
  chunk_id   INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
  library_id INTEGER NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
  scale      REAL    NOT NULL,
  data       BLOB    NOT NULL
);
CREATE INDEX chunk_vectors_by_library ON chunk_vectors(library_id, chunk_id);

CREATE VIRTUAL TABLE chunk_fts USING fts5(
  heading, text, content='chunks', content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO chunk_fts(rowid, heading, text) VALUES (new.id, new.heading, new.text);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
  INSERT INTO chunk_fts(chunk_fts, rowid, heading, text) VALUES ('delete', old.id, old.heading, old.text);
END;

CREATE TABLE conversation_libraries (
  conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  library_id      INTEGER NOT NULL REFERENCES libraries(id) ON DELETE CASCADE,
  PRIMARY KEY (conversation_id, library_id)
);
CREATE INDEX conversation_libraries_by_library ON conversation_libraries(library_id);

CREATE TABLE message_sources (
  message_id    INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  ordinal       INTEGER NOT NULL CHECK (ordinal >= 1),
  chunk_id      INTEGER REFERENCES chunks(id) ON DELETE SET NULL,
  library_name  TEXT    NOT NULL DEFAULT '',
  document_path TEXT    NOT NULL,
  page          INTEGER,
  line_first    INTEGER NOT NULL,
  line_last     INTEGER NOT NULL,
  text          TEXT    NOT NULL,
  score         REAL    NOT NULL DEFAULT 0,
  PRIMARY KEY (message_id, ordinal)
);
CREATE INDEX message_sources_by_chunk ON message_sources(chunk_id);

CREATE TABLE response_cache (
  key_sha256     TEXT    PRIMARY KEY,
  model_identity TEXT    NOT NULL,
  reply          TEXT    NOT NULL,
  reasoning      TEXT    NOT NULL DEFAULT '',
  token_count    INTEGER NOT NULL DEFAULT 0,
  size_bytes     INTEGER NOT NULL,
  created_ms     INTEGER NOT NULL,
  last_used_ms   INTEGER NOT NULL
);
CREATE INDEX response_cache_by_use ON response_cache(last_used_ms);
CREATE INDEX response_cache_by_model ON response_cache(model_identity);
)sql";

// Version 5: the local API's semantic cache. A question close enough in
// meaning (cosine of the embeddings) to one answered before, in the same
// context (system prompt, earlier turns, settings: their hash), by the same
// model file, gets the stored reply.
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE semantic_cache (
  id             INTEGER PRIMARY KEY,
  model_identity TEXT    NOT NULL,
  context_sha256 TEXT    NOT NULL,
  question       TEXT    NOT NULL,
  embedding      BLOB    NOT NULL,
  reply          TEXT    NOT NULL,
  token_count    INTEGER NOT NULL DEFAULT 0,
  size_bytes     INTEGER NOT NULL,
  created_ms     INTEGER NOT NULL,
  last_used_ms   INTEGER NOT NULL
);
CREATE INDEX semantic_cache_by_context ON semantic_cache(model_identity, context_sha256);
CREATE INDEX semantic_cache_by_use ON semantic_cache(last_used_ms);
)sql";

constexpr Migration kMigrations[] = {
    {1, kSchemaV1},
    {2, kSchemaV2},
    {3, kSchemaV3},
    {4, kSchemaV4},
    {5, kSchemaV5},
};
static_assert(std::size(kMigrations) == Database::kSchemaVersion,
              "every schema version needs its migration");

Result<std::int64_t> single_int(DatabaseImpl& impl, const char* sql) {
  HEARTH_TRY(auto stmt, impl.prepare(sql));
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::Internal, std::string("no row from: ") + sql);
  return stmt.int64(0);
}

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

Status check_schema(DatabaseImpl& impl) {
  HEARTH_TRY(std::int64_t version, single_int(impl, "PRAGMA user_version"));
  impl.report.schema_version_found = static_cast<int>(version);
  impl.report.schema_version = static_cast<int>(version);
  if (version > Database::kSchemaVersion) {
    return make_error(ErrorCode::Unsupported,
                      "database '" + impl.path + "' has schema version " + std::to_string(version) +
                          ", newer than the " + std::to_string(Database::kSchemaVersion) +
                          " this version of Hearth understands; left untouched");
  }
  if (version == 0) {
    HEARTH_TRY(std::int64_t objects, single_int(impl, "SELECT count(*) FROM sqlite_schema"));
    if (objects != 0) {
      return make_error(ErrorCode::InvalidFormat,
                        "'" + impl.path + "' is an SQLite database with " + std::to_string(objects) +
                            " schema objects but no Hearth schema version; left untouched");
    }
  }
  if (version < Database::kSchemaVersion && impl.options.access == Access::ReadOnly) {
    return make_error(ErrorCode::Unsupported,
                      "database '" + impl.path + "' has schema version " + std::to_string(version) +
                          " and needs migrating to " + std::to_string(Database::kSchemaVersion) +
                          "; open it for writing first");
  }
  return {};
}

Status migrate(DatabaseImpl& impl) {
  const int version = impl.report.schema_version;
  if (version == Database::kSchemaVersion) return {};

  // All pending steps in one transaction: a failure leaves the previous version.
  HEARTH_CHECK(impl.exec("BEGIN IMMEDIATE", "begin migration"));
  for (const Migration& migration : kMigrations) {
    if (migration.version <= version) continue;
    const std::string step = "migrate to schema version " + std::to_string(migration.version);
    Status applied = impl.exec(migration.sql, step);
    if (applied.ok()) {
      // PRAGMA takes no bound parameters; the version is a compile-time constant.
      const std::string pragma = "PRAGMA user_version = " + std::to_string(migration.version);
      applied = impl.exec(pragma.c_str(), step);
    }
    if (!applied.ok()) {
      (void)impl.exec("ROLLBACK", "roll back migration");
      return applied;
    }
  }
  Status committed = impl.exec("COMMIT", "commit migration");
  if (!committed.ok()) {
    (void)impl.exec("ROLLBACK", "roll back migration");
    return committed;
  }
  impl.report.schema_version = Database::kSchemaVersion;
  return {};
}

}  // namespace hearth::storage
