-- Hearth storage fixture, schema version 1 (the first released schema).
-- Build the database with:  sqlite3 v1.db < v1.sql
-- The schema below is version 1 exactly as released; never edit it. Newer versions
-- migrate from it (see storage/src/migrations.cpp).
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

-- Data: two conversations written by hand to exercise every column of version 1.
-- Timestamps are 2024-01-01 00:00 UTC (1704067200000) plus a few seconds.
INSERT INTO conversations (id, title, created_ms, updated_ms, model_file, model_quant, system_prompt,
                           settings_json, pinned, archived, active_leaf_id)
VALUES (1, 'Trip to Kraków', 1704067200000, 1704067260000, 'tiny-llama-Q4_K_M.gguf', 'Q4_K_M',
        'You are a travel agent.', '{"temperature":0.7,"top_k":40,"seed":42,"overflow":"evict_oldest"}', 1, 0, NULL),
       (2, 'Archived recipe', 1704067300000, 1704067300000, '', '', '', '{}', 0, 1, NULL);

-- Conversation 1: Q, A, then an edited Q (a second branch) whose reply was cut off
-- while streaming (it must come back as interrupted).
INSERT INTO messages (id, conversation_id, parent_id, role, content, created_ms, updated_ms, state,
                      error_message, token_count, ttft_ms, tokens_per_second, backend)
VALUES (1, 1, NULL, 'user', 'Which train goes to Kraków?', 1704067201000, 1704067201000, 'complete', '', 7, NULL, NULL, ''),
       (2, 1, 1, 'assistant', 'The EuroCity from Vienna, about seven hours.', 1704067202000, 1704067210000,
        'complete', '', 11, 85.5, 31.25, 'vulkan:lavapipe'),
       (3, 1, NULL, 'user', 'Which bus goes to Kraków?', 1704067250000, 1704067250000, 'complete', '', 7, NULL, NULL, ''),
       (4, 1, 3, 'assistant', 'Several buses leave', 1704067251000, 1704067260000, 'streaming', '', 4, NULL, NULL, ''),
       (5, 2, NULL, 'user', 'Pancakes?', 1704067300000, 1704067300000, 'complete', '', 2, NULL, NULL, ''),
       (6, 2, 5, 'assistant', '', 1704067301000, 1704067301000, 'error', 'model file missing', 0, NULL, NULL, 'cpu');
UPDATE conversations SET active_leaf_id = 4 WHERE id = 1;
UPDATE conversations SET active_leaf_id = 6 WHERE id = 2;

INSERT INTO prompt_presets (id, name, content, created_ms, updated_ms)
VALUES (1, 'Travel agent', 'You are a travel agent.', 1704067100000, 1704067100000);
INSERT INTO models (id, path, size_bytes, sha256, source_url, quant, added_ms, last_used_ms)
VALUES (1, 'models/tiny-llama-Q4_K_M.gguf', 1234567, 'ab', 'https://example.invalid/tiny', 'Q4_K_M', 1704067000000, 1704067260000);
PRAGMA user_version = 1;
COMMIT;
