// Document libraries for retrieval: the files a user added, their chunks with line
// and page ranges, the chunks' embedding vectors and a BM25 index over their text.
//
// A document is written as a whole: put_document replaces its row, chunks and
// vectors in one transaction, so an indexing run killed at any point leaves every
// file either fully indexed (with the content hash it was indexed from) or as it
// was before. The indexer compares that hash to skip unchanged files on resume.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"
#include "hearth/storage/ids.h"
#include "hearth/storage/types.h"

namespace hearth::storage {

using LibraryId = Id<struct LibraryTag>;
using DocumentId = Id<struct DocumentTag>;
using ChunkId = Id<struct ChunkTag>;

struct Library {
  LibraryId id;
  std::string name;
  UnixMs created_ms = 0;
  UnixMs updated_ms = 0;  // bumped by every document change: search caches key on it
  // Which model the vectors came from (its file's SHA-256 or name) and their length.
  // Vectors of another model are meaningless to compare, so a different model means
  // re-indexing.
  std::string embedding_model;
  std::int64_t embedding_dim = 0;
  std::vector<std::string> roots;  // files and folders the user added, sorted
};

enum class DocumentState { Indexed, Failed };

// What the indexer knows about a file before reading its chunks.
struct DocumentInfo {
  std::string path;            // absolute, as found under a root
  std::string content_sha256;  // of the file's bytes
  std::int64_t size_bytes = 0;
  UnixMs modified_ms = 0;
  std::string kind;  // "text", "markdown", "code", "html", "pdf", "docx"
};

struct DocumentRecord {
  DocumentId id;
  LibraryId library;
  DocumentInfo info;
  DocumentState state = DocumentState::Indexed;
  std::string error_message;  // why a Failed document could not be read
  UnixMs indexed_ms = 0;
  std::int64_t chunk_count = 0;
};

// A chunk as the chunker made it, with its vector (int8 components times `scale`;
// empty when the library has no embedding model).
struct NewChunk {
  std::string heading;  // the headings above it ("Install > Debian"), may be empty
  std::string text;
  std::optional<std::int64_t> page;  // 1-based page of a PDF
  std::int64_t line_first = 1;       // 1-based, inclusive
  std::int64_t line_last = 1;
  std::int64_t token_estimate = 0;
  float scale = 0;
  std::vector<std::int8_t> vector;  // [embedding_dim] or empty
};

struct ChunkRecord {
  ChunkId id;
  DocumentId document;
  LibraryId library;
  std::string document_path;
  std::int64_t ordinal = 0;
  std::string heading;
  std::string text;
  std::optional<std::int64_t> page;
  std::int64_t line_first = 1;
  std::int64_t line_last = 1;
  std::int64_t token_estimate = 0;
};

struct KeywordHit {
  ChunkId chunk;
  double bm25 = 0;  // as FTS5 reports it: lower is better
};

// Receives each stored vector of a library: its chunk, scale and int8 components
// (valid only during the call).
using VectorVisitor = std::function<void(ChunkId chunk, float scale, std::span<const std::int8_t> values)>;

class Libraries {
 public:
  explicit Libraries(Database& db) : db_(db) {}

  Result<LibraryId> create(std::string_view name, std::string_view embedding_model, std::int64_t embedding_dim);
  Result<Library> get(LibraryId id);
  Result<std::vector<Library>> list();
  Status rename(LibraryId id, std::string_view name);
  // Deletes the library with its documents, chunks and vectors; replies that cited
  // it keep their stored passages.
  Status remove(LibraryId id);
  // Switches the library to another embedding model: its documents (and their
  // chunks and vectors) are removed, so the next indexing run reads every file
  // again and embeds it with the new model.
  Status reset_for_model(LibraryId id, std::string_view embedding_model, std::int64_t embedding_dim);
  Status add_root(LibraryId id, std::string_view path);
  Status remove_root(LibraryId id, std::string_view path);

  Result<std::optional<DocumentRecord>> document(LibraryId library, std::string_view path);
  Result<std::vector<DocumentRecord>> documents(LibraryId library);
  // At most `limit` of the library's indexed documents (enough to tell "one
  // file" from "several" without reading the whole list).
  Result<std::vector<DocumentRecord>> indexed_documents(LibraryId library, std::int64_t limit);
  // Writes the document and replaces its chunks and vectors, all or nothing. Every
  // vector must have the library's embedding_dim components (or none).
  Result<DocumentId> put_document(LibraryId library, const DocumentInfo& info, std::span<const NewChunk> chunks);
  // Records a file that could not be read (its old chunks are removed), so the
  // library shows why and the indexer does not retry it until it changes.
  Status put_failed(LibraryId library, const DocumentInfo& info, std::string_view error);
  Status remove_document(DocumentId id);
  // A file touched but unchanged (same content hash): records its new size and time
  // so the next scan skips it without reading it.
  Status refresh_stat(DocumentId id, std::int64_t size_bytes, UnixMs modified_ms);

  Result<std::vector<ChunkRecord>> chunks(std::span<const ChunkId> ids);
  Result<std::int64_t> chunk_count(LibraryId library);
  Status for_each_vector(LibraryId library, const VectorVisitor& visit);
  // BM25 over heading and text of the given libraries' chunks. `query` is the
  // user's words (each quoted, any of them may match); best first.
  Result<std::vector<KeywordHit>> keyword_search(std::span<const LibraryId> libraries, std::string_view query,
                                                 std::int64_t limit);

 private:
  Database& db_;
};

const char* to_string(DocumentState state);

}  // namespace hearth::storage
