// Choosing the template a model runs with: its own when it works, a built-in
// one (with a warning saying why) when it is missing or unusable.
#include <fmt/format.h>

#include "hearth/engine/chat/chat_template.h"

namespace hearth::chat {
namespace {

// Probe conversations, most demanding first. Templates that enforce a shape
// (strict user/assistant alternation, no system role) raise_exception on the
// ones they reject; a template is usable if it accepts any of them.
std::vector<std::vector<ChatMessage>> probe_conversations() {
  const ChatMessage system{"system", "You are a helpful assistant.", {}};
  const ChatMessage user1{"user", "Hello!", {}};
  const ChatMessage assistant{"assistant", "Hi! How can I help you today?", {}};
  const ChatMessage user2{"user", "What is 2 + 2?", {}};
  return {{system, user1, assistant, user2}, {user1, assistant, user2}, {user1}};
}

// Empty when `chat_template` renders a probe; else the error of the first
// probe (the fullest conversation), which names the real problem.
std::string probe_failure(const ChatTemplate& chat_template, const Limits& limits) {
  RenderOptions options;
  options.generation_prompt = GenerationPrompt::Add;
  options.config.limits = limits;
  std::string first_error;
  for (const auto& conversation : probe_conversations()) {
    auto rendered = render_chat(chat_template, conversation, options);
    if (rendered.ok()) return {};
    if (first_error.empty()) first_error = rendered.error().message;
    // Only a refusal of this conversation's shape is worth another probe;
    // limits, syntax and unsupported features fail every conversation alike.
    if (raised_message(rendered.error()).empty()) break;
  }
  return first_error;
}

ModelTemplateChoice use_builtin(const std::vector<std::string>& vocab_tokens, const std::string& why) {
  const BuiltinTemplate kind = choose_builtin_template(vocab_tokens);
  // The built-in sources are fixed and parsed by the tests of every build.
  ChatTemplate builtin = ChatTemplate::builtin(kind).value();
  return {std::move(builtin), fmt::format("{}; using the built-in {} template", why, to_string(kind))};
}

}  // namespace

ModelTemplateChoice choose_model_template(std::optional<std::string_view> source,
                                          const std::vector<std::string>& vocab_tokens, const Limits& limits) {
  if (!source || source->empty()) return use_builtin(vocab_tokens, "the model has no chat template");
  auto parsed = ChatTemplate::from_source(*source, limits);
  if (!parsed.ok()) {
    return use_builtin(vocab_tokens, fmt::format("the model's chat template cannot be used ({})", parsed.error().message));
  }
  const std::string failure = probe_failure(*parsed, limits);
  if (!failure.empty()) {
    return use_builtin(vocab_tokens, fmt::format("the model's chat template cannot be used ({})", failure));
  }
  return {std::move(parsed).value(), std::string()};
}

}  // namespace hearth::chat
