// Rendering a conversation into a model's prompt text with its chat template,
// and the built-in templates used when a model ships none.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/engine/chat/template.h"
#include "hearth/engine/chat/value.h"
#include "hearth/core/result.h"

namespace hearth::chat {

struct ChatMessage {
  std::string role;     // "system", "user", "assistant", "tool", ...
  std::string content;
  // Further fields some templates read (tool_calls, tool_call_id, name, ...):
  // an object whose keys are added to the message, or undefined for none.
  Value extra{};
  // A reply's reasoning, kept apart from its content. Templates see it as
  // `reasoning_content` (Qwen3, DeepSeek-R1) and `thinking` (gpt-oss,
  // SmolLM3) and decide themselves whether an earlier turn's reasoning is
  // rendered again; empty for none.
  std::string reasoning{};
};

enum class GenerationPrompt { Omit, Add };  // open an assistant turn at the end?

struct RenderOptions {
  GenerationPrompt generation_prompt = GenerationPrompt::Add;
  std::string bos_token;
  std::string eos_token;
  // Further template variables (tools, documents, date_string, ...): an object
  // whose keys are added to the context, or undefined for none.
  Value extra_context;
  RenderConfig config;  // sandbox limits and the clock for strftime_now
};

// Completion: plain text for a model that is not a chat model (the bundled
// demo): the user's messages as lines, each reply continuing its message, no
// system role.
enum class BuiltinTemplate { ChatML, Llama2, Llama3, Mistral, Gemma, Phi3, Completion };

const char* to_string(BuiltinTemplate kind);
std::string_view builtin_template_source(BuiltinTemplate kind);

// Picks the fallback format from the vocabulary's token strings: the marker
// tokens each format needs (<|im_start|>, <|start_header_id|>,
// <start_of_turn>, <|user|> with <|assistant|>, [INST]) reveal what the model
// was tuned on. Completion when there is none: <s> and </s> alone say
// nothing (every SentencePiece vocabulary has them; Llama 2's [INST] is plain
// text), and a model converted without a template and without chat markers
// is most likely a completion model. The Llama 2 format stays available by
// name.
BuiltinTemplate choose_builtin_template(const std::vector<std::string>& vocab_tokens);

class ChatTemplate {
 public:
  static Result<ChatTemplate> from_source(std::string_view source, const Limits& limits = {});
  static Result<ChatTemplate> builtin(BuiltinTemplate kind);

  const Template& compiled() const { return template_; }
  std::optional<BuiltinTemplate> builtin_kind() const { return builtin_; }

 private:
  ChatTemplate(Template t, std::optional<BuiltinTemplate> kind) : template_(std::move(t)), builtin_(kind) {}
  Template template_;
  std::optional<BuiltinTemplate> builtin_;
};

// The messages as the template sees them: a list of {role, content, ...extra}.
Value messages_to_value(const std::vector<ChatMessage>& messages);

// Context: messages, add_generation_prompt, bos_token, eos_token, then the
// extra context. Errors as Template::render, and LimitExceeded when the
// conversation has more than options.config.limits.max_messages messages or
// its strings (messages and extra context) pass max_context_bytes.
Result<std::string> render_chat(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages,
                                const RenderOptions& options);

// The template a model is run with.
struct ModelTemplateChoice {
  ChatTemplate chat_template;
  std::string warning;  // empty when the model's own template is used; else why not, for the user
};

// Picks the chat template for a model: its own (`source`, the GGUF's
// tokenizer.chat_template; nullopt when it has none) when that parses and
// renders a small probe conversation (system, user, assistant, user, with the
// generation prompt) within `limits`; otherwise the built-in template that
// choose_builtin_template(vocab_tokens) picks, with a warning naming the
// cause ("the model's chat template cannot be used (template line 3: ...);
// using the built-in ChatML template"). A template that refuses the probe
// with raise_exception (many reject a system message or a role order) is
// tried again without the system message, then with one user message, before
// it is judged unusable. Never fails: a model always gets a template.
ModelTemplateChoice choose_model_template(std::optional<std::string_view> source,
                                          const std::vector<std::string>& vocab_tokens, const Limits& limits = {});

}  // namespace hearth::chat
