// The local OpenAI-compatible API inside the app (Settings -> Local API):
// the server library (app/server) on the model the app has loaded. It runs
// its batches on a CPU backend of its own (the weights are shared, read
// only), and its batch loop waits at a ChatPriorityGate whenever the app's
// own chat is generating, so the user's replies keep their speed.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/chat_format.h>

#include <filesystem>
#include <memory>
#include <string>

#include "engine/engine_types.h"
#include "engine_service/chat_priority_gate.h"

namespace hearth::app {

struct LocalApiConfig {
  std::string host = "127.0.0.1";
  int port = 8080;
  int parallel = 2;
  int64_t n_ctx = 2048;   // per request slot
  int threads = 0;        // the API's CPU threads; 0: one per core
  DType kv_type = DType::F16;
  std::filesystem::path key_file;
  bool new_key = false;
  std::string model_id;   // what /v1/models lists
  // Speculative decoding for API requests: n-gram drafts (each request its
  // own drafter and policy), on when the chat speculates at all. A draft
  // model stays the chat's: it runs on the chat's thread and backend.
  bool ngram_drafts = false;
  int32_t draft_max = 7;
};

class LocalApiHost {
 public:
  // Binds and starts serving; errors name what failed (the port in use, the
  // key file refused, the memory for the KV slots).
  static Result<std::unique_ptr<LocalApiHost>> start(const model::Model& model, const runtime::ChatFormat& format,
                                                     const LocalApiConfig& config);
  ~LocalApiHost();  // stops accepting, ends running requests, joins
  LocalApiHost(const LocalApiHost&) = delete;
  LocalApiHost& operator=(const LocalApiHost&) = delete;

  ChatPriorityGate& gate() { return gate_; }
  // The figures now; any thread.
  ui::LocalApiStatus status() const;
  const LocalApiConfig& config() const { return config_; }

 private:
  struct Parts;
  LocalApiHost(LocalApiConfig config, std::string token);
  LocalApiConfig config_;
  std::string token_;
  ChatPriorityGate gate_;
  std::unique_ptr<Parts> parts_;
};

// "http://HOST:PORT/v1" (an IPv6 address in brackets).
QString local_api_url(const std::string& host, int port);

}  // namespace hearth::app
