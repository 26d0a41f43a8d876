#include "hearth/engine/kv/prefix_disk_cache.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <hearth/core/file_io.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

namespace hearth::kv {
namespace {

constexpr char kMagic[8] = {'H', 'E', 'A', 'R', 'T', 'H', 'K', 'V'};
constexpr uint32_t kFormatVersion = 1;
constexpr const char* kExtension = ".hkv";
constexpr uint64_t kSampleBytes = 1 << 20;
constexpr uint64_t kMaxTokens = 1 << 24;

// Fixed-size file header; all fields little-endian. `header_hash` covers every
// byte before it, `tokens_hash` and `payload_hash` the two sections after it.
struct FileHeader {
  char magic[8];
  uint32_t version;
  uint32_t kv_type;
  uint64_t model_hash;
  uint64_t model_size;
  uint32_t n_layer;
  uint32_t n_head_kv;
  uint32_t head_dim;
  uint32_t reserved;
  uint64_t n_tokens;
  uint64_t payload_bytes;
  uint64_t tokens_hash;
  uint64_t payload_hash;
  uint64_t header_hash;
};
static_assert(sizeof(FileHeader) == 88, "the on-disk header layout is fixed");

uint64_t header_hash(const FileHeader& h) { return XXH3_64bits(&h, offsetof(FileHeader, header_hash)); }

Error io_error(const std::filesystem::path& path, const char* what) {
  return make_error(ErrorCode::Io, fmt::format("{}: {}: {}", path.string(), what, std::strerror(errno)));
}

bool read_exact(std::ifstream& in, void* dst, uint64_t bytes) {
  in.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
  return static_cast<uint64_t>(in.gcount()) == bytes;
}

struct Entry {
  std::filesystem::path path;
  uint64_t bytes;
  std::filesystem::file_time_type last_used;
};

std::vector<Entry> list_entries(const std::filesystem::path& folder) {
  std::vector<Entry> out;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(folder, ec)) {
    if (item.path().extension() != kExtension || !item.is_regular_file(ec)) continue;
    out.push_back({item.path(), item.file_size(ec), item.last_write_time(ec)});
  }
  return out;
}

}  // namespace

std::string ModelIdentity::to_hex() const { return fmt::format("{:016x}", content_hash); }

Result<ModelIdentity> identify_model_file(const std::filesystem::path& model_path) {
  // A FIFO or device named as the model is refused before open().
  HEARTH_TRY(const RegularFile file, RegularFile::open(model_path.string()));
  std::ifstream in(model_path, std::ios::binary);
  if (!in) return io_error(model_path, "cannot open model");
  const uint64_t size = file.size();
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  const int64_t mtime_ns = file.mtime_ns();
  XXH3_64bits_update(state, &size, sizeof(size));
  XXH3_64bits_update(state, &mtime_ns, sizeof(mtime_ns));
  std::vector<char> buffer(static_cast<size_t>(std::min(size, kSampleBytes)));
  in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  XXH3_64bits_update(state, buffer.data(), static_cast<size_t>(in.gcount()));
  if (size > kSampleBytes) {
    in.clear();
    in.seekg(static_cast<std::streamoff>(size - kSampleBytes));
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    XXH3_64bits_update(state, buffer.data(), static_cast<size_t>(in.gcount()));
  }
  ModelIdentity id{XXH3_64bits_digest(state), size};
  XXH3_freeState(state);
  return id;
}

uint64_t hash_tokens(std::span<const int32_t> tokens, uint64_t seed) {
  return XXH3_64bits_withSeed(tokens.data(), tokens.size_bytes(), seed);
}

PrefixDiskCache::PrefixDiskCache(std::filesystem::path folder, uint64_t disk_budget_bytes, Logger logger)
    : folder_(std::move(folder)), budget_bytes_(disk_budget_bytes), logger_(std::move(logger)) {}

Status PrefixDiskCache::save(const ModelIdentity& model, const KvLayout& layout, std::span<const int32_t> tokens,
                             std::span<const uint8_t> payload) {
  const uint64_t total = sizeof(FileHeader) + tokens.size_bytes() + payload.size();
  if (total > budget_bytes_) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("prefix of {} tokens needs {} bytes on disk, over the disk budget of {} bytes",
                                  tokens.size(), total, budget_bytes_));
  }
  std::error_code ec;
  std::filesystem::create_directories(folder_, ec);
  if (ec) {
    return make_error(ErrorCode::Io, fmt::format("{}: cannot create cache folder: {}", folder_.string(), ec.message()));
  }
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.version = kFormatVersion;
  h.kv_type = static_cast<uint32_t>(layout.kv_type);
  h.model_hash = model.content_hash;
  h.model_size = model.file_size;
  h.n_layer = static_cast<uint32_t>(layout.n_layer);
  h.n_head_kv = static_cast<uint32_t>(layout.n_head_kv);
  h.head_dim = static_cast<uint32_t>(layout.head_dim);
  h.n_tokens = tokens.size();
  h.payload_bytes = payload.size();
  h.tokens_hash = hash_tokens(tokens, model.content_hash);
  h.payload_hash = XXH3_64bits(payload.data(), payload.size());
  h.header_hash = header_hash(h);

  const auto name = fmt::format("{}-{:016x}-{}{}", model.to_hex(), h.tokens_hash, tokens.size(), kExtension);
  const auto final_path = folder_ / name;
  // Written under a unique temporary name and renamed into place after
  // fsync: a reader never sees a half-written entry, and one dropped on an
  // error leaves nothing behind.
  HEARTH_TRY(AtomicFile out, AtomicFile::create(final_path.string()));
  const auto as_bytes = [](const void* p, size_t n) { return std::string_view(static_cast<const char*>(p), n); };
  HEARTH_CHECK(out.write(as_bytes(&h, sizeof(h))));
  HEARTH_CHECK(out.write(as_bytes(tokens.data(), tokens.size_bytes())));
  HEARTH_CHECK(out.write(as_bytes(payload.data(), payload.size())));
  HEARTH_CHECK(out.commit());
  logger_.debug("prefix cache: saved {} tokens ({} bytes) to {}", tokens.size(), total, final_path.string());
  return enforce_budget();
}

Result<std::optional<CachedPrefix>> PrefixDiskCache::load_longest_prefix(const ModelIdentity& model,
                                                                         const KvLayout& layout,
                                                                         std::span<const int32_t> tokens) {
  const std::string model_prefix = model.to_hex() + "-";
  std::optional<CachedPrefix> best;
  std::filesystem::path best_path;
  for (const auto& entry : list_entries(folder_)) {
    const std::string file_name = entry.path.filename().string();
    if (file_name.rfind(model_prefix, 0) != 0) continue;
    auto discard = [&](const std::string& why) {
      logger_.warn("prefix cache: deleting {}: {}", entry.path.string(), why);
      std::error_code ec;
      std::filesystem::remove(entry.path, ec);
    };
    std::ifstream in(entry.path, std::ios::binary);
    FileHeader h{};
    if (!in || !read_exact(in, &h, sizeof(h))) {
      discard("truncated header");
      continue;
    }
    if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0 || h.header_hash != header_hash(h)) {
      discard("bad magic or header checksum");
      continue;
    }
    if (h.version != kFormatVersion) {
      discard(fmt::format("format version {} (this Hearth reads {})", h.version, kFormatVersion));
      continue;
    }
    if (h.model_hash != model.content_hash || h.model_size != model.file_size) {
      discard("written for a different version of the model file");
      continue;
    }
    const KvLayout file_layout{static_cast<DType>(h.kv_type), h.n_layer, h.n_head_kv, h.head_dim};
    if (!(file_layout == layout)) continue;  // valid, just another cache configuration
    if (h.n_tokens == 0 || h.n_tokens > kMaxTokens || h.payload_bytes > entry.bytes ||
        sizeof(FileHeader) + h.n_tokens * 4 + h.payload_bytes != entry.bytes) {
      discard("sizes in the header do not match the file");
      continue;
    }
    if (h.n_tokens > tokens.size() || (best && h.n_tokens <= best->tokens.size())) continue;
    if (h.tokens_hash != hash_tokens(tokens.first(h.n_tokens), model.content_hash)) continue;
    CachedPrefix candidate;
    candidate.tokens.resize(h.n_tokens);
    candidate.payload.resize(h.payload_bytes);
    if (!read_exact(in, candidate.tokens.data(), h.n_tokens * 4) ||
        !read_exact(in, candidate.payload.data(), h.payload_bytes)) {
      discard("truncated data");
      continue;
    }
    if (hash_tokens(candidate.tokens, model.content_hash) != h.tokens_hash ||
        XXH3_64bits(candidate.payload.data(), candidate.payload.size()) != h.payload_hash) {
      discard("data checksum mismatch");
      continue;
    }
    if (!std::equal(candidate.tokens.begin(), candidate.tokens.end(), tokens.begin())) continue;
    best = std::move(candidate);
    best_path = entry.path;
  }
  if (best) {
    std::error_code ec;  // mark as recently used for the LRU order
    std::filesystem::last_write_time(best_path, std::filesystem::file_time_type::clock::now(), ec);
  }
  return best;
}

Status PrefixDiskCache::enforce_budget() {
  auto entries = list_entries(folder_);
  uint64_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.last_used < b.last_used; });
  for (const auto& e : entries) {
    if (total <= budget_bytes_) break;
    std::error_code ec;
    if (std::filesystem::remove(e.path, ec)) {
      total -= e.bytes;
      logger_.debug("prefix cache: evicted {} ({} bytes) to stay within {} bytes", e.path.string(), e.bytes,
                    budget_bytes_);
    }
  }
  return {};
}

Status PrefixDiskCache::forget_model(const ModelIdentity& model) {
  const std::string model_prefix = model.to_hex() + "-";
  for (const auto& e : list_entries(folder_)) {
    if (e.path.filename().string().rfind(model_prefix, 0) != 0) continue;
    std::error_code ec;
    std::filesystem::remove(e.path, ec);
  }
  return {};
}

uint64_t PrefixDiskCache::bytes_on_disk() const {
  uint64_t total = 0;
  for (const auto& e : list_entries(folder_)) total += e.bytes;
  return total;
}

size_t PrefixDiskCache::entry_count() const { return list_entries(folder_).size(); }

}  // namespace hearth::kv
