// Parses the GGUF header, metadata and tensor infos from untrusted bytes.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/gguf/reader.h>

#include <string>
#include <vector>

namespace hearth::gguf {

struct ParsedHeader {
  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;
  std::vector<KeyValue> metadata;
  std::vector<TensorInfo> tensors;
};

// `name` prefixes every error message (usually the file path).
Result<ParsedHeader> parse_header(const uint8_t* data, uint64_t size, const std::string& name,
                                  const ReaderLimits& limits);

}  // namespace hearth::gguf
