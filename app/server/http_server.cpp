#include <hearth/server/http_server.h>

#include <fmt/format.h>
#include <hearth/server/auth.h>
#include <hearth/server/openai_request.h>
#include <hearth/server/openai_response.h>

#include <nlohmann/json.hpp>

#include <sys/socket.h>

#include "server_state.h"

namespace hearth::server {

namespace {

// Seconds a client told to come back later (429, 503) should wait.
constexpr int kRetryAfterSeconds = 1;

// Hands cpp-httplib's accepted connections to the shared, capped pool (each
// listener gets its own queue object; cpp-httplib deletes it on stop).
class PoolQueue final : public httplib::TaskQueue {
 public:
  explicit PoolQueue(ConnectionPool& pool) : pool_(pool) {}
  void enqueue(std::function<void()> fn) override { pool_.enqueue(std::move(fn)); }
  void shutdown() override {}

 private:
  ConnectionPool& pool_;
};

// Bursts of connections must wait in the kernel's queue, not be refused:
// cpp-httplib 0.11 listens with a backlog of 5, and a client whose connection
// sat unaccepted has its first bytes retransmitted late. The listening socket
// is cpp-httplib's protected member; listen() again raises the backlog.
constexpr int kListenBacklog = 1024;

class Listener final : public httplib::Server {
 public:
  void raise_backlog() { ::listen(svr_sock_, kListenBacklog); }
};

void add_cors(const HttpServer::State& s, const httplib::Request& req, httplib::Response& res) {
  const std::string origin = req.get_header_value("Origin");
  if (!origin.empty() && origin_allowed(origin, s.config.cors_origins)) {
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Vary", "Origin");
  }
}

// Every request passes here before its body is read: over-capacity, Host,
// Origin, CORS preflight and the bearer token, in that order.
httplib::Server::HandlerResponse gate(HttpServer::State& s, const httplib::Request& req, httplib::Response& res) {
  res.set_header("Cache-Control", "no-store");
  if (s.pool->rejecting()) {
    send_error(res, 503, "the server has too many open connections; retry shortly", "server_error", "too_many_connections");
    return httplib::Server::HandlerResponse::Handled;
  }
  const std::string host = req.get_header_value("Host");
  if (!host_allowed(host, s.addresses)) {
    send_error(res, 403,
               fmt::format("the Host header '{}' is not this server's address; use localhost or 127.0.0.1",
                           host.substr(0, 256)),
               "invalid_request_error", "host_not_allowed");
    return httplib::Server::HandlerResponse::Handled;
  }
  const std::string origin = req.get_header_value("Origin");
  if (!origin.empty() && !origin_allowed(origin, s.config.cors_origins)) {
    send_error(res, 403,
               fmt::format("requests from the origin '{}' are not allowed (hearth-cli serve --cors-origin lists them)",
                           origin.substr(0, 256)),
               "invalid_request_error", "origin_not_allowed");
    return httplib::Server::HandlerResponse::Handled;
  }
  if (req.method == "OPTIONS") {
    // A preflight carries no token; it is answered only for a listed origin.
    if (origin.empty()) {
      send_error(res, 405, "OPTIONS is answered only to a browser's preflight", "invalid_request_error");
      return httplib::Server::HandlerResponse::Handled;
    }
    add_cors(s, req, res);
    res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
    res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
    res.set_header("Access-Control-Max-Age", "600");
    res.status = 204;
    return httplib::Server::HandlerResponse::Handled;
  }
  add_cors(s, req, res);
  if (!bearer_matches(req.get_header_value("Authorization"), s.config.api_key)) {
    res.set_header("WWW-Authenticate", "Bearer");
    send_error(res, 401,
               req.has_header("Authorization") ? "the API key is not valid"
                                               : "an API key is required (Authorization: Bearer <key>)",
               "authentication_error", "invalid_api_key");
    return httplib::Server::HandlerResponse::Handled;
  }
  return httplib::Server::HandlerResponse::Unhandled;
}

void install_routes(HttpServer::State& s, httplib::Server& http) {
  http.set_pre_routing_handler([&s](const httplib::Request& req, httplib::Response& res) { return gate(s, req, res); });
  http.Get("/health", [&s](const httplib::Request&, httplib::Response& res) {
    const int64_t pending = s.backend.pending() + (s.config.auto_route ? s.config.auto_route->large->pending() : 0);
    nlohmann::json j = {{"status", "ok"}, {"pending", pending}, {"in_flight", s.in_flight.load()},
                        {"served", s.total.load()}, {"cancelled", s.cancelled.load()}};
    if (s.config.auto_route) j["routed"] = {{"small", s.routed[0].load()}, {"large", s.routed[1].load()}};
    if (const SpeculationTotals spec = s.backend.speculation(); spec.requests > 0) {
      j["speculation"] = {{"requests", spec.requests}, {"drafted", spec.drafted}, {"accepted", spec.accepted}};
    }
    res.set_content(j.dump(), "application/json");
  });
  http.Get("/v1/models", [&s](const httplib::Request&, httplib::Response& res) {
    std::vector<ModelDescription> models{s.backend.model()};
    if (const auto& route = s.config.auto_route) {
      const ModelDescription& large = route->large->model();
      models.push_back(large);
      // "auto" holds what both models hold.
      models.push_back(ModelDescription{route->id, std::min(s.backend.model().context_length, large.context_length),
                                        std::max(s.backend.model().created, large.created)});
    }
    res.set_content(models_response(models), "application/json");
  });
  http.Post("/v1/chat/completions",
            [&s](const httplib::Request& req, httplib::Response& res) { handle_completion(s, true, req, res); });
  http.Post("/v1/completions",
            [&s](const httplib::Request& req, httplib::Response& res) { handle_completion(s, false, req, res); });
  // Statuses cpp-httplib sets itself (404, 413, 400 for a bad request line)
  // get an OpenAI error body too.
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    switch (res.status) {
      case 404:
        send_error(res, 404, fmt::format("there is no endpoint {} {}", req.method, req.path.substr(0, 256)),
                   "invalid_request_error", "unknown_url");
        break;
      case 405:
        send_error(res, 405, "method not allowed", "invalid_request_error");
        break;
      case 413:
        send_error(res, 413, "the request body is larger than the 8 MiB limit", "invalid_request_error",
                   "request_too_large");
        break;
      case 414:
        send_error(res, 414, "the request line is too long", "invalid_request_error");
        break;
      default:
        send_error(res, res.status, fmt::format("the request could not be served (HTTP {})", res.status),
                   res.status >= 500 ? "server_error" : "invalid_request_error");
    }
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, fmt::format("internal error: {}", what), "server_error");
  });
  http.set_payload_max_length(s.config.max_body_bytes);
  http.set_read_timeout(s.config.read_timeout);
  http.set_write_timeout(s.config.write_timeout);
  // One request per connection: the request deadline is per connection.
  http.set_keep_alive_max_count(1);
  // How long a new connection may stay silent; the request deadline covers the rest.
  http.set_keep_alive_timeout(s.config.request_deadline.count());
  http.new_task_queue = [&s] { return new PoolQueue(*s.pool); };
}

}  // namespace

void send_error(httplib::Response& res, int status, const std::string& message, const std::string& type,
                const std::string& code, const std::string& param) {
  ApiError e;
  e.status = status;
  e.message = message;
  e.type = type;
  e.code = code;
  e.param = param;
  res.status = status;
  if (status == 429 || status == 503) res.set_header("Retry-After", std::to_string(kRetryAfterSeconds));
  res.set_content(to_json(e), "application/json");
}

HttpServer::HttpServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() { stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::start(CompletionBackend& backend, ServerConfig config) {
  if (config.api_key.empty()) return make_error(ErrorCode::InvalidArgument, "the server needs an API key");
  if (config.auto_route && !config.auto_route->large) {
    return make_error(ErrorCode::InvalidArgument, "the auto route needs a large model");
  }
  const bool defaults = config.hosts.empty();
  if (defaults) config.hosts = {"127.0.0.1", "::1"};
  auto state = std::make_unique<State>(backend, config);
  State& s = *state;
  s.pool = std::make_unique<ConnectionPool>(config.max_connections, config.max_waiting_connections);
  int port = config.port;
  for (const auto& host : config.hosts) {
    auto http = std::make_unique<Listener>();
    install_routes(s, *http);
    bool bound = false;
    if (port == 0) {
      port = http->bind_to_any_port(host);
      bound = port > 0;
    } else {
      bound = http->bind_to_port(host, port);
    }
    if (!bound) {
      // ::1 is absent on machines without IPv6; loopback v4 still serves.
      if (defaults && host == "::1" && !s.listeners.empty()) continue;
      return make_error(ErrorCode::Io, fmt::format("cannot listen on {} port {} (in use, or not an address of this machine)",
                                                   host, config.port == 0 ? std::string("(any)") : std::to_string(port)));
    }
    http->raise_backlog();
    s.addresses.push_back(host_name(host.find(':') != std::string::npos ? "[" + host + "]" : host));
    s.listeners.push_back(std::move(http));
  }
  s.port = port;
  s.monitor = std::make_unique<ConnectionMonitor>(port, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                            config.request_deadline));
  for (auto& http : s.listeners) {
    s.threads.emplace_back([h = http.get()] { h->listen_after_bind(); });
  }
  // cpp-httplib's stop() does nothing to a listener whose thread has not yet
  // marked itself running, which would leave that thread in accept() for
  // ever; so start() returns only once every listener runs.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (auto& http : s.listeners) {
    while (!http->is_running() && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

void HttpServer::stop() {
  if (!state_ || state_->stopping.exchange(true)) return;
  for (auto& http : state_->listeners) http->stop();
  for (auto& t : state_->threads) {
    if (t.joinable()) t.join();
  }
  state_->pool->shutdown();
  state_->monitor.reset();
}

int HttpServer::port() const { return state_->port; }
const std::vector<std::string>& HttpServer::addresses() const { return state_->addresses; }
int64_t HttpServer::requests_in_flight() const { return state_->in_flight.load(); }
int64_t HttpServer::requests_total() const { return state_->total.load(); }

}  // namespace hearth::server
