-- Hearth storage fixture, schema version 4.
-- Build the database with:  sqlite3 v4.db < v4.sql
-- The schema below is version 1 followed by the version 2, 3 and 4 migrations, all exactly as
-- released (copied from storage/src/migrations.cpp); never edit it. Newer versions
-- migrate from it.
PRAGMA journal_mode = DELETE;
BEGIN;
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

-- Version 2: context events and the prefix-cache index.
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

-- Version 3: reasoning kept apart from the answer, the conversation's reasoning switch.
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

-- Data: three conversations written by hand to exercise every column of version 3.
-- Timestamps are 2025-06-01 00:00 UTC (1748736000000) plus a few seconds.
INSERT INTO conversations (id, title, created_ms, updated_ms, model_file, model_quant, system_prompt,
                           settings_json, pinned, archived, active_leaf_id)
VALUES (1, 'Primes below twenty', 1748736000000, 1748736090000, 'qwen3-0.6b-Q8_0.gguf', 'Q8_0',
        'Answer briefly.', '{"temperature":0.6,"top_p":0.95,"overflow_policy":"summarize"}', 1, 0, NULL),
       (2, 'Wetter in Zürich', 1748736100000, 1748736160000, 'smollm3-3b-Q4_K_M.gguf', 'Q4_K_M', '',
        '{}', 0, 1, NULL),
       (3, '', 1748736200000, 1748736200000, '', '', '', '{}', 0, 0, NULL);

-- Conversation 1: a question, a reply, a regenerated reply (second branch, active)
-- and a follow-up. Conversation 2: a reply cut off while streaming (it must come
-- back as interrupted). Conversation 3 has no messages.
INSERT INTO messages (id, conversation_id, parent_id, role, content, created_ms, updated_ms, state,
                      error_message, token_count, ttft_ms, tokens_per_second, backend)
VALUES (1, 1, NULL, 'user', 'Which primes are below twenty?', 1748736001000, 1748736001000, 'complete', '', 8, NULL, NULL, ''),
       (2, 1, 1, 'assistant', '2, 3, 5, 7, 11, 13, 17 and 19.', 1748736002000, 1748736009000,
        'complete', '', 21, 120.25, 18.5, 'cpu'),
       (3, 1, 1, 'assistant', 'Eight of them: 2, 3, 5, 7, 11, 13, 17, 19.', 1748736030000, 1748736041000,
        'complete', '', 25, 95.75, 22.125, 'vulkan:lavapipe'),
       (4, 1, 3, 'user', 'And below thirty?', 1748736080000, 1748736080000, 'complete', '', 5, NULL, NULL, ''),
       (5, 1, 4, 'assistant', 'Add 23 and 29.', 1748736081000, 1748736090000, 'complete', '', 7, 80.0, 20.0, 'cpu'),
       (6, 2, NULL, 'user', 'Wie wird das Wetter morgen?', 1748736101000, 1748736101000, 'complete', '', 7, NULL, NULL, ''),
       (7, 2, 6, 'assistant', 'Morgen wird es sonnig', 1748736102000, 1748736160000, 'streaming', '', 5, NULL, NULL, '');
UPDATE conversations SET active_leaf_id = 5 WHERE id = 1;
UPDATE conversations SET active_leaf_id = 7 WHERE id = 2;

INSERT INTO context_events (id, conversation_id, kind, created_ms, first_message_id, last_message_id,
                            tokens_removed, summary)
VALUES (1, 1, 'summarized', 1748736079000, 1, 3, 54, 'Listed the primes below twenty.');

INSERT INTO prefix_cache (id, model_sha256, prefix_hash, token_count, file_path, size_bytes, created_ms, last_used_ms)
VALUES (1, 'c0ffee', 'f00d', 96, 'prefix-cache/c0ffee-f00d.kv', 393216, 1748736002000, 1748736081000);

INSERT INTO prompt_presets (id, name, content, created_ms, updated_ms)
VALUES (1, 'Brief', 'Answer briefly.', 1748735900000, 1748735900000);
INSERT INTO models (id, path, size_bytes, sha256, source_url, quant, added_ms, last_used_ms)
VALUES (1, 'models/qwen3-0.6b-Q8_0.gguf', 639446688, 'c0ffee', 'https://example.invalid/qwen3', 'Q8_0', 1748735000000, 1748736081000);
-- Version 3 values: a reasoning reply with its thinking and duration, and a
-- conversation with its reasoning switch set.
UPDATE conversations SET reasoning = 'high' WHERE id = 1;
UPDATE conversations SET reasoning = 'off' WHERE id = 2;
UPDATE messages SET reasoning = 'Primes have exactly two divisors; list them up to 19.', reasoning_ms = 812.5
  WHERE id = 3;
-- Version 4, copied verbatim from storage/src/migrations.cpp as released.
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

-- Version 4 values, written by hand: a library with a root folder, an indexed
-- document with two chunks (the first with a vector), a failed document, the
-- library attached to conversation 1, a user message's source, and a
-- response-cache entry.
INSERT INTO libraries (id, name, created_ms, updated_ms, embedding_model, embedding_dim)
  VALUES (1, 'Manuals', 1733000000000, 1733000100000, 'nomic-embed-text-v1.5.Q8_0.gguf', 4);
INSERT INTO library_roots (library_id, path, added_ms) VALUES (1, '/home/user/Manuals', 1733000000000);
INSERT INTO documents (id, library_id, path, content_sha256, size_bytes, modified_ms, kind, state, error_message,
                       indexed_ms)
  VALUES (1, 1, '/home/user/Manuals/kettle.md', 'aa11', 120, 1732000000000, 'markdown', 'indexed', '', 1733000050000),
         (2, 1, '/home/user/Manuals/broken.pdf', 'bb22', 9, 1732000000000, 'pdf', 'failed',
          'broken.pdf: not a PDF file', 1733000060000);
INSERT INTO chunks (id, document_id, ordinal, heading, text, page, line_first, line_last, token_estimate)
  VALUES (1, 1, 0, 'Kettle > Descaling', 'Fill the kettle with one part vinegar and two parts water.', NULL, 3, 4, 14),
         (2, 1, 1, 'Kettle > Safety', 'Never open the lid while the water boils.', NULL, 6, 6, 10);
INSERT INTO chunk_vectors (chunk_id, library_id, scale, data) VALUES (1, 1, 0.0078125, X'7F00810A');
INSERT INTO conversation_libraries (conversation_id, library_id) VALUES (1, 1);
INSERT INTO message_sources (message_id, ordinal, chunk_id, library_name, document_path, page, line_first, line_last,
                             text, score)
  VALUES (1, 1, 1, 'Manuals', '/home/user/Manuals/kettle.md', NULL, 3, 4,
          'Fill the kettle with one part vinegar and two parts water.', 0.8);
INSERT INTO response_cache (key_sha256, model_identity, reply, reasoning, token_count, size_bytes, created_ms,
                            last_used_ms)
  VALUES ('cc33', '/models/tiny.gguf|1000:17', 'Paris.', '', 2, 100, 1733000070000, 1733000080000);
PRAGMA user_version = 4;
COMMIT;
