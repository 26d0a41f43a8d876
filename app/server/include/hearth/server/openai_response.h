// Response bodies in OpenAI's shapes: whole responses, stream chunks (as
// Server-Sent Events, ending in `data: [DONE]`), usage and logprobs.
#pragma once

#include <hearth/server/backend.h>
#include <hearth/server/openai_request.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hearth::server {

// What is common to every chunk and response of one request.
struct ResponseHeader {
  std::string id;  // chatcmpl-... or cmpl-...
  int64_t created = 0;
  std::string model;
  Endpoint endpoint = Endpoint::ChatCompletions;
};

// A whole (non-stream) response.
std::string full_response(const ResponseHeader& header, const std::string& text, const std::vector<TokenOut>& tokens,
                          bool logprobs, const Completion& done);

// Stream events, each a complete SSE frame ("data: ...\n\n").
std::string sse_first_chunk(const ResponseHeader& header);  // chat: the assistant role
std::string sse_token_chunk(const ResponseHeader& header, const TokenOut& token, bool logprobs);
std::string sse_finish_chunk(const ResponseHeader& header, const Completion& done);
std::string sse_usage_chunk(const ResponseHeader& header, const Completion& done);
std::string sse_error(const ApiError& error);
std::string sse_done();

std::string models_response(const std::vector<ModelDescription>& models);

}  // namespace hearth::server
