// The OpenAI chat-completions wire format as Hearth speaks it: the request
// body of a streamed chat completion, the chunks of its event stream
// (content, reasoning, finish reason, usage, or an error object) and the
// model list. Plain C++ over nlohmann::json; untrusted input gives errors,
// never exceptions.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::remote {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct ChatCall {
  std::string model;
  std::vector<ChatMessage> messages;
  // Unset fields are left out of the request: the server's defaults apply.
  // top_k, min_p and repeat_penalty are extensions that vLLM, llama.cpp,
  // Ollama and Hearth accept; OpenAI's own API does not.
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<int> top_k;
  std::optional<double> min_p;
  std::optional<double> repeat_penalty;
  std::optional<int64_t> seed;
  std::optional<int> max_tokens;
  std::optional<std::string> reasoning_effort;  // "low", "medium", "high"
};

// The JSON body of POST {base}/chat/completions with "stream": true and
// stream_options.include_usage.
std::string chat_request_body(const ChatCall& call);

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
};

// One event of the stream, interpreted.
struct StreamChunk {
  std::string content;    // choices[0].delta.content
  std::string reasoning;  // choices[0].delta.reasoning_content (or .reasoning)
  std::string finish_reason;
  std::optional<Usage> usage;
  // An error object sent in the stream ({"error": {...}}).
  bool is_error = false;
  std::string error_message;
  std::string error_code;  // "code" or "type" of the error object
};

// Parses the data of one event (not "[DONE]"). InvalidFormat when it is not
// a JSON object or its fields have the wrong types.
Result<StreamChunk> parse_stream_chunk(std::string_view data);

struct RemoteModel {
  std::string id;
  std::string owned_by;
  int64_t context_length = 0;  // when the server says (vLLM: max_model_len; Hearth: context_length); 0 unknown
};

// Parses GET {base}/models: {"data": [{"id": ...}, ...]}.
Result<std::vector<RemoteModel>> parse_model_list(std::string_view body);

// An HTTP error body's message and code ({"error": {"message", "code"}},
// {"error": "text"} or {"message": ...}); empty when there is none. At most
// a few hundred bytes of it, on one line.
struct ErrorBody {
  std::string message;
  std::string code;
};
ErrorBody parse_error_body(std::string_view body);

}  // namespace hearth::remote
