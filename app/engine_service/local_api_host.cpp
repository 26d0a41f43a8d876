#include "engine_service/local_api_host.h"

#include <fmt/format.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/speculation.h>
#include <hearth/server/auth.h>
#include <hearth/server/http_server.h>
#include <hearth/server/scheduler_backend.h>

#include <algorithm>

namespace hearth::app {

// Destroyed in reverse order: the HTTP server stops first (no new requests,
// running ones cancelled), then the batches, then their backend.
struct LocalApiHost::Parts {
  std::unique_ptr<backend::Backend> backend;
  std::unique_ptr<server::SchedulerBackend> batches;
  std::unique_ptr<server::HttpServer> http;
};

QString local_api_url(const std::string& host, int port) {
  const std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return QString::fromStdString(fmt::format("http://{}:{}/v1", shown, port));
}

LocalApiHost::LocalApiHost(LocalApiConfig config, std::string token)
    : config_(std::move(config)), token_(std::move(token)), parts_(std::make_unique<Parts>()) {}

Result<std::unique_ptr<LocalApiHost>> LocalApiHost::start(const model::Model& model,
                                                          const runtime::ChatFormat& format,
                                                          const LocalApiConfig& config) {
  if (config.key_file.empty()) return make_error(ErrorCode::InvalidArgument, "the local API needs a key file");
  HEARTH_TRY(std::string token, config.new_key ? server::regenerate_token(config.key_file)
                                                : server::load_or_create_token(config.key_file));
  std::unique_ptr<LocalApiHost> host(new LocalApiHost(config, std::move(token)));
  Parts& p = *host->parts_;
  backend::CpuBackendOptions cpu;
  cpu.threads = config.threads;
  p.backend = backend::make_cpu_backend(cpu);

  server::SchedulerBackendConfig sc;
  sc.scheduler.n_ctx = config.n_ctx;
  sc.scheduler.parallel = config.parallel;
  sc.scheduler.kv_type = config.kv_type;
  ChatPriorityGate* gate = &host->gate_;
  sc.scheduler.wait_turn = [gate] { gate->wait_turn(); };
  sc.max_queued = static_cast<size_t>(std::max(16, 4 * config.parallel));
  sc.model_id = config.model_id;
  if (config.ngram_drafts) {
    runtime::SpeculationConfig spec;
    spec.draft_max = std::clamp(config.draft_max, 1, runtime::kMaxDraftTokens);
    sc.speculators = [spec]() -> Result<std::shared_ptr<runtime::Speculator>> {
      return std::make_shared<runtime::Speculator>(std::make_unique<runtime::NgramDrafter>(), spec);
    };
  }
  HEARTH_TRY(p.batches, server::SchedulerBackend::create(model, *p.backend, format, sc));

  server::ServerConfig http;
  http.hosts = {config.host};
  http.port = config.port;
  http.api_key = host->token_;
  HEARTH_TRY(p.http, server::HttpServer::start(*p.batches, http));
  host->config_.port = p.http->port();  // the real one when 0 asked for any
  return host;
}

LocalApiHost::~LocalApiHost() {
  // A batch waiting for the chat must not hold the shutdown.
  gate_.open_for_good();
  if (parts_->http) parts_->http->stop();
  parts_->http.reset();
  parts_->batches.reset();
  parts_->backend.reset();
}

ui::LocalApiStatus LocalApiHost::status() const {
  ui::LocalApiStatus s;
  s.running = parts_->http != nullptr;
  s.url = local_api_url(config_.host, config_.port);
  s.token = QString::fromStdString(token_);
  if (parts_->batches) {
    s.pending = parts_->batches->pending();
    const server::LiveFigures f = parts_->batches->live_figures();
    s.tokens_per_second = f.tokens_per_second;
    s.latency_p50_ms = f.inter_token_p50_ms;
    s.latency_p95_ms = f.inter_token_p95_ms;
  }
  if (parts_->http) s.served = parts_->http->requests_total();
  s.yielded_steps = gate_.waits();
  return s;
}

}  // namespace hearth::app
