// The local OpenAI-compatible HTTP server: GET /v1/models, POST
// /v1/chat/completions, POST /v1/completions, GET /health. Safe by default:
// loopback only unless told otherwise, a bearer token on every request, Host
// and Origin checked, bounded bodies, connections, waits and queues.
#pragma once

#include <hearth/core/result.h>
#include <hearth/server/auto_route.h>
#include <hearth/server/backend.h>
#include <hearth/server/semantic_reply_cache.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hearth::server {

struct ServerConfig {
  // Addresses to bind; empty: 127.0.0.1 and ::1 (the latter when the
  // machine has IPv6). The server listens on one port for all of them.
  std::vector<std::string> hosts;
  int port = 8080;  // 0: a free port (see HttpServer::port)
  std::string api_key;
  // Origins (scheme://host[:port]) browsers may call from; none by default.
  std::vector<std::string> cors_origins;
  size_t max_body_bytes = 8u << 20;
  size_t max_connections = 64;          // served at once
  size_t max_waiting_connections = 64;  // accepted and waiting; past it: 503
  std::chrono::seconds read_timeout{5};       // each read of a request
  std::chrono::seconds write_timeout{10};     // each write of a response
  std::chrono::seconds request_deadline{10};  // a whole request head and body
  // A second, large model: served under its own id and, with the server's
  // model as the small one, as "auto" (auto_route.h). None by default.
  std::optional<AutoRoute> auto_route;
  // Repeated questions answered from the semantic cache (not owned; outlives
  // the server). None by default.
  SemanticReplyCache* semantic_cache = nullptr;
};

class HttpServer {
 public:
  // Binds every address (an error names the one that failed) and starts
  // serving on background threads.
  static Result<std::unique_ptr<HttpServer>> start(CompletionBackend& backend, ServerConfig config);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Stops accepting, cancels running generations and joins the threads.
  void stop();
  int port() const;
  // The addresses actually bound (an unavailable ::1 is left out).
  const std::vector<std::string>& addresses() const;
  // Completion requests being served now, and served in all.
  int64_t requests_in_flight() const;
  int64_t requests_total() const;

  struct State;

 private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace hearth::server
