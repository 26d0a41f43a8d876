// hearth-cli template: renders a conversation with a chat template and prints
// the prompt exactly (no newline added), as the engine would feed it to the
// tokenizer; with --tokens, the prompt's ids as the engine's chat layer
// encodes them (message text never becomes control tokens).
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <hearth/engine/chat/chat_template.h>
#include <hearth/engine/chat/json.h>
#include <hearth/core/file_io.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/runtime/chat_format.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include "args.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

VerbSpec template_spec() {
  VerbSpec spec;
  spec.verb = "template";
  spec.usage = "(--model M.gguf | --template-file F.jinja) --messages MSGS.json [--add-generation-prompt] "
               "[--bos S] [--eos S] [--tools TOOLS.json] [--tokens]";
  spec.description =
      "Renders the messages (a JSON array of {role, content, ...}) with a chat template and prints the\n"
      "prompt exactly, without a trailing newline.";
  spec.flags = {
      {"model", FlagKind::Value, "take the template and BOS/EOS texts from this GGUF model", "", "M.gguf"},
      {"template-file", FlagKind::Value, "read the Jinja template from this file", "", "F.jinja"},
      {"messages", FlagKind::Value, "the conversation: a JSON array of message objects", "", "MSGS.json"},
      {"add-generation-prompt", FlagKind::Switch, "end with the opening of an assistant turn", "", ""},
      {"bos", FlagKind::Value, "text of the BOS token (template variable bos_token)", "", "S"},
      {"eos", FlagKind::Value, "text of the EOS token (template variable eos_token)", "", "S"},
      {"tools", FlagKind::Value, "tool definitions: a JSON array passed as the template variable tools", "",
       "TOOLS.json"},
      {"tokens", FlagKind::Switch,
       "print the prompt's token ids (a JSON array) as the engine encodes it; needs --model (its vocabulary); "
       "--template-file may replace the model's template", "", ""},
  };
  return spec;
}

// Templates, message and tool files are user input: bounded, regular files only.
constexpr uint64_t kTemplateFileLimit = uint64_t{1} << 20;
constexpr uint64_t kJsonFileLimit = uint64_t{64} << 20;

bool read_file(const std::string& path, std::string& out, uint64_t limit, std::string_view what,
               std::string& error) {
  auto text = read_regular_file(path, limit, what);
  if (!text.ok()) {
    error = text.error().message;
    return false;
  }
  out = std::move(text).value();
  return true;
}

int bad_input(const std::string& message) {
  std::fprintf(stderr, "hearth-cli template: %s\n", message.c_str());
  return kExitBadInput;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "hearth-cli template: %s (see --help)\n", message.c_str());
  return kExitUsage;
}

// Role and content become ChatMessage fields; every other key (and a content
// that is not a string) travels in `extra`, so templates see the JSON as is.
Result<std::vector<chat::ChatMessage>> to_messages(const chat::Value& list, const std::string& path) {
  if (!list.is_array()) return make_error(ErrorCode::InvalidFormat, path + ": expected a JSON array of messages");
  std::vector<chat::ChatMessage> out;
  for (size_t i = 0; i < list.as_array().size(); ++i) {
    const chat::Value& m = list.as_array()[i];
    const chat::Value* role = m.is_object() ? m.as_object().find("role") : nullptr;
    if (!role || !role->is_string()) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: message {} has no string 'role'", path, i));
    }
    chat::ChatMessage msg;
    msg.role = role->as_string();
    chat::ObjectData extra;
    for (const auto& [key, value] : m.as_object().items()) {
      if (key == "role") continue;
      if (key == "content" && value.is_string()) {
        msg.content = value.as_string();
      } else {
        extra.set(key, value);
      }
    }
    if (extra.size() != 0) msg.extra = chat::Value::object(std::move(extra));
    out.push_back(std::move(msg));
  }
  return out;
}

struct ModelTemplate {
  std::string source;
  std::string bos;
  std::string eos;
};

// The model's own template (tokenizer.chat_template), or the built-in one its
// vocabulary points to, and the texts of its BOS and EOS tokens.
Result<ModelTemplate> template_from_model(const std::string& path) {
  HEARTH_TRY(gguf::GgufFile file, gguf::GgufFile::open(path));
  HEARTH_TRY(std::vector<std::string> tokens, file.get_string_array("tokenizer.ggml.tokens"));
  ModelTemplate out;
  auto token_text = [&](std::string_view key) -> Result<std::string> {
    HEARTH_TRY(std::optional<uint64_t> id, file.find_uint(key));
    if (!id) return std::string();
    if (*id >= tokens.size()) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: {} = {} is outside the vocabulary of {} tokens", path, key, *id, tokens.size()));
    }
    return tokens[*id];
  };
  HEARTH_TRY(out.bos, token_text("tokenizer.ggml.bos_token_id"));
  HEARTH_TRY(out.eos, token_text("tokenizer.ggml.eos_token_id"));
  if (auto source = file.chat_template()) {
    out.source = std::move(*source);
  } else {
    // The engine's rule (runtime::ChatFormat): the built-in format the
    // vocabulary's chat markers point to, else plain text.
    HEARTH_TRY(const auto tok, tokenizer::Tokenizer::from_gguf(file));
    const runtime::ChatFormat format = runtime::ChatFormat::choose(tok, std::nullopt);
    std::fprintf(stderr, "hearth-cli template: %s: %s\n", path.c_str(), format.note().c_str());
    out.source = format.chat_template().compiled().source();
  }
  return out;
}

// --tokens: the ids the engine's chat layer gives the conversation, with the
// model's vocabulary (and its template, or the given one).
int print_tokens(const std::string& model_path, const chat::ChatTemplate* given,
                 const std::vector<chat::ChatMessage>& messages, chat::RenderOptions options) {
  auto file = gguf::GgufFile::open(model_path);
  if (!file.ok()) return bad_input(file.error().message);
  auto tok = tokenizer::Tokenizer::from_gguf(*file);
  if (!tok.ok()) return bad_input(model_path + ": " + tok.error().message);
  const runtime::ChatFormat format =
      given ? runtime::ChatFormat::with_template(*tok, *given) : runtime::ChatFormat::from_model(*file, *tok);
  if (format.origin() != runtime::TemplateOrigin::Model) {
    std::fprintf(stderr, "hearth-cli template: %s: %s\n", model_path.c_str(), format.note().c_str());
  }
  auto rendered = format.render(messages, options);
  if (!rendered.ok()) return bad_input(model_path + ": " + rendered.error().message);
  const std::vector<int32_t> ids = format.encode(*rendered);
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", ids[i]);
  out += "]\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace

int run_template(const std::vector<std::string>& argv) {
  const VerbSpec spec = template_spec();
  int exit_code = kExitOk;
  auto parsed = parse_verb_args(spec, argv, exit_code);
  if (!parsed) return exit_code;
  const auto model = parsed->get("model");
  const auto template_file = parsed->get("template-file");
  const auto messages_file = parsed->get("messages");
  const bool want_tokens = parsed->has("tokens");
  if (want_tokens && !model) return usage_error("--tokens needs --model (the vocabulary that encodes the prompt)");
  if (!want_tokens && model.has_value() == template_file.has_value()) {
    return usage_error("give exactly one of --model and --template-file");
  }
  if (!messages_file) return usage_error("--messages is required");

  std::string source;
  std::string bos;
  std::string eos;
  const std::string& template_origin = template_file ? *template_file : *model;
  if (template_file) {
    if (std::string error; !read_file(*template_file, source, kTemplateFileLimit, "template files", error)) {
      return bad_input(error);
    }
  }
  if (model && !template_file) {
    auto from_model = template_from_model(*model);
    if (!from_model.ok()) return bad_input(from_model.error().message);
    source = std::move(from_model->source);
    bos = std::move(from_model->bos);
    eos = std::move(from_model->eos);
  }
  auto chat_template = chat::ChatTemplate::from_source(source);
  if (!chat_template.ok()) return bad_input(template_origin + ": " + chat_template.error().message);

  std::string messages_text, read_error;
  if (!read_file(*messages_file, messages_text, kJsonFileLimit, "message files", read_error)) {
    return bad_input(read_error);
  }
  auto messages_json = chat::parse_json(messages_text, *messages_file);
  if (!messages_json.ok()) return bad_input(messages_json.error().message);
  auto messages = to_messages(*messages_json, *messages_file);
  if (!messages.ok()) return bad_input(messages.error().message);

  chat::RenderOptions options;
  options.generation_prompt =
      parsed->has("add-generation-prompt") ? chat::GenerationPrompt::Add : chat::GenerationPrompt::Omit;
  options.bos_token = parsed->get_or("bos", bos);  // the flags override the model's tokens
  options.eos_token = parsed->get_or("eos", eos);
  if (const auto tools_file = parsed->get("tools")) {
    std::string tools_text;
    if (!read_file(*tools_file, tools_text, kJsonFileLimit, "tool files", read_error)) return bad_input(read_error);
    auto tools = chat::parse_json(tools_text, *tools_file);
    if (!tools.ok()) return bad_input(tools.error().message);
    options.extra_context = chat::make_object({{"tools", *tools}});
  }

  if (want_tokens) return print_tokens(*model, template_file ? &*chat_template : nullptr, *messages, options);
  auto rendered = chat::render_chat(*chat_template, *messages, options);
  if (!rendered.ok()) return bad_input(template_origin + ": " + rendered.error().message);
  std::fwrite(rendered->data(), 1, rendered->size(), stdout);
  return kExitOk;
}

}  // namespace hearth::cli
