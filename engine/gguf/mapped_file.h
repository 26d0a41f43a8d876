// Read-only bytes of a file: an mmap'ed view or an in-memory copy.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace hearth::gguf {

class FileBytes {
 public:
  FileBytes() = default;
  FileBytes(FileBytes&& other) noexcept;
  FileBytes& operator=(FileBytes&& other) noexcept;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes();

  enum class Mode { Map, Read };
  static Result<FileBytes> open(const std::filesystem::path& path, Mode mode);
  static FileBytes copy_of(const uint8_t* data, uint64_t size);

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }

  // For a mapping: an error when the file was truncated or rewritten since it
  // was mapped, or a read already touched a page past a truncated end (that
  // read got zeros instead of SIGBUS: mapping_guard.h). A file
  // replaced by rename keeps the old inode alive and is not a change.
  Status check_unchanged(const std::filesystem::path& path) const;
  // The mapped file's identity, so a second open of the path can tell
  // whether it still names the same file.
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }

 private:
  void release();

  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  void* mapping_ = nullptr;        // non-null when mmap'ed
  std::vector<uint8_t> buffer_;    // used when read into memory
  int fd_ = -1;                    // kept open while mapped, for check_unchanged
  int guard_slot_ = -1;            // mapping_guard.h: a read past a truncated end
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
  int64_t mtime_ns_ = 0;
};

}  // namespace hearth::gguf
