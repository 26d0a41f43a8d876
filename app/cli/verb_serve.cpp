// hearth-cli serve: the local OpenAI-compatible API server (app/server) on
// one model, until SIGINT or SIGTERM. Loopback only unless --host says
// otherwise; every request needs the bearer token kept in --api-key-file.
#include <fmt/format.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/embedder.h>
#include <hearth/server/auth.h>
#include <hearth/server/http_server.h>

#include <signal.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>

#include "args.h"
#include "engine_setup.h"
#include "serve_backend.h"
#include "spec_setup.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

bool is_loopback(const std::string& host) { return host == "127.0.0.1" || host == "::1" || host == "localhost"; }

}  // namespace

int run_serve(const std::vector<std::string>& argv) {
  VerbSpec spec{"serve", "--model M.gguf [--host 127.0.0.1] [--port 8080] [--api-key-file F] [--parallel N] [--ctx N] ...",
                "The local OpenAI-compatible API server (/v1/models, /v1/chat/completions, /v1/completions, /health).",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"host", FlagKind::Value, "address to listen on (default 127.0.0.1 and ::1)", "", "ADDR"},
                 {"port", FlagKind::Value, "port (default 8080; 0 picks a free one)", "", "N"},
                 {"api-key-file", FlagKind::Value, "file holding the bearer token, created (mode 0600) when missing "
                                                   "(default ~/.config/hearth/api-key)", "", "F"},
                 {"parallel", FlagKind::Value, "requests served at once (default 1)", "", "N"},
                 {"ctx", FlagKind::Value, "context size (default 4096)", "c", "N"},
                 {"max-batch-tokens", FlagKind::Value, "tokens per forward pass (default 256)", "", "N"},
                 {"cors-origin", FlagKind::Value, "an origin browsers may call from (repeatable; none by default)", "", "O"},
                 {"large-model", FlagKind::Value, "a second, larger model: served under its own name and, with "
                                                  "--model as the small one, as \"auto\"", "", "L.gguf"},
                 {"route-min-confidence", FlagKind::Value, "auto: the small model's least mean log-probability "
                                                           "of its first tokens (default -2.0)", "", "X"},
                 {"route-min-familiarity", FlagKind::Value, "auto: the least mean log-probability of the question "
                                                            "under the small model (default -5.0)", "", "X"},
                 {"semantic-cache", FlagKind::Value, "answer questions close in meaning to earlier ones (temperature "
                                                     "0, same context) from this SQLite file; off by default", "", "F"},
                 {"embedding-model", FlagKind::Value, "the embedding model the semantic cache compares questions "
                                                      "with", "", "E.gguf"},
                 {"semantic-threshold", FlagKind::Value, "the least cosine similarity of two questions for a cached "
                                                         "reply (default 0.95)", "", "X"}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  for (auto& f : speculation_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  auto ctx = args->get_int("ctx", 4096, 16, 1 << 22);
  auto port = args->get_int("port", 8080, 0, 65535);
  auto parallel = args->get_int("parallel", 1, 1, 256);
  auto batch = args->get_int("max-batch-tokens", 256, 1, 1 << 16);
  for (const Error* e : {ctx.ok() ? nullptr : &ctx.error(), port.ok() ? nullptr : &port.error(),
                         parallel.ok() ? nullptr : &parallel.error(), batch.ok() ? nullptr : &batch.error()}) {
    if (e) {
      std::fprintf(stderr, "serve: %s\n", e->message.c_str());
      return kExitUsage;
    }
  }
  if (!args->has("model")) {
    std::fprintf(stderr, "serve: --model is required\n");
    return kExitUsage;
  }
  server::ServerConfig config;
  config.port = static_cast<int>(*port);
  if (auto host = args->get("host")) {
    config.hosts = {*host};
    if (!is_loopback(*host)) {
      std::fprintf(stderr,
                   "serve: warning: listening on %s, not only on this machine; other machines that reach it can use "
                   "the model with the API key\n",
                   host->c_str());
    }
  }
  for (const auto& origin : args->get_all("cors-origin")) {
    if (origin == "*" || origin.find("://") == std::string::npos) {
      std::fprintf(stderr, "serve: --cors-origin takes one origin such as http://localhost:3000, not '%s'\n",
                   origin.c_str());
      return kExitUsage;
    }
    config.cors_origins.push_back(origin);
  }
  const std::filesystem::path key_file = args->has("api-key-file") ? std::filesystem::path(*args->get("api-key-file"))
                                                                   : server::default_key_file();
  auto key = server::load_or_create_token(key_file);
  if (!key.ok()) {
    std::fprintf(stderr, "serve: %s\n", key.error().message.c_str());
    return kExitBadInput;
  }
  config.api_key = *key;

  // SIGINT and SIGTERM end the wait at the bottom. They are blocked before
  // any thread starts (the engine's thread pool, the backend's worker, the
  // server's), so every thread inherits the mask and only the sigwait below
  // receives them; one that arrives during the load waits for it. A client
  // that hangs up must not kill the process with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  // The KV of every parallel request joins the memory check and the
  // placement of --gpu-layers auto (the scheduler's pool holds them all).
  auto setup = setup_engine(*args, *ctx * *parallel);
  if (!setup.ok()) {
    std::fprintf(stderr, "serve: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  auto codec = TextCodec::from_model(*setup->model);
  if (!codec.ok()) {
    std::fprintf(stderr, "serve: %s\n", codec.error().message.c_str());
    return kExitBadInput;
  }
  const std::string model_path = *args->get("model");
  const std::string model_id = std::filesystem::path(model_path).stem().string();
  struct stat st {};
  const int64_t created = ::stat(model_path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : 0;
  auto speculation = setup_speculation(*args, *setup->model, *ctx, setup->threads);
  if (!speculation.ok()) {
    std::fprintf(stderr, "serve: %s\n", speculation.error().message.c_str());
    return speculation.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  (*speculation)->speculator.reset();  // the server makes one per request
  const auto max_queued = static_cast<size_t>(std::max<int64_t>(16, 4 * *parallel));
  auto backend = make_backend(*setup, codec->format(), ServeShape{*ctx, *parallel, *batch, max_queued}, model_id,
                              created, speculator_factory(**speculation, *setup->model, *ctx));
  if (!backend.ok()) {
    std::fprintf(stderr, "serve: %s\n", backend.error().message.c_str());
    return kExitBadInput;
  }

  // The auto route: a second engine on the large model, served one request
  // at a time beside the first.
  std::optional<EngineSetup> large_setup;
  std::optional<TextCodec> large_codec;
  std::unique_ptr<server::CompletionBackend> large_backend;
  if (auto large_path = args->get("large-model")) {
    auto min_confidence = args->get_double("route-min-confidence", -2.0, -50.0, 0.0);
    auto min_familiarity = args->get_double("route-min-familiarity", -5.0, -50.0, 0.0);
    if (!min_confidence.ok() || !min_familiarity.ok()) {
      std::fprintf(stderr, "serve: %s\n",
                   (!min_confidence.ok() ? min_confidence.error() : min_familiarity.error()).message.c_str());
      return kExitUsage;
    }
    ParsedArgs large_args = *args;
    large_args.values_["model"] = *large_path;
    auto made = setup_engine(large_args, *ctx);
    if (!made.ok()) {
      std::fprintf(stderr, "serve: --large-model: %s\n", made.error().message.c_str());
      return kExitBadInput;
    }
    large_setup.emplace(std::move(made).value());
    auto made_codec = TextCodec::from_model(*large_setup->model);
    if (!made_codec.ok()) {
      std::fprintf(stderr, "serve: --large-model: %s\n", made_codec.error().message.c_str());
      return kExitBadInput;
    }
    large_codec.emplace(std::move(made_codec).value());
    const std::string large_id = std::filesystem::path(*large_path).stem().string();
    if (large_id == model_id || large_id == "auto") {
      std::fprintf(stderr, "serve: --large-model must have another name than --model and 'auto'\n");
      return kExitUsage;
    }
    const int64_t large_created = ::stat(large_path->c_str(), &st) == 0 ? static_cast<int64_t>(st.st_mtime) : 0;
    auto made_backend = make_backend(*large_setup, large_codec->format(), ServeShape{*ctx, 1, *batch, max_queued},
                                     large_id, large_created);
    if (!made_backend.ok()) {
      std::fprintf(stderr, "serve: --large-model: %s\n", made_backend.error().message.c_str());
      return kExitBadInput;
    }
    large_backend = std::move(made_backend).value();
    server::AutoRoute route;
    route.large = large_backend.get();
    route.rules.min_mean_logprob = *min_confidence;
    route.rules.min_familiarity = *min_familiarity;
    config.auto_route = route;
  }

  // The semantic cache: its own embedding model on the CPU, one text at a time.
  std::unique_ptr<backend::Backend> embed_backend;
  std::unique_ptr<runtime::Embedder> embedder;
  std::mutex embed_mutex;
  std::unique_ptr<server::SemanticReplyCache> semantic_cache;
  if (auto cache_file = args->get("semantic-cache")) {
    auto threshold = args->get_double("semantic-threshold", 0.95, 0.0, 1.0);
    if (!threshold.ok() || !args->has("embedding-model")) {
      std::fprintf(stderr, "serve: %s\n", threshold.ok() ? "--semantic-cache needs --embedding-model"
                                                         : threshold.error().message.c_str());
      return kExitUsage;
    }
    embed_backend = backend::make_cpu_backend({});
    auto made = runtime::Embedder::load(*args->get("embedding-model"), *embed_backend);
    if (!made.ok()) {
      std::fprintf(stderr, "serve: --embedding-model: %s\n", made.error().message.c_str());
      return kExitBadInput;
    }
    embedder = std::move(made).value();
    server::SemanticCacheConfig cache_config;
    cache_config.file = *cache_file;
    cache_config.models = {model_path};
    if (auto large_path = args->get("large-model")) cache_config.models.push_back(*large_path);
    cache_config.min_similarity = *threshold;
    auto embed = [&](const std::string& text) -> Result<std::vector<float>> {
      std::lock_guard lock(embed_mutex);
      runtime::EmbedOptions options;
      options.role = runtime::TextRole::Query;
      HEARTH_TRY(runtime::Embeddings e, embedder->embed(std::span<const std::string>(&text, 1), options));
      return std::move(e.vectors.front());
    };
    auto opened = server::SemanticReplyCache::open(cache_config, embed);
    if (!opened.ok()) {
      std::fprintf(stderr, "serve: --semantic-cache: %s\n", opened.error().message.c_str());
      return kExitBadInput;
    }
    semantic_cache = std::move(opened).value();
    config.semantic_cache = semantic_cache.get();
  }

  auto http = server::HttpServer::start(**backend, config);
  if (!http.ok()) {
    std::fprintf(stderr, "serve: %s\n", http.error().message.c_str());
    return kExitBadInput;
  }
  const std::string& first = (*http)->addresses().front();
  const std::string shown = first.find(':') != std::string::npos ? "[" + first + "]" : first;
  std::fprintf(stderr, "serve: model '%s', context %lld; API key in %s\n", model_id.c_str(),
               static_cast<long long>(*ctx), key_file.string().c_str());
  if (config.auto_route) {
    std::fprintf(stderr, "serve: large model '%s'; 'auto' answers with '%s' or '%s' (X-Hearth-Route says which)\n",
                 config.auto_route->large->model().id.c_str(), model_id.c_str(),
                 config.auto_route->large->model().id.c_str());
  }
  std::fprintf(stderr, "listening on http://%s:%d\n", shown.c_str(), (*http)->port());
  std::fflush(stderr);

  int received = 0;
  sigwait(&stop_signals, &received);
  std::fprintf(stderr, "serve: stopping (%s)\n", received == SIGINT ? "SIGINT" : "SIGTERM");
  (*http)->stop();
  return kExitOk;
}

}  // namespace hearth::cli
