// Bounds-checked little-endian reads over an untrusted byte range.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace hearth::gguf {

class ByteCursor {
 public:
  ByteCursor(const uint8_t* data, uint64_t size) : data_(data), size_(size) {}

  uint64_t position() const { return pos_; }
  uint64_t remaining() const { return size_ - pos_; }

  template <typename T>
  std::optional<T> read() {
    if (remaining() < sizeof(T)) return std::nullopt;
    T value;
    std::memcpy(&value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  // Reads `length` bytes as a string; nullopt when the range runs past the end.
  std::optional<std::string> read_bytes(uint64_t length) {
    if (length > remaining()) return std::nullopt;
    std::string out(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(length));
    pos_ += length;
    return out;
  }

 private:
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
};

}  // namespace hearth::gguf
