// Read-only bytes of a file: an mmap'ed view or an in-memory copy.
#pragma once

#include <hearth/engine/core/result.h>

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

 private:
  void release();

  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
  void* mapping_ = nullptr;        // non-null when mmap'ed
  std::vector<uint8_t> buffer_;    // used when read into memory
};

}  // namespace hearth::gguf
