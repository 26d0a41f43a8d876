#include "hearth/engine/runtime/chat_format.h"

#include <fmt/format.h>

#include <algorithm>

namespace hearth::runtime {
namespace {

// Private-use code points around a message number: no template writes them.
constexpr std::string_view kOpen = "\xEE\x80\x80\xEE\x80\x81";   // U+E000 U+E001
constexpr std::string_view kClose = "\xEE\x80\x82";              // U+E002
constexpr std::string_view kWordJoiner = "\xE2\x81\xA0";        // U+2060

std::string placeholder(size_t index) { return fmt::format("{}{}{}", kOpen, index, kClose); }

std::string_view trimmed(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

enum class Fill { AsIs, Trimmed };

// Replaces each placeholder in `shaped` by its message's content; false when
// a placeholder is malformed or names no message.
bool fill(std::string_view shaped, const std::vector<chat::ChatMessage>& messages, Fill mode, RenderedPrompt& out) {
  out.text.clear();
  out.message_bytes.clear();
  size_t at = 0;
  while (true) {
    const size_t open = shaped.find(kOpen, at);
    out.text.append(shaped.substr(at, open == std::string_view::npos ? std::string_view::npos : open - at));
    if (open == std::string_view::npos) return true;
    const size_t digits = open + kOpen.size();
    const size_t close = shaped.find(kClose, digits);
    if (close == std::string_view::npos || close == digits || close - digits > 9) return false;
    size_t index = 0;
    for (size_t i = digits; i < close; ++i) {
      if (shaped[i] < '0' || shaped[i] > '9') return false;
      index = index * 10 + static_cast<size_t>(shaped[i] - '0');
    }
    // Two fields per message: content, then reasoning.
    if (index >= 2 * messages.size()) return false;
    const chat::ChatMessage& m = messages[index / 2];
    std::string_view content = index % 2 == 0 ? m.content : m.reasoning;
    if (mode == Fill::Trimmed) content = trimmed(content);
    if (!content.empty()) {
      out.message_bytes.push_back({out.text.size(), out.text.size() + content.size()});
      out.text.append(content);
    }
    at = close + kClose.size();
  }
}

// Control and unknown tokens (what message text must never turn into).
std::vector<std::string_view> control_texts(const tokenizer::Vocabulary& vocab) {
  std::vector<std::string_view> out;
  for (const auto& t : vocab.tokens) {
    if (!t.text.empty() && tokenizer::has_any(t.attr, tokenizer::TokenAttr::Control | tokenizer::TokenAttr::Unknown)) {
      out.push_back(t.text);
    }
  }
  return out;
}

// Breaks every spelling of a control token in `text` with a word joiner after
// its first byte (control token texts start with ASCII: '<', '[', ...).
bool defuse(std::string& text, const std::vector<std::string_view>& controls) {
  bool changed = false;
  for (std::string_view c : controls) {
    if (c.size() < 2 || static_cast<unsigned char>(c[0]) >= 0x80) continue;
    for (size_t at = text.find(c); at != std::string::npos; at = text.find(c, at + 1 + kWordJoiner.size())) {
      text.insert(at + 1, kWordJoiner);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

ChatFormat ChatFormat::choose(const tokenizer::Tokenizer& tokenizer, std::optional<std::string_view> source,
                              const Logger& logger) {
  // The chat library's one rule (chat::choose_model_template): the model's
  // template when it parses and renders a probe conversation within the
  // sandbox limits, else the built-in format of the vocabulary's markers,
  // else plain text.
  std::vector<std::string> texts;
  texts.reserve(tokenizer.vocab().tokens.size());
  for (const auto& t : tokenizer.vocab().tokens) texts.push_back(t.text);
  chat::ModelTemplateChoice choice = chat::choose_model_template(source, texts);
  if (choice.warning.empty()) {
    return ChatFormat(tokenizer, std::move(choice.chat_template), TemplateOrigin::Model, "the model's chat template");
  }
  const auto kind = choice.chat_template.builtin_kind();
  const TemplateOrigin origin =
      kind == chat::BuiltinTemplate::Completion ? TemplateOrigin::Completion : TemplateOrigin::Builtin;
  // A template that is there but cannot be used is worth a warning in the
  // log; a model without one is said in the status line only.
  if (source && !source->empty()) logger.warn("chat template: {}", choice.warning);
  return ChatFormat(tokenizer, std::move(choice.chat_template), origin, std::move(choice.warning));
}

ChatFormat ChatFormat::from_model(const gguf::GgufFile& file, const tokenizer::Tokenizer& tokenizer,
                                  const Logger& logger) {
  const std::optional<std::string> source = file.chat_template();
  return choose(tokenizer, source ? std::optional<std::string_view>(*source) : std::nullopt, logger);
}

ChatFormat ChatFormat::with_template(const tokenizer::Tokenizer& tokenizer, chat::ChatTemplate chat_template) {
  return ChatFormat(tokenizer, std::move(chat_template), TemplateOrigin::Model, "the given chat template");
}

std::string ChatFormat::bos_text() const {
  const auto& v = tokenizer_->vocab();
  return v.valid(v.special.bos) ? v.tokens[static_cast<size_t>(v.special.bos)].text : std::string();
}

std::string ChatFormat::eos_text() const {
  const auto& v = tokenizer_->vocab();
  return v.valid(v.special.eos) ? v.tokens[static_cast<size_t>(v.special.eos)].text : std::string();
}

Result<RenderedPrompt> ChatFormat::render(const std::vector<chat::ChatMessage>& messages,
                                          chat::GenerationPrompt prompt, const chat::Value& variables) const {
  chat::RenderOptions options;
  options.generation_prompt = prompt;
  options.bos_token = bos_text();
  options.eos_token = eos_text();
  options.extra_context = variables;
  return render(messages, options);
}

Result<RenderedPrompt> ChatFormat::render(const std::vector<chat::ChatMessage>& messages,
                                          const chat::RenderOptions& options) const {
  HEARTH_TRY(std::string real, chat::render_chat(template_, messages, options));
  RenderedPrompt out;
  std::vector<chat::ChatMessage> shaped_messages = messages;
  bool any = false;
  bool clash = false;
  for (size_t i = 0; i < shaped_messages.size(); ++i) {
    chat::ChatMessage& m = shaped_messages[i];
    for (std::string* field : {&m.content, &m.reasoning}) {
      if (field->empty()) continue;
      clash = clash || field->find(kOpen) != std::string::npos;
      *field = placeholder(2 * i + (field == &m.reasoning ? 1 : 0));
      any = true;
    }
  }
  if (!any) {
    out.text = std::move(real);
    return out;
  }
  if (!clash) {
    auto shaped = chat::render_chat(template_, shaped_messages, options);
    if (shaped.ok()) {
      for (const Fill mode : {Fill::AsIs, Fill::Trimmed}) {
        if (fill(*shaped, messages, mode, out) && out.text == real) return out;
      }
    }
  }
  // The template reshapes message text (splits, slices, replaces), so its
  // bytes cannot be told apart from the template's: break every control
  // token spelled in a message instead, so none can come from one.
  const auto controls = control_texts(tokenizer_->vocab());
  std::vector<chat::ChatMessage> safe = messages;
  bool changed = false;
  for (auto& m : safe) {
    changed = defuse(m.content, controls) || changed;
    changed = defuse(m.reasoning, controls) || changed;
  }
  out.message_bytes.clear();
  if (!changed) {
    out.text = std::move(real);
    return out;
  }
  HEARTH_TRY(out.text, chat::render_chat(template_, safe, options));
  return out;
}

std::vector<int32_t> ChatFormat::encode(const RenderedPrompt& prompt) const {
  // Templates usually write the BOS text themselves; add it only when they do
  // not (a message starting with that text does not count).
  const std::string bos = bos_text();
  const bool message_first = !prompt.message_bytes.empty() && prompt.message_bytes.front().begin == 0;
  const bool has_bos = !bos.empty() && !message_first && prompt.text.rfind(bos, 0) == 0;
  return tokenizer_->tokenize_guarded(prompt.text, has_bos ? tokenizer::AddSpecial::No : tokenizer::AddSpecial::AsVocab,
                                      prompt.message_bytes);
}

Result<std::vector<int32_t>> ChatFormat::encode(const std::vector<chat::ChatMessage>& messages,
                                                chat::GenerationPrompt prompt, const chat::Value& variables) const {
  HEARTH_TRY(const RenderedPrompt rendered, render(messages, prompt, variables));
  return encode(rendered);
}

chat::ReasoningStyle ChatFormat::detect_style(const tokenizer::Tokenizer& tokenizer,
                                              const chat::ChatTemplate& chat_template) {
  if (chat_template.builtin_kind()) return {};
  chat::ReasoningStyle style = chat::detect_reasoning(chat_template.compiled().source());
  if (style.syntax != chat::ReasoningSyntax::ThinkTags) return style;
  // DeepSeek-R1 distills open the reasoning in the generation prompt, so the
  // reply starts inside it; Qwen3 with thinking off writes an empty block.
  chat::RenderOptions options;
  options.generation_prompt = chat::GenerationPrompt::Add;
  const auto& v = tokenizer.vocab();
  if (v.valid(v.special.bos)) options.bos_token = v.tokens[static_cast<size_t>(v.special.bos)].text;
  if (v.valid(v.special.eos)) options.eos_token = v.tokens[static_cast<size_t>(v.special.eos)].text;
  auto rendered = chat::render_chat(chat_template, {{"user", "Hi", {}}}, options);
  if (rendered.ok()) {
    std::string_view text = *rendered;
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
    style.prompt_opens_reasoning = text.ends_with("<think>");
  }
  return style;
}

std::vector<int32_t> ChatFormat::encode_literal(std::string_view text) const {
  return tokenizer_->tokenize(text, tokenizer::AddSpecial::No, tokenizer::ParseSpecial::No);
}

std::vector<int32_t> ChatFormat::end_of_generation() const {
  const auto& v = tokenizer_->vocab();
  std::vector<int32_t> eog = v.eog;
  if (v.special.eos != tokenizer::kNoToken && std::find(eog.begin(), eog.end(), v.special.eos) == eog.end()) {
    eog.push_back(v.special.eos);
  }
  return eog;
}

}  // namespace hearth::runtime
