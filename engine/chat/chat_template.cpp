#include "hearth/engine/chat/chat_template.h"

#include <fmt/format.h>

namespace hearth::chat {

Result<ChatTemplate> ChatTemplate::from_source(std::string_view source, const Limits& limits) {
  HEARTH_TRY(Template t, Template::parse(source, limits));
  return ChatTemplate(std::move(t), std::nullopt);
}

Result<ChatTemplate> ChatTemplate::builtin(BuiltinTemplate kind) {
  HEARTH_TRY(Template t, Template::parse(builtin_template_source(kind)));
  return ChatTemplate(std::move(t), kind);
}

Value messages_to_value(const std::vector<ChatMessage>& messages) {
  std::vector<Value> items;
  items.reserve(messages.size());
  for (const auto& m : messages) {
    ObjectData obj;
    obj.set("role", Value::string(m.role));
    obj.set("content", Value::string(m.content));
    if (!m.reasoning.empty()) {
      obj.set("reasoning_content", Value::string(m.reasoning));
      obj.set("thinking", Value::string(m.reasoning));
    }
    if (m.extra.is_object()) {
      for (const auto& [key, value] : m.extra.as_object().items()) obj.set(key, value);
    }
    items.push_back(Value::object(std::move(obj)));
  }
  return Value::array(std::move(items));
}

namespace {

// Bytes of every string (keys included) in `v`; the walk stops early once
// `budget` is passed, so measuring a huge context costs no more than the cap.
size_t string_bytes(const Value& v, size_t budget, uint32_t depth = 0) {
  if (depth > 512) return budget + 1;  // deeper than any limit allows; the renderer reports it
  switch (v.kind()) {
    case ValueKind::String: return v.as_string().size();
    case ValueKind::Array: {
      size_t total = 0;
      for (const auto& item : v.as_array()) {
        total += string_bytes(item, budget, depth + 1);
        if (total > budget) break;
      }
      return total;
    }
    case ValueKind::Object: {
      size_t total = 0;
      for (const auto& [key, item] : v.as_object().items()) {
        total += key.size() + string_bytes(item, budget, depth + 1);
        if (total > budget) break;
      }
      return total;
    }
    default: return 0;
  }
}

Status check_conversation(const std::vector<ChatMessage>& messages, const RenderOptions& options) {
  const Limits& limits = options.config.limits;
  if (messages.size() > limits.max_messages) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("the conversation has {} messages, more than the limit of {} (max_messages)",
                                  messages.size(), limits.max_messages));
  }
  size_t total = options.bos_token.size() + options.eos_token.size();
  for (const auto& m : messages) {
    if (total > limits.max_context_bytes) break;
    total += m.role.size() + m.content.size() + 2 * m.reasoning.size() + string_bytes(m.extra, limits.max_context_bytes);
  }
  if (total <= limits.max_context_bytes) total += string_bytes(options.extra_context, limits.max_context_bytes);
  if (total > limits.max_context_bytes) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("the conversation and its context exceed {} bytes (max_context_bytes)",
                                  limits.max_context_bytes));
  }
  return {};
}

}  // namespace

Result<std::string> render_chat(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages,
                                const RenderOptions& options) {
  // Checked before the context is built: a conversation too big to render
  // should not first be copied.
  HEARTH_CHECK(check_conversation(messages, options));
  ObjectData context;
  context.set("messages", messages_to_value(messages));
  context.set("add_generation_prompt", Value::boolean(options.generation_prompt == GenerationPrompt::Add));
  context.set("bos_token", Value::string(options.bos_token));
  context.set("eos_token", Value::string(options.eos_token));
  if (options.extra_context.is_object()) {
    for (const auto& [key, value] : options.extra_context.as_object().items()) context.set(key, value);
  }
  return chat_template.compiled().render(Value::object(std::move(context)), options.config);
}

}  // namespace hearth::chat
