// What the engine verbs of hearth-cli share: choosing a backend from the
// flags, loading a model with progress on stderr, and turning token ids into
// text.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/engine/core/result.h>
#include <hearth/engine/model/model.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "args.h"

namespace hearth::cli {

// Flags every engine verb accepts: --backend, --threads, --kv-type, --gpu-layers.
std::vector<FlagSpec> engine_flags();

struct EngineSetup {
  std::unique_ptr<backend::Backend> backend;
  std::unique_ptr<model::Model> model;
  DType kv_type = DType::F16;
  int threads = 2;
};

// Loads --model with the backend the flags ask for. `n_ctx` sizes the KV
// cache included in the memory check. Errors are one line for stderr.
Result<EngineSetup> setup_engine(const ParsedArgs& args, int64_t n_ctx);

enum class PromptMode { Raw, Chat };
// Text to prompt ids with the model's tokenizer (BOS as the vocabulary says);
// Chat mode wraps the text as one user turn with the model's chat template.
Result<std::vector<int32_t>> tokenize_prompt(const model::Model& model, const std::string& text, PromptMode mode);

// Parses "1 2 3" (spaces, commas or newlines) into token ids.
Result<std::vector<int32_t>> parse_ids(const std::string& text);

// Token pieces to text from the vocabulary stored in the model file
// (SentencePiece U+2581 spaces, <0xNN> byte tokens, byte-level BPE's
// printable-byte mapping).
class PieceDecoder {
 public:
  static Result<PieceDecoder> from_model(const model::Model& model);
  std::string piece(int32_t token) const;
  bool is_control(int32_t token) const;
  int32_t bos() const { return bos_; }
  int32_t eos() const { return eos_; }
  std::vector<int32_t> end_of_generation() const { return eog_; }

 private:
  std::vector<std::string> pieces_;
  std::vector<int32_t> types_;
  bool byte_level_ = false;
  int32_t bos_ = -1;
  int32_t eos_ = -1;
  std::vector<int32_t> eog_;
};

}  // namespace hearth::cli
