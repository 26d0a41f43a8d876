// The embedding model document libraries use, as the app provides it (the
// engine's embedding runtime on a GGUF model). Called on the storage thread only.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::ui {

class PassageEmbedding {
 public:
  virtual ~PassageEmbedding() = default;
  // Names the model (its file's name and size): a library remembers the model
  // its vectors came from, and vectors of another model are not compared.
  virtual std::string identity() const = 0;
  virtual std::int64_t dim() const = 0;
  // One L2-normalised vector per passage (the document side).
  virtual Result<std::vector<std::vector<float>>> embed_passages(std::span<const std::string> texts) = 0;
  // The query side (with the model's query instruction, if it has one).
  virtual Result<std::vector<float>> embed_query(std::string_view text) = 0;
};

}  // namespace hearth::ui
