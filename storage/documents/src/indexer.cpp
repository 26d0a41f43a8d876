#include "hearth/documents/indexer.h"

#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include "hearth/documents/vector_index.h"

namespace hearth::documents {
namespace {

namespace fs = std::filesystem;

std::int64_t to_unix_ms(fs::file_time_type t) {
  const auto system = std::chrono::file_clock::to_sys(t);
  return std::chrono::duration_cast<std::chrono::milliseconds>(system.time_since_epoch()).count();
}

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

Result<std::string> read_file(const fs::path& path, std::int64_t size_hint) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::Io, "cannot open '" + path.string() + "'");
  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(std::max<std::int64_t>(size_hint, 0)));
  bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return make_error(ErrorCode::Io, "cannot read '" + path.string() + "'");
  return bytes;
}

std::string kind_of(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext.empty() ? "text" : ext.substr(1);
}

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

Result<IndexRun> IndexRun::plan(storage::Libraries& libraries, storage::LibraryId library,
                                const Extractors& extractors, IndexerOptions options) {
  HEARTH_TRY(storage::Library info, libraries.get(library));
  IndexRun run(libraries, library, extractors, std::move(options));
  run.dim_ = info.embedding_dim;

  std::map<std::string, FoundFile> found;  // by path: a file under two roots counts once
  for (const std::string& root_text : info.roots) {
    const fs::path root(root_text);
    std::error_code ec;
    const auto status = fs::symlink_status(root, ec);
    if (ec || !fs::exists(status)) continue;  // a root that is gone: its documents go below
    auto consider = [&](const fs::directory_entry& entry) -> Status {
      std::error_code e;
      if (!entry.is_regular_file(e) || entry.is_symlink(e)) return {};
      if (!extractors.supports(entry.path())) return {};
      if (static_cast<std::int64_t>(found.size()) >= run.options_.max_files) {
        return make_error(ErrorCode::LimitExceeded, "library '" + info.name + "' holds more than " +
                                                        std::to_string(run.options_.max_files) + " readable files");
      }
      FoundFile f;
      f.path = entry.path();
      f.size_bytes = static_cast<std::int64_t>(entry.file_size(e));
      f.modified_ms = to_unix_ms(entry.last_write_time(e));
      found[f.path.string()] = f;
      return {};
    };
    if (fs::is_regular_file(status)) {
      HEARTH_CHECK(consider(fs::directory_entry(root, ec)));
      continue;
    }
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (hidden(it->path())) {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      HEARTH_CHECK(consider(*it));
    }
  }

  HEARTH_TRY(auto stored, libraries.documents(library));
  std::set<std::string> stored_paths;
  for (const storage::DocumentRecord& doc : stored) {
    stored_paths.insert(doc.info.path);
    const auto it = found.find(doc.info.path);
    if (it == found.end()) {
      run.removals_.push_back(doc.id);
      continue;
    }
    if (it->second.size_bytes == doc.info.size_bytes && it->second.modified_ms == doc.info.modified_ms) {
      ++run.progress_.files_unchanged;
      ++run.progress_.files_done;
      ++run.progress_.files_total;
      found.erase(it);
    }
  }
  for (auto& [path, file] : found) run.files_.push_back(std::move(file));
  run.progress_.files_total += static_cast<std::int64_t>(run.files_.size());
  return run;
}

Status IndexRun::step(const PassageEmbedder& embed) {
  if (!removals_.empty()) {
    for (storage::DocumentId id : removals_) HEARTH_CHECK(libraries_->remove_document(id));
    progress_.files_removed += static_cast<std::int64_t>(removals_.size());
    removals_.clear();
    return {};
  }
  if (next_ >= files_.size()) return {};
  HEARTH_CHECK(index_file(files_[next_], embed));
  ++next_;
  ++progress_.files_done;
  return {};
}

Status IndexRun::index_file(const FoundFile& file, const PassageEmbedder& embed) {
  progress_.current = file.path.string();
  storage::DocumentInfo info;
  info.path = file.path.string();
  info.size_bytes = file.size_bytes;
  info.modified_ms = file.modified_ms;
  info.kind = kind_of(file.path);

  auto fail = [&](const std::string& why) -> Status {
    ++progress_.files_failed;
    progress_.last_error = why;
    return libraries_->put_failed(library_, info, why);
  };
  if (file.size_bytes > options_.max_file_bytes) {
    return fail("'" + info.path + "' is " + std::to_string(file.size_bytes >> 20) + " MiB, over the " +
                std::to_string(options_.max_file_bytes >> 20) + " MiB a library file may have");
  }
  auto bytes = read_file(file.path, file.size_bytes);
  if (!bytes.ok()) return fail(bytes.error().message);
  info.content_sha256 = sha256_hex(*bytes);

  HEARTH_TRY(auto stored, libraries_->document(library_, info.path));
  if (stored && stored->info.content_sha256 == info.content_sha256) {
    ++progress_.files_unchanged;
    return libraries_->refresh_stat(stored->id, info.size_bytes, info.modified_ms);
  }

  auto text = extractors_->extract(file.path, *bytes);
  if (!text.ok()) return fail(text.error().message);
  info.kind = text->kind;
  const std::vector<Passage> passages = chunk_text(text->pages, text->structure, options_.chunker);

  std::vector<storage::NewChunk> chunks;
  chunks.reserve(passages.size());
  for (const Passage& p : passages) {
    storage::NewChunk c;
    c.heading = p.heading;
    c.text = p.text;
    c.page = p.page;
    c.line_first = p.line_first;
    c.line_last = p.line_last;
    c.token_estimate = p.token_estimate;
    chunks.push_back(std::move(c));
  }
  if (dim_ > 0 && embed) {
    const auto batch = static_cast<std::size_t>(std::max<std::int64_t>(options_.embed_batch, 1));
    for (std::size_t first = 0; first < chunks.size(); first += batch) {
      std::vector<std::string> texts;
      for (std::size_t i = first; i < std::min(chunks.size(), first + batch); ++i) {
        // The heading is part of what a passage is about ("Install > Debian").
        texts.push_back(chunks[i].heading.empty() ? chunks[i].text : chunks[i].heading + "\n\n" + chunks[i].text);
      }
      HEARTH_TRY(auto vectors, embed(texts));
      if (vectors.size() != texts.size()) {
        return make_error(ErrorCode::Internal, "the embedder returned " + std::to_string(vectors.size()) +
                                                   " vectors for " + std::to_string(texts.size()) + " passages");
      }
      for (std::size_t k = 0; k < vectors.size(); ++k) {
        if (static_cast<std::int64_t>(vectors[k].size()) != dim_) {
          return make_error(ErrorCode::InvalidArgument, "the embedding model gives " +
                                                            std::to_string(vectors[k].size()) +
                                                            " components; this library was built with " +
                                                            std::to_string(dim_) + ": re-index it with its model");
        }
        QuantizedVector q = quantize_vector(vectors[k]);
        chunks[first + k].scale = q.scale;
        chunks[first + k].vector = std::move(q.values);
      }
    }
  }
  HEARTH_TRY(storage::DocumentId id, libraries_->put_document(library_, info, chunks));
  (void)id;
  ++progress_.files_indexed;
  progress_.chunks_added += static_cast<std::int64_t>(chunks.size());
  return {};
}

}  // namespace hearth::documents
