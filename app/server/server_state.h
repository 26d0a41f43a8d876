// What the listeners and the handlers of one HttpServer share (internal).
#pragma once

#include <hearth/server/http_server.h>
#include <httplib.h>

#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "connection_monitor.h"
#include "connection_pool.h"

namespace hearth::server {

struct HttpServer::State {
  CompletionBackend& backend;
  ServerConfig config;
  std::vector<std::string> addresses;
  int port = 0;
  std::unique_ptr<ConnectionPool> pool;
  std::unique_ptr<ConnectionMonitor> monitor;
  std::vector<std::unique_ptr<httplib::Server>> listeners;
  std::vector<std::thread> threads;
  std::atomic<int64_t> in_flight{0};
  std::atomic<int64_t> total{0};
  std::atomic<int64_t> cancelled{0};  // generations stopped because their client went away
  std::atomic<int64_t> routed[2] = {0, 0};  // "auto" requests sent to the small [0] and the large [1] model
  std::atomic<bool> stopping{false};

  // Seeds for requests that give none, and response ids.
  std::mutex random_mutex;
  std::mt19937_64 random{std::random_device{}()};
  uint64_t next_random() {
    std::lock_guard lock(random_mutex);
    return random();
  }

  State(CompletionBackend& b, ServerConfig c) : backend(b), config(std::move(c)) {}

  // The ids requests may name: the server's model, then the large model and
  // "auto" when an auto route is set.
  std::vector<std::string> model_ids() const {
    std::vector<std::string> ids{backend.model().id};
    if (config.auto_route) {
      ids.push_back(config.auto_route->large->model().id);
      ids.push_back(config.auto_route->id);
    }
    return ids;
  }
};

// Writes an OpenAI error body with its status (and Retry-After for 429/503).
void send_error(httplib::Response& res, int status, const std::string& message, const std::string& type,
                const std::string& code = {}, const std::string& param = {});

// POST /v1/chat/completions and /v1/completions.
void handle_completion(HttpServer::State& state, bool chat, const httplib::Request& req, httplib::Response& res);

}  // namespace hearth::server
