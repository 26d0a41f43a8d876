// Rendering a conversation into a model's prompt text with its chat template,
// and the built-in templates used when a model ships none.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/engine/chat/template.h"
#include "hearth/engine/chat/value.h"
#include "hearth/engine/core/result.h"

namespace hearth::chat {

struct ChatMessage {
  std::string role;     // "system", "user", "assistant", "tool", ...
  std::string content;
  // Further fields some templates read (tool_calls, tool_call_id, name, ...):
  // an object whose keys are added to the message, or undefined for none.
  Value extra{};
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

enum class BuiltinTemplate { ChatML, Llama2, Llama3, Mistral, Gemma, Phi3 };

const char* to_string(BuiltinTemplate kind);
std::string_view builtin_template_source(BuiltinTemplate kind);

// Picks the fallback format from the vocabulary's token strings: the special
// tokens each format needs (<|im_start|>, <|start_header_id|>,
// <start_of_turn>, <|user|>, [INST], <s>) reveal what the model was tuned on.
// ChatML when nothing matches.
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
// extra context. Errors as Template::render.
Result<std::string> render_chat(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages,
                                const RenderOptions& options);

}  // namespace hearth::chat
