#include <hearth/server/openai_response.h>

#include <nlohmann/json.hpp>

namespace hearth::server {
namespace {

using nlohmann::json;

// Token texts can hold partial UTF-8 (byte-fallback pieces); they are
// replaced, never allowed to throw.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}

json usage(const Completion& done) {
  return {{"prompt_tokens", done.prompt_tokens},
          {"completion_tokens", done.completion_tokens},
          {"total_tokens", done.prompt_tokens + done.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", done.cached_tokens}}}};
}

const char* finish(const Completion& done) { return done.reason == FinishReason::Length ? "length" : "stop"; }

// Chat: {"content": [{token, logprob, bytes, top_logprobs}]}.
json chat_logprobs(const std::vector<TokenOut>& tokens) {
  json content = json::array();
  for (const auto& t : tokens) {
    if (!t.has_logprob) continue;
    json top = json::array();
    for (const auto& alt : t.top) {
      top.push_back({{"token", alt.text}, {"logprob", alt.logprob}, {"bytes", bytes_of(alt.text)}});
    }
    content.push_back({{"token", t.chosen.text},
                       {"logprob", t.chosen.logprob},
                       {"bytes", bytes_of(t.chosen.text)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
}

// Completions (legacy shape): parallel arrays.
json completion_logprobs(const std::vector<TokenOut>& tokens, size_t text_offset) {
  json toks = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
  size_t offset = text_offset;
  for (const auto& t : tokens) {
    if (!t.has_logprob) continue;
    toks.push_back(t.chosen.text);
    lps.push_back(t.chosen.logprob);
    json top = json::object();
    for (const auto& alt : t.top) top[alt.text] = alt.logprob;
    tops.push_back(top);
    offsets.push_back(offset);
    offset += t.text.size();
  }
  return {{"tokens", toks}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json base(const ResponseHeader& h, bool chunk) {
  const bool chat = h.endpoint == Endpoint::ChatCompletions;
  return {{"id", h.id},
          {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"system_fingerprint", nullptr}};
}

}  // namespace

std::string full_response(const ResponseHeader& header, const std::string& text, const std::vector<TokenOut>& tokens,
                          bool logprobs, const Completion& done) {
  json r = base(header, false);
  json choice;
  if (header.endpoint == Endpoint::ChatCompletions) {
    choice = {{"index", 0},
              {"message", {{"role", "assistant"}, {"content", text}, {"refusal", nullptr}}},
              {"logprobs", logprobs ? chat_logprobs(tokens) : json(nullptr)},
              {"finish_reason", finish(done)}};
  } else {
    choice = {{"index", 0},
              {"text", text},
              {"logprobs", logprobs ? completion_logprobs(tokens, 0) : json(nullptr)},
              {"finish_reason", finish(done)}};
  }
  r["choices"] = json::array({choice});
  r["usage"] = usage(done);
  return dump(r);
}

std::string sse_first_chunk(const ResponseHeader& header) {
  json r = base(header, true);
  r["choices"] = json::array(
      {{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"logprobs", nullptr}, {"finish_reason", nullptr}}});
  return sse(r);
}

std::string sse_token_chunk(const ResponseHeader& header, const TokenOut& token, bool logprobs) {
  json r = base(header, true);
  const std::vector<TokenOut> one{token};
  const bool with_lp = logprobs && token.has_logprob;
  if (header.endpoint == Endpoint::ChatCompletions) {
    r["choices"] = json::array({{{"index", 0},
                                 {"delta", {{"content", token.text}}},
                                 {"logprobs", with_lp ? chat_logprobs(one) : json(nullptr)},
                                 {"finish_reason", nullptr}}});
  } else {
    r["choices"] = json::array({{{"index", 0},
                                 {"text", token.text},
                                 {"logprobs", with_lp ? completion_logprobs(one, 0) : json(nullptr)},
                                 {"finish_reason", nullptr}}});
  }
  return sse(r);
}

std::string sse_finish_chunk(const ResponseHeader& header, const Completion& done) {
  json r = base(header, true);
  if (header.endpoint == Endpoint::ChatCompletions) {
    r["choices"] = json::array(
        {{{"index", 0}, {"delta", json::object()}, {"logprobs", nullptr}, {"finish_reason", finish(done)}}});
  } else {
    r["choices"] =
        json::array({{{"index", 0}, {"text", ""}, {"logprobs", nullptr}, {"finish_reason", finish(done)}}});
  }
  return sse(r);
}

std::string sse_usage_chunk(const ResponseHeader& header, const Completion& done) {
  json r = base(header, true);
  r["choices"] = json::array();
  r["usage"] = usage(done);
  return sse(r);
}

std::string sse_error(const ApiError& error) { return "data: " + to_json(error) + "\n\n"; }

std::string sse_done() { return "data: [DONE]\n\n"; }

std::string models_response(const std::vector<ModelDescription>& models) {
  json data = json::array();
  for (const ModelDescription& model : models) {
    data.push_back({{"id", model.id},
                    {"object", "model"},
                    {"created", model.created},
                    {"owned_by", "hearth"},
                    {"context_length", model.context_length}});
  }
  return dump(json{{"object", "list"}, {"data", data}});
}

}  // namespace hearth::server
