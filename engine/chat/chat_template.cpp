#include "hearth/engine/chat/chat_template.h"

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
    if (m.extra.is_object()) {
      for (const auto& [key, value] : m.extra.as_object().items()) obj.set(key, value);
    }
    items.push_back(Value::object(std::move(obj)));
  }
  return Value::array(std::move(items));
}

Result<std::string> render_chat(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages,
                                const RenderOptions& options) {
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
