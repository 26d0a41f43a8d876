// What the engine verbs of hearth-cli share: choosing a backend from the
// flags, loading a model with progress on stderr, and turning token ids into
// text.
#pragma once

#include <hearth/engine/backend/backend.h>
#include <hearth/core/result.h>
#include <hearth/engine/chat/chat_template.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/chat_format.h>
#include <hearth/engine/sampling/sampler.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <hearth/engine/tokenizer/tokenizer.h>

#include "args.h"

namespace hearth::cli {

// Flags every engine verb accepts: --backend, --threads, --kv-type, --gpu-layers.
std::vector<FlagSpec> engine_flags();

// Sampling flags of the verbs that generate: --temp, --top-k, --top-p,
// --min-p, --repeat-penalty, --seed.
std::vector<FlagSpec> sampling_flags();
// Reads them (defaults: temp 0.8, top-k 40, top-p 0.95, min-p 0.05, no
// repetition penalty, seed 0); an out-of-range value is InvalidArgument.
Result<sampling::SamplerConfig> parse_sampling(const ParsedArgs& args);

struct EngineSetup {
  std::unique_ptr<backend::Backend> backend;
  // What the backend runs on, or why Vulkan was not used ("Vulkan: ...;
  // running on CPU"); printed on stderr, never silent.
  std::string backend_note;
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

using ChatMessage = chat::ChatMessage;

// Text in and out of a model: its tokenizer and chat format (the rule the app
// and the server share: runtime/chat_format.h).
class TextCodec {
 public:
  // A fallback chat format is said on stderr, never silent.
  static Result<TextCodec> from_model(const model::Model& model);

  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }
  const runtime::ChatFormat& format() const { return *format_; }
  std::vector<int32_t> end_of_generation() const { return format_->end_of_generation(); }

  // Raw: the text as is, BOS as the vocabulary says. Chat: the text as one
  // user turn through the chat format (message text never becomes control
  // tokens).
  Result<std::vector<int32_t>> encode(const std::string& text, PromptMode mode) const;

 private:
  TextCodec(std::unique_ptr<tokenizer::Tokenizer> t, std::unique_ptr<runtime::ChatFormat> f)
      : tokenizer_(std::move(t)), format_(std::move(f)) {}
  // Behind pointers: the format refers to the tokenizer, and codecs move.
  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::unique_ptr<runtime::ChatFormat> format_;
};

}  // namespace hearth::cli
