// The file a download writes into: "<destination>.part", appended to with
// every write checked, space reserved up front, and committed into place with
// fsync + rename + fsync of the folder so a crash leaves either the old state
// or the complete file, never a torn one.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>

namespace hearth::models {

enum class PartOpenMode {
  Keep,      // adopt what an earlier run left
  Truncate,  // start from zero
};

class PartFile {
 public:
  PartFile() = default;
  PartFile(PartFile&& other) noexcept;
  PartFile& operator=(PartFile&& other) noexcept;
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;
  ~PartFile();

  static Result<PartFile> open(const std::filesystem::path& path, PartOpenMode mode);

  bool is_open() const { return fd_ >= 0; }
  const std::filesystem::path& path() const { return path_; }
  uint64_t size() const { return size_; }

  // Appends all of `data` or reports why not. `written` receives the bytes
  // that did reach the file (a full disk can accept a prefix), so the caller's
  // running hash stays in step with the file.
  Status append(std::span<const uint8_t> data, uint64_t* written);
  Status truncate_to_zero();
  // Reserves blocks up to `total_bytes` without changing the file size, so a
  // full disk shows up before the download rather than in the middle.
  // Succeeds silently where the file system cannot reserve.
  Status reserve(uint64_t total_bytes);
  Status sync();
  void close();

  // Test hook standing in for a small disk: writes past `limit` bytes of file
  // size fail as a full disk would (ENOSPC), after writing what fits.
  void set_size_limit(std::optional<uint64_t> limit) { size_limit_ = limit; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::filesystem::path path_;
  std::optional<uint64_t> size_limit_;
};

// fsyncs `part` (closed by the caller), renames it to `destination` and
// fsyncs the folder so the rename itself is durable.
Status commit_part_file(const std::filesystem::path& part, const std::filesystem::path& destination);

}  // namespace hearth::models
