#include "hearth/storage/libraries.h"

#include <algorithm>

#include "database_impl.h"

namespace hearth::storage {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The words of a question as an FTS5 expression where any word may match: a
// question rarely repeats every word of the passage that answers it, and BM25
// already ranks passages with more (and rarer) words higher. Each word is quoted so
// operators and punctuation are plain text; words without a letter or digit are
// dropped (the tokenizer would index nothing for them).
std::string any_word_expression(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (is_space(text[i]) || text[i] == '"')) ++i;
    std::size_t end = i;
    while (end < text.size() && !is_space(text[end]) && text[end] != '"') ++end;
    const std::string_view word = text.substr(i, end - i);
    const bool has_token = std::any_of(word.begin(), word.end(), [](char c) {
      const auto u = static_cast<unsigned char>(c);
      return u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
    });
    if (!word.empty() && has_token) {
      if (!out.empty()) out += " OR ";
      out += '"';
      out += word;
      out += '"';
    }
    i = end;
  }
  return out;
}

Status touch_library(DatabaseImpl& impl, LibraryId id) {
  HEARTH_TRY(auto stmt, impl.prepare("UPDATE libraries SET updated_ms = max(updated_ms + 1, ?2) WHERE id = ?1"));
  stmt.bind(1, id).bind(2, impl.now());
  HEARTH_CHECK(stmt.run());
  if (impl.changes() == 0) return make_error(ErrorCode::NotFound, describe("library", id) + " does not exist");
  return {};
}

Result<std::int64_t> library_dim(DatabaseImpl& impl, LibraryId id) {
  HEARTH_TRY(auto stmt, impl.prepare("SELECT embedding_dim FROM libraries WHERE id = ?1"));
  stmt.bind(1, id);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::NotFound, describe("library", id) + " does not exist");
  return stmt.int64(0);
}

#define HEARTH_DOCUMENT_COLUMNS                                                                          \
  "d.id, d.library_id, d.path, d.content_sha256, d.size_bytes, d.modified_ms, d.kind, d.state, " \
  "d.error_message, d.indexed_ms, (SELECT count(*) FROM chunks c WHERE c.document_id = d.id)"

DocumentRecord read_document(const Statement& stmt) {
  DocumentRecord d;
  d.id = stmt.id<DocumentId>(0);
  d.library = stmt.id<LibraryId>(1);
  d.info.path = stmt.text(2);
  d.info.content_sha256 = stmt.text(3);
  d.info.size_bytes = stmt.int64(4);
  d.info.modified_ms = stmt.int64(5);
  d.info.kind = stmt.text(6);
  d.state = stmt.text(7) == "failed" ? DocumentState::Failed : DocumentState::Indexed;
  d.error_message = stmt.text(8);
  d.indexed_ms = stmt.int64(9);
  d.chunk_count = stmt.int64(10);
  return d;
}

// Inserts or updates the document row and deletes its old chunks (their vectors
// and index entries go with them).
Result<DocumentId> upsert_document(DatabaseImpl& impl, LibraryId library, const DocumentInfo& info,
                                   DocumentState state, std::string_view error) {
  HEARTH_TRY(auto stmt, impl.prepare(
                            "INSERT INTO documents (library_id, path, content_sha256, size_bytes, modified_ms, kind, "
                            "state, error_message, indexed_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                            "ON CONFLICT (library_id, path) DO UPDATE SET content_sha256 = excluded.content_sha256, "
                            "size_bytes = excluded.size_bytes, modified_ms = excluded.modified_ms, kind = excluded.kind, "
                            "state = excluded.state, error_message = excluded.error_message, "
                            "indexed_ms = excluded.indexed_ms RETURNING id"));
  stmt.bind(1, library).bind(2, info.path).bind(3, info.content_sha256).bind(4, info.size_bytes);
  stmt.bind(5, info.modified_ms).bind(6, info.kind).bind(7, to_string(state)).bind(8, error).bind(9, impl.now());
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::Internal, "upsert of document '" + info.path + "' returned no id");
  const DocumentId id = stmt.id<DocumentId>(0);
  HEARTH_TRY(bool done, stmt.step());
  (void)done;
  HEARTH_TRY(auto clear, impl.prepare("DELETE FROM chunks WHERE document_id = ?1"));
  clear.bind(1, id);
  HEARTH_CHECK(clear.run());
  return id;
}

}  // namespace

const char* to_string(DocumentState state) { return state == DocumentState::Failed ? "failed" : "indexed"; }

Result<LibraryId> Libraries::create(std::string_view name, std::string_view embedding_model,
                                    std::int64_t embedding_dim) {
  if (embedding_dim < 0 || embedding_dim > 65536) {
    return make_error(ErrorCode::InvalidArgument,
                      "library '" + std::string(name) + "': embedding length " + std::to_string(embedding_dim) +
                          " is outside 0..65536");
  }
  return in_transaction(db_, Durability::Full, [&]() -> Result<LibraryId> {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO libraries (name, created_ms, updated_ms, embedding_model, "
                                       "embedding_dim) VALUES (?1, ?2, ?2, ?3, ?4)"));
    stmt.bind(1, name).bind(2, impl.now()).bind(3, embedding_model).bind(4, embedding_dim);
    HEARTH_CHECK(stmt.run());
    return LibraryId{impl.last_insert_id()};
  });
}

Result<Library> Libraries::get(LibraryId id) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_TRY(auto stmt, impl.prepare("SELECT id, name, created_ms, updated_ms, embedding_model, embedding_dim "
                                     "FROM libraries WHERE id = ?1"));
  stmt.bind(1, id);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::NotFound, describe("library", id) + " does not exist");
  Library library{stmt.id<LibraryId>(0), stmt.text(1), stmt.int64(2), stmt.int64(3), stmt.text(4), stmt.int64(5), {}};
  HEARTH_TRY(auto roots, impl.prepare("SELECT path FROM library_roots WHERE library_id = ?1 ORDER BY path"));
  roots.bind(1, id);
  while (true) {
    HEARTH_TRY(bool more, roots.step());
    if (!more) break;
    library.roots.push_back(roots.text(0));
  }
  return library;
}

Result<std::vector<Library>> Libraries::list() {
  std::vector<LibraryId> ids;
  {
    HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT id FROM libraries ORDER BY name COLLATE NOCASE, id"));
    while (true) {
      HEARTH_TRY(bool row, stmt.step());
      if (!row) break;
      ids.push_back(stmt.id<LibraryId>(0));
    }
  }
  std::vector<Library> out;
  for (LibraryId id : ids) {
    HEARTH_TRY(auto library, get(id));
    out.push_back(std::move(library));
  }
  return out;
}

Status Libraries::rename(LibraryId id, std::string_view name) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_TRY(auto stmt, impl.prepare("UPDATE libraries SET name = ?2 WHERE id = ?1"));
  stmt.bind(1, id).bind(2, name);
  HEARTH_CHECK(stmt.run());
  if (impl.changes() == 0) return make_error(ErrorCode::NotFound, describe("library", id) + " does not exist");
  return {};
}

Status Libraries::remove(LibraryId id) {
  return in_transaction(db_, Durability::Full, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("DELETE FROM libraries WHERE id = ?1"));
    stmt.bind(1, id);
    HEARTH_CHECK(stmt.run());
    if (impl.changes() == 0) return make_error(ErrorCode::NotFound, describe("library", id) + " does not exist");
    return {};
  });
}

Status Libraries::reset_for_model(LibraryId id, std::string_view embedding_model, std::int64_t embedding_dim) {
  if (embedding_dim < 0 || embedding_dim > 65536) {
    return make_error(ErrorCode::InvalidArgument, describe("library", id) + ": embedding length " +
                                                      std::to_string(embedding_dim) + " is outside 0..65536");
  }
  return in_transaction(db_, Durability::Full, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_CHECK(touch_library(impl, id));
    HEARTH_TRY(auto update, impl.prepare("UPDATE libraries SET embedding_model = ?2, embedding_dim = ?3 WHERE id = ?1"));
    update.bind(1, id).bind(2, embedding_model).bind(3, embedding_dim);
    HEARTH_CHECK(update.run());
    HEARTH_TRY(auto clear, impl.prepare("DELETE FROM documents WHERE library_id = ?1"));
    clear.bind(1, id);
    return clear.run();
  });
}

Status Libraries::add_root(LibraryId id, std::string_view path) {
  if (path.empty()) return make_error(ErrorCode::InvalidArgument, describe("library", id) + ": empty path");
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_CHECK(touch_library(impl, id));
    HEARTH_TRY(auto stmt, impl.prepare("INSERT OR IGNORE INTO library_roots (library_id, path, added_ms) "
                                       "VALUES (?1, ?2, ?3)"));
    stmt.bind(1, id).bind(2, path).bind(3, impl.now());
    return stmt.run();
  });
}

Status Libraries::remove_root(LibraryId id, std::string_view path) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_CHECK(touch_library(impl, id));
    HEARTH_TRY(auto stmt, impl.prepare("DELETE FROM library_roots WHERE library_id = ?1 AND path = ?2"));
    stmt.bind(1, id).bind(2, path);
    return stmt.run();
  });
}

Result<std::optional<DocumentRecord>> Libraries::document(LibraryId library, std::string_view path) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT " HEARTH_DOCUMENT_COLUMNS
                                           " FROM documents d WHERE d.library_id = ?1 AND d.path = ?2"));
  stmt.bind(1, library).bind(2, path);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return std::optional<DocumentRecord>{};
  return std::optional<DocumentRecord>{read_document(stmt)};
}

Result<std::vector<DocumentRecord>> Libraries::documents(LibraryId library) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT " HEARTH_DOCUMENT_COLUMNS
                                           " FROM documents d WHERE d.library_id = ?1 ORDER BY d.path"));
  stmt.bind(1, library);
  std::vector<DocumentRecord> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) break;
    out.push_back(read_document(stmt));
  }
  return out;
}

Result<std::vector<DocumentRecord>> Libraries::indexed_documents(LibraryId library, std::int64_t limit) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT " HEARTH_DOCUMENT_COLUMNS
                                           " FROM documents d WHERE d.library_id = ?1 AND d.state = 'indexed' "
                                           "ORDER BY d.path LIMIT ?2"));
  stmt.bind(1, library).bind(2, limit);
  std::vector<DocumentRecord> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) break;
    out.push_back(read_document(stmt));
  }
  return out;
}

Result<DocumentId> Libraries::put_document(LibraryId library, const DocumentInfo& info,
                                           std::span<const NewChunk> chunks) {
  return in_transaction(db_, Durability::Normal, [&]() -> Result<DocumentId> {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(std::int64_t dim, library_dim(impl, library));
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const auto n = static_cast<std::int64_t>(chunks[i].vector.size());
      if (n != 0 && n != dim) {
        return make_error(ErrorCode::InvalidArgument, "document '" + info.path + "' chunk " + std::to_string(i) +
                                                          ": vector has " + std::to_string(n) +
                                                          " components, the library's model gives " +
                                                          std::to_string(dim));
      }
    }
    HEARTH_CHECK(touch_library(impl, library));
    HEARTH_TRY(DocumentId id, upsert_document(impl, library, info, DocumentState::Indexed, ""));
    HEARTH_TRY(auto insert, impl.prepare("INSERT INTO chunks (document_id, ordinal, heading, text, page, line_first, "
                                         "line_last, token_estimate) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const NewChunk& c = chunks[i];
      insert.reset();
      insert.bind(1, id).bind(2, static_cast<std::int64_t>(i)).bind(3, c.heading).bind(4, c.text);
      insert.bind(5, c.page).bind(6, c.line_first).bind(7, c.line_last).bind(8, c.token_estimate);
      HEARTH_CHECK(insert.run());
      if (c.vector.empty()) continue;
      const ChunkId chunk{impl.last_insert_id()};
      HEARTH_TRY(auto vec, impl.prepare("INSERT INTO chunk_vectors (chunk_id, library_id, scale, data) "
                                        "VALUES (?1, ?2, ?3, ?4)"));
      vec.bind(1, chunk).bind(2, library).bind(3, static_cast<double>(c.scale));
      vec.bind_blob(4, c.vector.data(), c.vector.size());
      HEARTH_CHECK(vec.run());
    }
    return id;
  });
}

Status Libraries::put_failed(LibraryId library, const DocumentInfo& info, std::string_view error) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_CHECK(touch_library(impl, library));
    auto id = upsert_document(impl, library, info, DocumentState::Failed, error);
    if (!id.ok()) return id.take_error();
    return {};
  });
}

Status Libraries::remove_document(DocumentId id) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto find, impl.prepare("SELECT library_id FROM documents WHERE id = ?1"));
    find.bind(1, id);
    HEARTH_TRY(bool row, find.step());
    if (!row) return make_error(ErrorCode::NotFound, describe("document", id) + " does not exist");
    const LibraryId library = find.id<LibraryId>(0);
    HEARTH_CHECK(touch_library(impl, library));
    HEARTH_TRY(auto stmt, impl.prepare("DELETE FROM documents WHERE id = ?1"));
    stmt.bind(1, id);
    return stmt.run();
  });
}

Status Libraries::refresh_stat(DocumentId id, std::int64_t size_bytes, UnixMs modified_ms) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_TRY(auto stmt, impl.prepare("UPDATE documents SET size_bytes = ?2, modified_ms = ?3 WHERE id = ?1"));
  stmt.bind(1, id).bind(2, size_bytes).bind(3, modified_ms);
  HEARTH_CHECK(stmt.run());
  if (impl.changes() == 0) return make_error(ErrorCode::NotFound, describe("document", id) + " does not exist");
  return {};
}

Result<std::vector<ChunkRecord>> Libraries::chunks(std::span<const ChunkId> ids) {
  HEARTH_TRY(auto stmt, db_.impl().prepare(
                            "SELECT c.id, c.document_id, d.library_id, d.path, c.ordinal, c.heading, c.text, c.page, "
                            "c.line_first, c.line_last, c.token_estimate FROM chunks c "
                            "JOIN documents d ON d.id = c.document_id WHERE c.id = ?1"));
  std::vector<ChunkRecord> out;
  out.reserve(ids.size());
  for (ChunkId id : ids) {
    stmt.reset();
    stmt.bind(1, id);
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return make_error(ErrorCode::NotFound, describe("chunk", id) + " does not exist");
    out.push_back(ChunkRecord{stmt.id<ChunkId>(0), stmt.id<DocumentId>(1), stmt.id<LibraryId>(2), stmt.text(3),
                              stmt.int64(4), stmt.text(5), stmt.text(6), stmt.optional_int64(7), stmt.int64(8),
                              stmt.int64(9), stmt.int64(10)});
  }
  return out;
}

Result<std::int64_t> Libraries::chunk_count(LibraryId library) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
                                           "WHERE d.library_id = ?1"));
  stmt.bind(1, library);
  HEARTH_TRY(bool row, stmt.step());
  (void)row;
  return stmt.int64(0);
}

Status Libraries::for_each_vector(LibraryId library, const VectorVisitor& visit) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_TRY(std::int64_t dim, library_dim(impl, library));
  HEARTH_TRY(auto stmt, impl.prepare("SELECT chunk_id, scale, data FROM chunk_vectors WHERE library_id = ?1 "
                                     "ORDER BY chunk_id"));
  stmt.bind(1, library);
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return {};
    const std::string_view bytes = stmt.blob(2);
    // A vector of the wrong length (a damaged row) would be read past its end.
    if (static_cast<std::int64_t>(bytes.size()) != dim) {
      return make_error(ErrorCode::Corrupt, describe("chunk", stmt.id<ChunkId>(0)) + ": stored vector has " +
                                                std::to_string(bytes.size()) + " bytes, the library's length is " +
                                                std::to_string(dim));
    }
    visit(stmt.id<ChunkId>(0), static_cast<float>(stmt.real(1)),
          std::span<const std::int8_t>(reinterpret_cast<const std::int8_t*>(bytes.data()), bytes.size()));
  }
}

Result<std::vector<KeywordHit>> Libraries::keyword_search(std::span<const LibraryId> libraries, std::string_view query,
                                                          std::int64_t limit) {
  if (limit <= 0) return make_error(ErrorCode::InvalidArgument, "keyword search limit must be positive");
  const std::string expression = any_word_expression(query);
  std::vector<KeywordHit> hits;
  if (expression.empty() || libraries.empty()) return hits;
  HEARTH_TRY(auto stmt, db_.impl().prepare(
                            "SELECT chunk_fts.rowid, chunk_fts.rank FROM chunk_fts "
                            "JOIN chunks c ON c.id = chunk_fts.rowid JOIN documents d ON d.id = c.document_id "
                            "WHERE chunk_fts MATCH ?1 AND d.library_id = ?2 ORDER BY chunk_fts.rank LIMIT ?3"));
  for (LibraryId library : libraries) {
    stmt.reset();
    stmt.bind(1, expression).bind(2, library).bind(3, limit);
    while (true) {
      HEARTH_TRY(bool row, stmt.step());
      if (!row) break;
      hits.push_back(KeywordHit{stmt.id<ChunkId>(0), stmt.real(1)});
    }
  }
  std::stable_sort(hits.begin(), hits.end(), [](const KeywordHit& a, const KeywordHit& b) { return a.bm25 < b.bm25; });
  if (static_cast<std::int64_t>(hits.size()) > limit) hits.resize(static_cast<std::size_t>(limit));
  return hits;
}

}  // namespace hearth::storage
