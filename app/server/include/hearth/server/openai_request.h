// OpenAI request bodies -> checked, typed requests. Every field is checked
// for its type and range; a field Hearth cannot honour (n > 1, tools,
// logit_bias, ...) is refused by name instead of being ignored.
#pragma once

#include <hearth/engine/chat/chat_template.h>
#include <hearth/engine/sampling/sampler.h>
#include <hearth/server/backend.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hearth::server {

// OpenAI's error object: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // empty: null
  std::string code;   // empty: null
};
std::string to_json(const ApiError& error);

enum class Endpoint { ChatCompletions, Completions };
enum class ResponseFormat { Text, JsonObject, JsonSchema };

struct ParsedRequest {
  Endpoint endpoint = Endpoint::ChatCompletions;
  std::string model;  // one of the served ids: the request's, or the first when it names none
  std::vector<chat::ChatMessage> messages;  // chat
  std::string prompt;                       // completions
  std::vector<int32_t> prompt_tokens;       // completions given token ids (then `prompt` is empty)
  bool ignore_eos = false;                  // end-of-generation tokens are masked out
  sampling::SamplerConfig sampler;
  std::optional<int64_t> max_tokens;        // none: as much as the context leaves
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;
  int32_t top_logprobs = -1;  // -1: none
  ResponseFormat format = ResponseFormat::Text;
  nlohmann::json schema;      // JsonSchema: the schema object
};

using ParseResult = std::variant<ParsedRequest, ApiError>;

// `model_ids`: the models served (at least one); a request naming another is
// refused. `random_seed`: the seed used when the request gives none.
ParseResult parse_request(Endpoint endpoint, std::string_view body, const std::vector<std::string>& model_ids,
                          uint64_t random_seed);
inline ParseResult parse_request(Endpoint endpoint, std::string_view body, const std::string& model_id,
                                 uint64_t random_seed) {
  return parse_request(endpoint, body, std::vector<std::string>{model_id}, random_seed);
}

}  // namespace hearth::server
