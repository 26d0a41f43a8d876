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

#include <hearth/engine/tokenizer/tokenizer.h>

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

// Parses "1 2 3" (spaces, commas or newlines) into token ids.
Result<std::vector<int32_t>> parse_ids(const std::string& text);

enum class PromptMode { Raw, Chat };

struct ChatMessage {
  std::string role;
  std::string content;
};

// Text in and out of a model: its tokenizer and chat template.
class TextCodec {
 public:
  static Result<TextCodec> from_model(const model::Model& model);

  const tokenizer::Tokenizer& tokenizer() const { return tokenizer_; }
  std::vector<int32_t> end_of_generation() const { return tokenizer_.vocab().eog; }
  bool has_template() const { return !template_.empty(); }

  // Raw: the text as is, BOS as the vocabulary says. Chat: the text as one
  // user turn through the model's chat template.
  Result<std::vector<int32_t>> encode(const std::string& text, PromptMode mode) const;
  // The whole conversation rendered with the template (and the generation
  // prompt), tokenized with special tokens parsed.
  Result<std::vector<int32_t>> encode_chat(const std::vector<ChatMessage>& messages) const;
  Result<std::string> render_chat(const std::vector<ChatMessage>& messages) const;

 private:
  explicit TextCodec(tokenizer::Tokenizer t) : tokenizer_(std::move(t)) {}
  tokenizer::Tokenizer tokenizer_;
  std::string template_;
};

// Token ids to text straight from the vocabulary's pieces (SentencePiece
// U+2581 spaces and <0xNN> byte tokens), for when the tokenizer is unavailable.
class PieceFallback {
 public:
  static Result<PieceFallback> from_model(const model::Model& model);
  std::string piece(int32_t token) const;
  std::vector<int32_t> end_of_generation() const { return eos_ >= 0 ? std::vector<int32_t>{eos_} : std::vector<int32_t>{}; }

 private:
  std::vector<std::string> pieces_;
  int32_t eos_ = -1;
};

}  // namespace hearth::cli
