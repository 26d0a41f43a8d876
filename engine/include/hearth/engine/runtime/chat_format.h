// How a conversation becomes a model's prompt tokens: the one rule that the
// app, hearth-cli and the local server share.
//
// Which template: chat::choose_model_template's rule (the model's own when it
// parses and renders a probe conversation within the sandbox limits; else
// the built-in format its vocabulary's marker tokens reveal; else plain text
// for a completion model such as the bundled demo). A fallback is never
// silent: `note()` says what is used and why.
//
// Safety: the template's own text is parsed for special tokens; message text
// never is. The messages are rendered once with a unique placeholder in
// place of each content, so the rendering shows which bytes the template
// wrote and which came from a message; the tokenizer then parses control
// tokens only outside the messages' bytes. A conversation whose messages do
// not spell a special token tokenizes exactly as a plain special-parsing
// tokenization of the rendered text.
#pragma once

#include <hearth/engine/chat/chat_template.h>
#include <hearth/engine/chat/reasoning.h>
#include <hearth/core/log.h>
#include <hearth/core/result.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::runtime {

enum class TemplateOrigin { Model, Builtin, Completion };

// A rendered prompt with the byte ranges that came from message text.
struct RenderedPrompt {
  std::string text;
  std::vector<tokenizer::ByteRange> message_bytes;  // sorted, non-overlapping
};

class ChatFormat {
 public:
  // `tokenizer` must outlive the format. `source`: the model's template, if any.
  static ChatFormat choose(const tokenizer::Tokenizer& tokenizer, std::optional<std::string_view> source,
                           const Logger& logger = {});
  static ChatFormat from_model(const gguf::GgufFile& file, const tokenizer::Tokenizer& tokenizer,
                               const Logger& logger = {});
  // A given template (hearth-cli template --template-file).
  static ChatFormat with_template(const tokenizer::Tokenizer& tokenizer, chat::ChatTemplate chat_template);

  // The prompt text and where the messages' bytes are in it.
  Result<RenderedPrompt> render(const std::vector<chat::ChatMessage>& messages,
                                const chat::RenderOptions& options) const;
  // `variables`: further template variables (an object, e.g. the reasoning
  // switch of reasoning_variables), or undefined.
  Result<RenderedPrompt> render(const std::vector<chat::ChatMessage>& messages, chat::GenerationPrompt prompt,
                                const chat::Value& variables = {}) const;
  // The prompt's ids: BOS as the vocabulary wants it when the template did
  // not write it, special tokens parsed in the template's text only.
  Result<std::vector<int32_t>> encode(const std::vector<chat::ChatMessage>& messages, chat::GenerationPrompt prompt,
                                      const chat::Value& variables = {}) const;
  std::vector<int32_t> encode(const RenderedPrompt& prompt) const;
  // Text spliced into a context as is (no BOS, no special tokens).
  std::vector<int32_t> encode_literal(std::string_view text) const;

  // Ids that end a reply: the vocabulary's end-of-generation set and EOS.
  std::vector<int32_t> end_of_generation() const;

  TemplateOrigin origin() const { return origin_; }
  // What was chosen and, for a fallback, why ("built-in chatml template: the
  // model has none"); for the status line and logs.
  const std::string& note() const { return note_; }
  const chat::ChatTemplate& chat_template() const { return template_; }
  // How replies mark their reasoning and the switch the template offers.
  const chat::ReasoningStyle& reasoning() const { return reasoning_; }
  const tokenizer::Tokenizer& tokenizer() const { return *tokenizer_; }
  // The texts of BOS and EOS (template variables bos_token, eos_token).
  std::string bos_text() const;
  std::string eos_text() const;

 private:
  ChatFormat(const tokenizer::Tokenizer& tokenizer, chat::ChatTemplate chat_template, TemplateOrigin origin,
             std::string note)
      : tokenizer_(&tokenizer), template_(std::move(chat_template)), origin_(origin), note_(std::move(note)) {
    if (origin_ == TemplateOrigin::Model) reasoning_ = detect_style(tokenizer, template_);
  }
  static chat::ReasoningStyle detect_style(const tokenizer::Tokenizer& tokenizer,
                                           const chat::ChatTemplate& chat_template);

  const tokenizer::Tokenizer* tokenizer_;
  chat::ChatTemplate template_;
  TemplateOrigin origin_;
  std::string note_;
  chat::ReasoningStyle reasoning_;
};

}  // namespace hearth::runtime
