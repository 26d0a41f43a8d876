// A client of an OpenAI-compatible server (vLLM, llama.cpp's server, Ollama,
// another Hearth): lists its models and streams chat completions, reporting
// content and reasoning as they arrive, the token counts the server sends
// and the same speed figures as local generation (time to first token,
// tokens per second). Blocking calls, each run by a local event loop: usable
// from the engine thread and from hearth-cli. Create, use and destroy it on
// one thread (its QNetworkAccessManager's).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remote/chat_protocol.h"
#include "remote/endpoint.h"
#include "remote/http_exchange.h"
#include "remote/remote_error.h"

class QNetworkAccessManager;

namespace hearth::remote {

struct StreamCallbacks {
  std::function<void(std::string_view piece)> on_content;
  std::function<void(std::string_view piece)> on_reasoning;
  // Before each retry of a rate-limited request: the wait and the attempt.
  std::function<void(int wait_ms, int attempt)> on_retry;
};

// A streamed reply, complete or not. On an error the text received so far
// stays here, and `cut` says the stream ended before the server's [DONE].
struct ChatReply {
  std::string content;
  std::string reasoning;
  std::string finish_reason;  // "stop", "length", ... as the server said; empty when it did not
  std::optional<Usage> usage;
  double ttft_ms = 0;            // from sending the request that was answered to the first piece
  double tokens_per_second = 0;  // completion tokens after the first over the time they took
  int64_t pieces = 0;            // content and reasoning deltas received
  int retries = 0;               // rate-limited attempts that were retried
  bool cancelled = false;
  bool cut = false;
  std::optional<RemoteError> error;

  bool ok() const { return !error.has_value(); }
  // Completion tokens: the server's count, else the pieces received.
  int64_t completion_tokens() const { return usage ? usage->completion_tokens : pieces; }
};

class OpenAiClient {
 public:
  explicit OpenAiClient(EndpointConfig config);
  ~OpenAiClient();
  OpenAiClient(const OpenAiClient&) = delete;
  OpenAiClient& operator=(const OpenAiClient&) = delete;

  const EndpointConfig& config() const { return config_; }
  // The checked base URL, or why the policy refuses it.
  const RemoteResult<QUrl>& base_url() const { return base_; }

  RemoteResult<std::vector<RemoteModel>> list_models(const CancelledFn& cancelled = {});
  // Streams one chat completion. Cancelling aborts the stream: the reply
  // then holds what arrived, with `cancelled` set and no error.
  ChatReply stream_chat(const ChatCall& call, const StreamCallbacks& callbacks, const CancelledFn& cancelled = {});

 private:
  EndpointConfig config_;
  RemoteResult<QUrl> base_;
  std::unique_ptr<QNetworkAccessManager> network_;
};

// The wait a 429 answer asks for (Retry-After in seconds or as an HTTP date,
// or OpenAI's retry-after-ms), or nullopt when it names none.
std::optional<int> retry_after_ms(const ExchangeResult& result);

}  // namespace hearth::remote
