// GGUF reader: parses and validates a model file's header, metadata and
// tensor infos, and maps tensor data read-only. Nothing in the file is
// trusted: every count, length, offset and shape is checked before use.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/gguf/value.h>
#include <hearth/engine/quant/types.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::gguf {

inline constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr uint32_t kMaxDims = 4;

struct TensorInfo {
  std::string name;
  DType type = DType::F32;
  uint32_t n_dims = 0;
  // Shape, innermost (contiguous) dimension first, as in GGUF: a weight
  // matrix of `rows` rows of `cols` elements has dims {cols, rows, 1, 1}.
  std::array<int64_t, kMaxDims> dims{1, 1, 1, 1};
  uint64_t offset = 0;  // from the start of the data section
  uint64_t bytes = 0;   // size of the tensor's data

  int64_t elements() const { return dims[0] * dims[1] * dims[2] * dims[3]; }
  int64_t row_length() const { return dims[0]; }
  int64_t rows() const { return dims[1] * dims[2] * dims[3]; }
};

enum class LoadMode {
  Mmap,    // map the file read-only; tensor data is used in place
  Memory,  // read the whole file into memory (no mapping)
};

// Hard caps that keep a hostile file from making Hearth allocate gigabytes.
struct ReaderLimits {
  uint64_t max_string_bytes = 64ull << 20;     // one string
  uint64_t max_array_elements = 1ull << 26;    // one array (67M)
  uint64_t max_metadata_bytes = 1ull << 30;    // parsed metadata in all
  uint64_t max_tensors = 1ull << 20;
  uint64_t max_kv = 1ull << 20;
  uint32_t max_array_depth = 4;                // arrays of arrays of ...
  uint64_t max_block_count = 1024;             // layers of a model
};

class GgufFile {
 public:
  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;
  ~GgufFile();

  // Opens and validates `path`. Errors name the file, the key or tensor at
  // fault and the offending numbers.
  static Result<GgufFile> open(const std::filesystem::path& path, LoadMode mode = LoadMode::Mmap,
                               const ReaderLimits& limits = {});
  // Parses an in-memory image (tests, fuzzing). The bytes are copied.
  static Result<GgufFile> from_bytes(std::span<const uint8_t> bytes, std::string name = "<memory>",
                                     const ReaderLimits& limits = {});

  const std::filesystem::path& path() const;
  // An error naming the file when a mapped file was truncated or rewritten
  // since it was opened: its pages can no longer be read safely (SIGBUS).
  // Always fine for a file read into memory.
  Status check_unchanged() const;
  // Device and inode of the opened file (0 for from_bytes).
  uint64_t file_device() const;
  uint64_t file_inode() const;
  uint32_t version() const;
  uint64_t file_size() const;
  uint64_t alignment() const;
  uint64_t data_offset() const;  // start of the tensor data section

  // Metadata in file order.
  const std::vector<KeyValue>& metadata() const;
  const Value* find(std::string_view key) const;

  // Typed accessors. A missing key is NotFound; a value of the wrong type
  // (a string where a number is due, an array of the wrong element type) is
  // InvalidFormat naming the key and both types.
  Result<std::string> get_string(std::string_view key) const;
  Result<uint64_t> get_uint(std::string_view key) const;  // any integer type, >= 0
  Result<int64_t> get_int(std::string_view key) const;    // any integer type
  Result<double> get_float(std::string_view key) const;   // float or integer
  Result<bool> get_bool(std::string_view key) const;
  Result<std::vector<std::string>> get_string_array(std::string_view key) const;
  Result<std::vector<double>> get_float_array(std::string_view key) const;
  Result<std::vector<int64_t>> get_int_array(std::string_view key) const;
  // Length of an array value, without copying it.
  Result<uint64_t> get_array_size(std::string_view key) const;

  // Optional variants: nullopt when absent, an error only when present but invalid.
  Result<std::optional<uint64_t>> find_uint(std::string_view key) const;
  Result<std::optional<double>> find_float(std::string_view key) const;
  Result<std::optional<bool>> find_bool(std::string_view key) const;
  Result<std::optional<std::string>> find_string(std::string_view key) const;

  // `general.architecture`, e.g. "llama".
  Result<std::string> architecture() const;
  // `tokenizer.chat_template` when present.
  std::optional<std::string> chat_template() const;

  const std::vector<TensorInfo>& tensors() const;
  const TensorInfo* find_tensor(std::string_view name) const;
  // The tensor's bytes, inside the mapped or loaded file.
  std::span<const uint8_t> tensor_data(const TensorInfo& tensor) const;

 private:
  struct Impl;
  explicit GgufFile(std::unique_ptr<Impl> impl);
  static Result<GgufFile> finish_open(std::unique_ptr<Impl> impl, const ReaderLimits& limits);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::gguf
