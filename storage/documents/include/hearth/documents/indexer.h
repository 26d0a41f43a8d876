// Indexing a library: find the files under its roots, read, chunk and embed the
// new and changed ones, drop the ones that are gone. A run is planned once and then
// advanced one file per step(), so the caller decides when work happens: the app
// runs steps on the engine's background queue only while no reply is generating
// (chat first), pauses by not calling step(), and cancels by dropping the run.
//
// Each file is committed in its own transaction (Libraries::put_document), so a run
// killed at any point resumes with a new plan that skips the files already indexed
// (same size and modification time, or same content hash) and never duplicates one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/documents/chunker.h"
#include "hearth/documents/extract.h"
#include "hearth/storage/libraries.h"

namespace hearth::documents {

// Embeds a batch of passages (document side: no query instruction); one
// normalised vector per text, all of the library's embedding length.
using PassageEmbedder = std::function<Result<std::vector<std::vector<float>>>(std::span<const std::string> texts)>;

struct IndexerOptions {
  std::int64_t max_file_bytes = 64ll << 20;  // larger files are recorded as failed, not read
  std::int64_t max_files = 200000;           // a root with more stops the plan with an error
  std::int64_t embed_batch = 16;             // passages per embedding call
  ChunkerOptions chunker;
};

struct IndexProgress {
  std::int64_t files_total = 0;    // files found that Hearth can read
  std::int64_t files_done = 0;     // of those, handled (indexed, unchanged or failed)
  std::int64_t files_indexed = 0;  // read and (re)indexed in this run
  std::int64_t files_unchanged = 0;
  std::int64_t files_failed = 0;
  std::int64_t files_removed = 0;  // documents whose file is gone
  std::int64_t chunks_added = 0;
  std::string current;  // the file the last step handled
  std::string last_error;
};

class IndexRun {
 public:
  // Walks the library's roots (following no symlinks, skipping hidden entries)
  // and compares what it finds with what is stored.
  static Result<IndexRun> plan(storage::Libraries& libraries, storage::LibraryId library,
                               const Extractors& extractors, IndexerOptions options = {});

  bool done() const { return next_ >= files_.size() && removals_.empty(); }
  const IndexProgress& progress() const { return progress_; }

  // Handles one file (or all removals). A file that cannot be read is recorded as
  // failed with its reason and the run goes on; an error returned here is the
  // database's or the embedder's, and the same step may be retried.
  Status step(const PassageEmbedder& embed);

 private:
  IndexRun(storage::Libraries& libraries, storage::LibraryId library, const Extractors& extractors,
           IndexerOptions options)
      : libraries_(&libraries), library_(library), extractors_(&extractors), options_(std::move(options)) {}

  struct FoundFile {
    std::filesystem::path path;
    std::int64_t size_bytes = 0;
    std::int64_t modified_ms = 0;
  };
  Status index_file(const FoundFile& file, const PassageEmbedder& embed);

  storage::Libraries* libraries_;
  storage::LibraryId library_;
  const Extractors* extractors_;
  IndexerOptions options_;
  std::int64_t dim_ = 0;
  std::vector<FoundFile> files_;
  std::size_t next_ = 0;
  std::vector<storage::DocumentId> removals_;
  IndexProgress progress_;
};

// The SHA-256 of `bytes` in lower-case hex (also the response cache's key).
std::string sha256_hex(std::string_view bytes);

}  // namespace hearth::documents
