#include "remote/chat_protocol.h"

#include <nlohmann/json.hpp>

namespace hearth::remote {
namespace {

using nlohmann::json;

constexpr size_t kMaxShownErrorBytes = 400;

// One line, short enough for a status bar, whatever the server sent.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (text.size() > kMaxShownErrorBytes) {
    size_t cut = kMaxShownErrorBytes;
    // Do not cut a UTF-8 sequence in half.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
    text += "...";
  }
  return text;
}

std::string string_field(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return it->get<std::string>();
}

Error bad_chunk(const std::string& why) { return make_error(ErrorCode::InvalidFormat, "malformed stream chunk: " + why); }

ErrorBody error_of(const json& e) {
  ErrorBody out;
  if (e.is_string()) {
    out.message = one_line(e.get<std::string>());
  } else if (e.is_object()) {
    out.message = one_line(string_field(e, "message"));
    out.code = string_field(e, "code");
    if (out.code.empty()) out.code = string_field(e, "type");
    if (auto c = e.find("code"); c != e.end() && c->is_number_integer()) out.code = std::to_string(c->get<int64_t>());
  }
  return out;
}

}  // namespace

std::string chat_request_body(const ChatCall& call) {
  json messages = json::array();
  for (const auto& m : call.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
  json body = {{"model", call.model},
               {"messages", messages},
               {"stream", true},
               {"stream_options", {{"include_usage", true}}}};
  if (call.temperature) body["temperature"] = *call.temperature;
  if (call.top_p) body["top_p"] = *call.top_p;
  if (call.top_k) body["top_k"] = *call.top_k;
  if (call.min_p) body["min_p"] = *call.min_p;
  if (call.repeat_penalty) body["repeat_penalty"] = *call.repeat_penalty;
  if (call.seed) body["seed"] = *call.seed;
  if (call.max_tokens) body["max_tokens"] = *call.max_tokens;
  if (call.reasoning_effort) body["reasoning_effort"] = *call.reasoning_effort;
  // Text from the user may hold invalid UTF-8; it is replaced, not thrown on.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<StreamChunk> parse_stream_chunk(std::string_view data) {
  json j = json::parse(data, nullptr, false);
  if (j.is_discarded()) return bad_chunk("not JSON: '" + one_line(std::string(data.substr(0, 80))) + "'");
  if (!j.is_object()) return bad_chunk("not a JSON object");
  StreamChunk out;
  if (auto e = j.find("error"); e != j.end() && !e->is_null()) {
    const ErrorBody body = error_of(*e);
    out.is_error = true;
    out.error_message = body.message.empty() ? "the server reported an error without a message" : body.message;
    out.error_code = body.code;
    return out;
  }
  if (auto u = j.find("usage"); u != j.end() && !u->is_null()) {
    if (!u->is_object()) return bad_chunk("'usage' is not an object");
    Usage usage;
    auto p = u->find("prompt_tokens");
    auto c = u->find("completion_tokens");
    if (p != u->end() && p->is_number_integer()) usage.prompt_tokens = p->get<int64_t>();
    if (c != u->end() && c->is_number_integer()) usage.completion_tokens = c->get<int64_t>();
    out.usage = usage;
  }
  auto choices = j.find("choices");
  if (choices == j.end() || choices->is_null()) return out;
  if (!choices->is_array()) return bad_chunk("'choices' is not an array");
  if (choices->empty()) return out;
  const json& choice = choices->front();
  if (!choice.is_object()) return bad_chunk("a choice is not an object");
  if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string()) out.finish_reason = f->get<std::string>();
  auto delta = choice.find("delta");
  if (delta == choice.end() || delta->is_null()) return out;
  if (!delta->is_object()) return bad_chunk("'delta' is not an object");
  for (const char* key : {"content", "reasoning_content", "reasoning"}) {
    auto it = delta->find(key);
    if (it == delta->end() || it->is_null()) continue;
    if (!it->is_string()) return bad_chunk(std::string("'delta.") + key + "' is not a string");
    (std::string_view(key) == "content" ? out.content : out.reasoning) += it->get<std::string>();
  }
  return out;
}

Result<std::vector<RemoteModel>> parse_model_list(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return make_error(ErrorCode::InvalidFormat, "the model list is not a JSON object");
  }
  auto data = j.find("data");
  if (data == j.end() || !data->is_array()) {
    return make_error(ErrorCode::InvalidFormat, "the model list has no 'data' array");
  }
  std::vector<RemoteModel> out;
  for (const auto& m : *data) {
    if (!m.is_object()) continue;
    RemoteModel model;
    model.id = string_field(m, "id");
    if (model.id.empty()) continue;
    model.owned_by = string_field(m, "owned_by");
    for (const char* key : {"context_length", "max_model_len"}) {
      if (auto it = m.find(key); it != m.end() && it->is_number_integer()) model.context_length = it->get<int64_t>();
    }
    out.push_back(std::move(model));
  }
  return out;
}

ErrorBody parse_error_body(std::string_view body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return ErrorBody{one_line(std::string(body.substr(0, kMaxShownErrorBytes))), {}};
  if (!j.is_object()) return {};
  if (auto e = j.find("error"); e != j.end()) return error_of(*e);
  return ErrorBody{one_line(string_field(j, "message")), {}};
}

}  // namespace hearth::remote
