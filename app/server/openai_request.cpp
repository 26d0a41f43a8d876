#include <hearth/server/openai_request.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <cmath>

namespace hearth::server {

std::string to_json(const ApiError& error) {
  nlohmann::json e = {{"message", error.message},
                      {"type", error.type},
                      {"param", error.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param)},
                      {"code", error.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.code)}};
  return nlohmann::json{{"error", e}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

// Stop strings per request and their length: OpenAI allows 4.
constexpr size_t kMaxStops = 4;
constexpr size_t kMaxStopBytes = 256;
constexpr int32_t kMaxTopLogprobsChat = 20;
constexpr int32_t kMaxLogprobsCompletion = 5;

ApiError bad(const std::string& param, std::string message) {
  ApiError e;
  e.message = std::move(message);
  e.param = param;
  return e;
}

const char* type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// Reads optional fields of `body` with type and range checks; the first
// failure is kept and later reads do nothing.
class Fields {
 public:
  explicit Fields(const nlohmann::json& body) : body_(body) {}
  std::optional<ApiError> error;

  const nlohmann::json* get(const char* key) {
    if (error) return nullptr;
    auto it = body_.find(key);
    if (it == body_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  std::optional<double> number(const char* key, double min, double max) {
    const auto* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number()) return fail(key, fmt::format("'{}' must be a number, not {}", key, type_name(*v)));
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < min || d > max) {
      return fail(key, fmt::format("'{}' is {} but must be between {} and {}", key, d, min, max));
    }
    return d;
  }
  std::optional<int64_t> integer(const char* key, int64_t min, int64_t max) {
    const auto* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) return fail(key, fmt::format("'{}' must be an integer, not {}", key, type_name(*v)));
    const bool is_unsigned = v->is_number_unsigned();
    const bool too_big = is_unsigned ? v->get<uint64_t>() > static_cast<uint64_t>(max) : v->get<int64_t>() > max;
    const bool too_small = !too_big && (is_unsigned ? static_cast<int64_t>(v->get<uint64_t>()) : v->get<int64_t>()) < min;
    if (too_big || too_small) {
      return fail(key, fmt::format("'{}' is {} but must be between {} and {}", key, v->dump(), min, max));
    }
    return is_unsigned ? static_cast<int64_t>(v->get<uint64_t>()) : v->get<int64_t>();
  }
  std::optional<bool> boolean(const char* key) {
    const auto* v = get(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return fail(key, fmt::format("'{}' must be a boolean, not {}", key, type_name(*v)));
    return v->get<bool>();
  }
  std::nullopt_t fail(const std::string& key, std::string message) {
    if (!error) error = bad(key, std::move(message));
    return std::nullopt;
  }

 private:
  const nlohmann::json& body_;
};

// A message's content: a string, or an array of text parts.
std::optional<std::string> content_text(const nlohmann::json& content, const std::string& where, Fields& f) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_null()) return std::string();
  if (!content.is_array()) return f.fail(where, fmt::format("'{}' must be a string or an array of text parts", where));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const auto& part = content[i];
    const std::string at = fmt::format("{}[{}]", where, i);
    if (!part.is_object() || !part.contains("type") || !part["type"].is_string()) {
      return f.fail(at, fmt::format("'{}' must be an object with a string 'type'", at));
    }
    if (part["type"] != "text") {
      return f.fail(at, fmt::format("'{}' has type '{}'; only text parts are supported", at,
                                    part["type"].get<std::string>()));
    }
    if (!part.contains("text") || !part["text"].is_string()) {
      return f.fail(at, fmt::format("'{}.text' must be a string", at));
    }
    text += part["text"].get<std::string>();
  }
  return text;
}

void parse_messages(const nlohmann::json& body, ParsedRequest& out, Fields& f) {
  const auto* messages = f.get("messages");
  if (f.error) return;
  if (!messages) {
    f.fail("messages", "'messages' is required");
    return;
  }
  if (!messages->is_array() || messages->empty()) {
    f.fail("messages", "'messages' must be a non-empty array");
    return;
  }
  (void)body;
  for (size_t i = 0; i < messages->size(); ++i) {
    const auto& m = (*messages)[i];
    const std::string at = fmt::format("messages[{}]", i);
    if (!m.is_object()) {
      f.fail(at, fmt::format("'{}' must be an object, not {}", at, type_name(m)));
      return;
    }
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) {
      f.fail(at + ".role", fmt::format("'{}.role' must be a string", at));
      return;
    }
    const std::string r = role->get<std::string>();
    if (r != "system" && r != "developer" && r != "user" && r != "assistant") {
      f.fail(at + ".role", fmt::format("'{}.role' is '{}'; it must be system, developer, user or assistant", at, r));
      return;
    }
    if (m.contains("tool_calls") || m.contains("function_call")) {
      f.fail(at, fmt::format("'{}' has tool calls; tools are not supported", at));
      return;
    }
    auto content = m.find("content");
    if (content == m.end()) {
      f.fail(at + ".content", fmt::format("'{}.content' is required", at));
      return;
    }
    auto text = content_text(*content, at + ".content", f);
    if (!text) return;
    // "developer" is OpenAI's newer name for the system role.
    out.messages.push_back({r == "developer" ? "system" : r, std::move(*text), {}});
  }
}

void parse_stop(ParsedRequest& out, Fields& f) {
  const auto* stop = f.get("stop");
  if (!stop) return;
  std::vector<std::string> stops;
  if (stop->is_string()) {
    stops.push_back(stop->get<std::string>());
  } else if (stop->is_array()) {
    for (const auto& s : *stop) {
      if (!s.is_string()) {
        f.fail("stop", "'stop' must be a string or an array of strings");
        return;
      }
      stops.push_back(s.get<std::string>());
    }
  } else {
    f.fail("stop", fmt::format("'stop' must be a string or an array of strings, not {}", type_name(*stop)));
    return;
  }
  if (stops.size() > kMaxStops) {
    f.fail("stop", fmt::format("'stop' has {} strings; at most {} are allowed", stops.size(), kMaxStops));
    return;
  }
  for (const auto& s : stops) {
    if (s.size() > kMaxStopBytes) {
      f.fail("stop", fmt::format("a stop string is {} bytes; at most {} are allowed", s.size(), kMaxStopBytes));
      return;
    }
  }
  out.stop = std::move(stops);
}

void parse_response_format(ParsedRequest& out, Fields& f) {
  const auto* rf = f.get("response_format");
  if (!rf) return;
  if (!rf->is_object() || !rf->contains("type") || !(*rf)["type"].is_string()) {
    f.fail("response_format", "'response_format' must be an object with a string 'type'");
    return;
  }
  const std::string type = (*rf)["type"].get<std::string>();
  if (type == "text") return;
  if (type == "json_object") {
    out.format = ResponseFormat::JsonObject;
    return;
  }
  if (type != "json_schema") {
    f.fail("response_format.type",
           fmt::format("'response_format.type' is '{}'; it must be text, json_object or json_schema", type));
    return;
  }
  auto js = rf->find("json_schema");
  if (js == rf->end() || !js->is_object()) {
    f.fail("response_format.json_schema", "'response_format.json_schema' must be an object");
    return;
  }
  auto schema = js->find("schema");
  if (schema == js->end() || !schema->is_object()) {
    f.fail("response_format.json_schema.schema", "'response_format.json_schema.schema' must be an object");
    return;
  }
  out.format = ResponseFormat::JsonSchema;
  out.schema = *schema;
}

// Fields of OpenAI's API that Hearth does not implement: refused by name.
void refuse_unsupported(const nlohmann::json& body, Endpoint endpoint, Fields& f) {
  for (const char* key : {"tools", "functions", "tool_choice", "function_call", "logit_bias", "suffix", "audio",
                          "modalities", "prediction"}) {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) continue;
    if ((it->is_object() || it->is_array()) && it->empty()) continue;
    f.fail(key, fmt::format("'{}' is not supported by this server", key));
    return;
  }
  if (endpoint == Endpoint::Completions) {
    if (auto echo = f.boolean("echo"); echo && *echo) f.fail("echo", "'echo' is not supported by this server");
    if (auto best = f.integer("best_of", 1, 1)) (void)best;
  }
}

}  // namespace

ParseResult parse_request(Endpoint endpoint, std::string_view text, const std::vector<std::string>& model_ids,
                          uint64_t random_seed) {
  const nlohmann::json body = nlohmann::json::parse(text, nullptr, false);
  if (body.is_discarded()) {
    return bad("", "the request body is not valid JSON");
  }
  if (!body.is_object()) return bad("", fmt::format("the request body must be a JSON object, not {}", type_name(body)));
  ParsedRequest out;
  out.endpoint = endpoint;
  out.model = model_ids.empty() ? std::string() : model_ids.front();
  Fields f(body);

  if (const auto* model = f.get("model")) {
    if (!model->is_string()) {
      f.fail("model", fmt::format("'model' must be a string, not {}", type_name(*model)));
    } else if (std::find(model_ids.begin(), model_ids.end(), model->get<std::string>()) == model_ids.end()) {
      ApiError e;
      e.status = 404;
      e.param = "model";
      e.code = "model_not_found";
      e.message = model_ids.size() == 1
                      ? fmt::format("the model '{}' is not served here; this server serves '{}' only",
                                    model->get<std::string>(), model_ids.front())
                      : fmt::format("the model '{}' is not served here; this server serves '{}'",
                                    model->get<std::string>(), fmt::join(model_ids, "', '"));
      return e;
    } else {
      out.model = model->get<std::string>();
    }
  }
  if (endpoint == Endpoint::ChatCompletions) {
    parse_messages(body, out, f);
  } else if (const auto* prompt = f.get("prompt")) {
    if (prompt->is_string()) {
      out.prompt = prompt->get<std::string>();
    } else if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
      out.prompt = (*prompt)[0].get<std::string>();
    } else if (prompt->is_array() && !prompt->empty() && (*prompt)[0].is_number()) {
      // OpenAI's other form: the prompt as token ids (checked against the
      // vocabulary when the request is queued).
      for (size_t i = 0; i < prompt->size() && !f.error; ++i) {
        const auto& id = (*prompt)[i];
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
          f.fail("prompt", fmt::format("'prompt[{}]' must be a token id (a non-negative integer)", i));
        } else {
          out.prompt_tokens.push_back(static_cast<int32_t>(id.get<int64_t>()));
        }
      }
    } else {
      f.fail("prompt", "'prompt' must be a string, an array of one string or an array of token ids");
    }
  } else if (!f.error) {
    f.fail("prompt", "'prompt' is required");
  }

  if (auto n = f.integer("n", 1, INT32_MAX); n && *n != 1) {
    f.fail("n", fmt::format("'n' is {}; this server returns one choice per request (n = 1)", *n));
  }
  refuse_unsupported(body, endpoint, f);
  // max_completion_tokens is the newer name; either may be given.
  auto max_tokens = f.integer("max_tokens", 1, INT32_MAX);
  if (auto mct = f.integer("max_completion_tokens", 1, INT32_MAX)) max_tokens = mct;
  out.max_tokens = max_tokens;

  // OpenAI's defaults: temperature 1, top_p 1, no top-k, min-p or penalties.
  auto& s = out.sampler;
  s.temperature = static_cast<float>(f.number("temperature", 0.0, 2.0).value_or(1.0));
  s.top_p = static_cast<float>(f.number("top_p", 0.0, 1.0).value_or(1.0));
  s.top_k = static_cast<int32_t>(f.integer("top_k", 0, INT32_MAX).value_or(0));
  s.min_p = static_cast<float>(f.number("min_p", 0.0, 1.0).value_or(0.0));
  s.presence_penalty = static_cast<float>(f.number("presence_penalty", -2.0, 2.0).value_or(0.0));
  s.frequency_penalty = static_cast<float>(f.number("frequency_penalty", -2.0, 2.0).value_or(0.0));
  s.repeat_penalty = 1.0f;
  const auto seed = f.integer("seed", INT64_MIN, INT64_MAX);
  s.seed = seed ? static_cast<uint64_t>(*seed) : random_seed;

  parse_stop(out, f);
  // Not OpenAI's: generate max_tokens whatever the model predicts (benchmarks;
  // the reference engine's server takes the same field).
  out.ignore_eos = f.boolean("ignore_eos").value_or(false);
  out.stream = f.boolean("stream").value_or(false);
  if (const auto* so = f.get("stream_options")) {
    if (!so->is_object()) {
      f.fail("stream_options", "'stream_options' must be an object");
    } else if (auto iu = so->find("include_usage"); iu != so->end() && !iu->is_null()) {
      if (!iu->is_boolean()) {
        f.fail("stream_options.include_usage", "'stream_options.include_usage' must be a boolean");
      } else {
        out.include_usage = iu->get<bool>();
      }
    }
  }
  if (endpoint == Endpoint::ChatCompletions) {
    const bool logprobs = f.boolean("logprobs").value_or(false);
    const auto top = f.integer("top_logprobs", 0, kMaxTopLogprobsChat);
    if (top && !logprobs) f.fail("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    if (logprobs) out.top_logprobs = static_cast<int32_t>(top.value_or(0));
    parse_response_format(out, f);
  } else {
    if (auto lp = f.integer("logprobs", 0, kMaxLogprobsCompletion)) out.top_logprobs = static_cast<int32_t>(*lp);
    parse_response_format(out, f);
  }
  if (f.error) return *f.error;
  return out;
}

}  // namespace hearth::server
