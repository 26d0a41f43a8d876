// GGUF writer: metadata and tensors with correct alignment. Streaming: the
// header (metadata + tensor infos) is written first, then each tensor's data
// in the declared order, so a quantizer never holds the whole model twice.
#pragma once

#include <hearth/core/file_io.h>
#include <hearth/core/result.h>
#include <hearth/engine/gguf/value.h>
#include <hearth/engine/quant/types.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace hearth::gguf {

Value make_string(std::string s);
Value make_uint32(uint32_t v);
Value make_uint64(uint64_t v);
Value make_int32(int32_t v);
Value make_float32(float v);
Value make_bool(bool v);
Value make_string_array(const std::vector<std::string>& items);
Value make_float32_array(const std::vector<float>& items);
Value make_int32_array(const std::vector<int32_t>& items);

struct TensorSpec {
  std::string name;
  DType type = DType::F32;
  std::vector<int64_t> dims;  // innermost first, 1..4 entries
};

class GgufWriter {
 public:
  explicit GgufWriter(uint64_t alignment = 32);
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;
  ~GgufWriter();

  void add_metadata(std::string key, Value value);
  // Declares a tensor; its data is written later with write_tensor_data, in
  // declaration order.
  Status add_tensor(TensorSpec spec);

  // Writes the header to a temporary file next to `path`; finish() renames it
  // over `path`, so an existing file (perhaps the input being converted) is
  // untouched until the new one is complete, and a writer dropped before
  // finish() leaves nothing behind. After this, metadata and tensor
  // declarations are frozen.
  Status begin(const std::filesystem::path& path);
  // Writes the next declared tensor's data; its size must match the spec.
  Status write_tensor_data(std::span<const uint8_t> bytes);
  // Checks that every tensor was written, flushes, syncs and renames the file
  // into place.
  Status finish();

  // Convenience: whole file in one call (tests).
  static Status write_file(const std::filesystem::path& path, std::vector<KeyValue> metadata,
                           const std::vector<std::pair<TensorSpec, std::vector<uint8_t>>>& tensors,
                           uint64_t alignment = 32);

 private:
  uint64_t alignment_;
  std::vector<KeyValue> metadata_;
  std::vector<TensorSpec> tensors_;
  std::vector<uint64_t> tensor_bytes_;
  size_t next_tensor_ = 0;
  uint64_t written_data_ = 0;
  std::FILE* file_ = nullptr;
  std::optional<AtomicFile> target_;
  std::filesystem::path path_;
};

}  // namespace hearth::gguf
