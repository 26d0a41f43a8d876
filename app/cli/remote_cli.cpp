#include "remote_cli.h"

#include <QCoreApplication>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include "remote/context_fit.h"
#include "remote/openai_client.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

// Local flags that mean nothing for a remote model.
constexpr const char* kLocalOnly[] = {"model", "tokens", "raw", "print-ids", "spec", "draft-model", "draft-max",
                                      "backend", "threads", "gpu-layers", "kv-type", "prefix-cache"};

// Qt Network needs an application object; hearth-cli makes one only here.
struct QtApp {
  int argc = 1;
  char name[16] = "hearth-cli";
  char* argv[2] = {name, nullptr};
  std::optional<QCoreApplication> app;
  QtApp() {
    if (QCoreApplication::instance() == nullptr) app.emplace(argc, argv);
  }
};

struct RemoteSetup {
  remote::EndpointConfig config;
  std::string model;
  remote::ChatCall call;  // sampling and limits; messages filled by the verb
};

// Reads the remote flags; prints the problem and returns the exit code on failure.
std::optional<RemoteSetup> read_setup(const char* verb, const ParsedArgs& args, int default_n, int& exit_code) {
  exit_code = kExitUsage;
  for (const char* flag : kLocalOnly) {
    if (args.has(flag)) {
      std::fprintf(stderr, "%s: --%s is for local models; it cannot be used with --endpoint\n", verb, flag);
      return std::nullopt;
    }
  }
  RemoteSetup s;
  s.config.base_url = QString::fromStdString(*args.get("endpoint"));
  s.config.allow_lan = args.has("allow-lan");
  if (auto env = args.get("api-key-env")) {
    const char* key = std::getenv(env->c_str());
    if (key == nullptr || *key == '\0') {
      std::fprintf(stderr, "%s: --api-key-env names %s, but that environment variable is not set\n", verb,
                   env->c_str());
      return std::nullopt;
    }
    s.config.api_key = QString::fromUtf8(key);
  }
  auto timeout = args.get_double("remote-timeout", 120.0, 0.1, 86400.0);
  auto n = args.get_int("n-predict", default_n, 1, 1 << 20);
  auto temp = args.get_double("temp", 0.8, 0.0, 2.0);
  auto top_p = args.get_double("top-p", 0.95, 0.0, 1.0);
  auto seed = args.get_int("seed", 0, 0, INT64_MAX);
  for (const Error* e : {timeout.ok() ? nullptr : &timeout.error(), n.ok() ? nullptr : &n.error(),
                         temp.ok() ? nullptr : &temp.error(), top_p.ok() ? nullptr : &top_p.error(),
                         seed.ok() ? nullptr : &seed.error()}) {
    if (e) {
      std::fprintf(stderr, "%s: %s\n", verb, e->message.c_str());
      return std::nullopt;
    }
  }
  s.config.inactivity_timeout_ms = static_cast<int>(*timeout * 1000.0);
  s.call.max_tokens = static_cast<int>(*n);
  s.call.temperature = *temp;
  s.call.top_p = *top_p;
  s.call.seed = *seed;
  // Extensions OpenAI's own API refuses: sent only when asked for.
  auto top_k = args.get_int("top-k", 40, 0, 1 << 20);
  auto min_p = args.get_double("min-p", 0.05, 0.0, 1.0);
  auto repeat = args.get_double("repeat-penalty", 1.0, 0.0, 10.0);
  for (const Error* e : {top_k.ok() ? nullptr : &top_k.error(), min_p.ok() ? nullptr : &min_p.error(),
                         repeat.ok() ? nullptr : &repeat.error()}) {
    if (e) {
      std::fprintf(stderr, "%s: %s\n", verb, e->message.c_str());
      return std::nullopt;
    }
  }
  if (args.has("top-k")) s.call.top_k = static_cast<int>(*top_k);
  if (args.has("min-p")) s.call.min_p = *min_p;
  if (args.has("repeat-penalty")) s.call.repeat_penalty = *repeat;
  auto base = remote::checked_base_url(s.config.base_url, s.config.allow_lan);
  if (!base.ok()) {
    std::fprintf(stderr, "%s: %s\n", verb, base.error().message.c_str());
    return std::nullopt;
  }
  s.model = args.get_or("remote-model", "");
  exit_code = kExitOk;
  return s;
}

// The context length the endpoint reports for `model` (0: it does not say,
// or the list could not be read; the reply then tells).
int64_t context_of(remote::OpenAiClient& client, const std::string& model) {
  auto models = client.list_models();
  if (!models.ok()) return 0;
  for (const auto& m : *models) {
    if (m.id == model) return m.context_length;
  }
  return 0;
}

// --remote-model, or the endpoint's only model when it serves just one.
std::optional<std::string> choose_model(const char* verb, remote::OpenAiClient& client, const std::string& asked,
                                        int& exit_code) {
  if (!asked.empty()) return asked;
  auto models = client.list_models();
  if (!models.ok()) {
    std::fprintf(stderr, "%s: %s\n", verb, models.error().message.c_str());
    exit_code = kExitBadInput;
    return std::nullopt;
  }
  if (models->size() == 1) return models->front().id;
  std::string names;
  for (const auto& m : *models) names += (names.empty() ? "" : ", ") + m.id;
  std::fprintf(stderr, "%s: --remote-model is required; the endpoint serves %s\n", verb,
               names.empty() ? "no models" : names.c_str());
  exit_code = kExitUsage;
  return std::nullopt;
}

remote::StreamCallbacks print_streams(bool& thinking) {
  remote::StreamCallbacks cb;
  cb.on_content = [&thinking](std::string_view piece) {
    if (thinking) std::fputs("\n[/thinking]\n", stderr);
    thinking = false;
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
  // Reasoning is shown apart, on stderr, so stdout holds the answers only.
  cb.on_reasoning = [&thinking](std::string_view piece) {
    if (!thinking) std::fputs("[thinking] ", stderr);
    thinking = true;
    std::fwrite(piece.data(), 1, piece.size(), stderr);
  };
  cb.on_retry = [](int wait_ms, int attempt) {
    std::fprintf(stderr, "[rate limited: retry %d in %.1f s]\n", attempt, wait_ms / 1000.0);
  };
  return cb;
}

const char* stop_of(const remote::ChatReply& reply) {
  if (reply.cancelled) return "cancelled";
  if (reply.cut) return "cut";
  if (reply.finish_reason == "length") return "length";
  return reply.finish_reason.empty() ? "unknown" : "eos";
}

void print_stats(const remote::ChatReply& reply, const remote::OpenAiClient& client, const std::string& model) {
  const long long prompt = reply.usage ? static_cast<long long>(reply.usage->prompt_tokens) : -1;
  std::fprintf(stderr, "prompt %lld tokens; generated %lld tokens, %.1f tok/s; ttft %.1f ms; stop: %s; endpoint %s, model %s\n",
               prompt, static_cast<long long>(reply.completion_tokens()), reply.tokens_per_second, reply.ttft_ms,
               stop_of(reply), remote::display_url(*client.base_url()).c_str(), model.c_str());
}

}  // namespace

std::vector<FlagSpec> remote_flags() {
  return {{"endpoint", FlagKind::Value, "a remote OpenAI-compatible server's base URL instead of --model", "", "URL"},
          {"remote-model", FlagKind::Value, "the model to use on --endpoint", "", "NAME"},
          {"api-key-env", FlagKind::Value, "environment variable holding the endpoint's API key", "", "VAR"},
          {"allow-lan", FlagKind::Switch, "allow plain http to local-network addresses", "", ""},
          {"remote-timeout", FlagKind::Value, "seconds of silence from the server before giving up (default 120)", "",
           "S"}};
}

int run_generate_remote(const ParsedArgs& args) {
  int exit_code = kExitOk;
  if (!args.has("prompt")) {
    std::fprintf(stderr, "generate: --prompt is required with --endpoint\n");
    return kExitUsage;
  }
  auto setup = read_setup("generate", args, 128, exit_code);
  if (!setup) return exit_code;
  QtApp qt;
  remote::OpenAiClient client(setup->config);
  auto model = choose_model("generate", client, setup->model, exit_code);
  if (!model) return exit_code;
  setup->call.model = *model;
  setup->call.messages = {{"user", *args.get("prompt")}};
  bool thinking = false;
  const auto reply = client.stream_chat(setup->call, print_streams(thinking));
  if (thinking) std::fputs("\n[/thinking]\n", stderr);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  if (args.has("stats")) print_stats(reply, client, *model);
  if (reply.error) {
    std::fprintf(stderr, "generate: %s\n", reply.error->message.c_str());
    return kExitBadInput;
  }
  return kExitOk;
}

int run_chat_remote(const ParsedArgs& args) {
  int exit_code = kExitOk;
  auto setup = read_setup("chat", args, 512, exit_code);
  if (!setup) return exit_code;
  if (args.has("overflow") && args.get_or("overflow", "") != "evict") {
    std::fprintf(stderr, "chat: a remote conversation drops its oldest turns at the context limit (--overflow evict)\n");
    return kExitUsage;
  }
  const std::string reasoning = args.get_or("reasoning", "default");
  if (reasoning == "low" || reasoning == "medium" || reasoning == "high") {
    setup->call.reasoning_effort = reasoning;
  } else if (reasoning != "default") {
    std::fprintf(stderr, "chat: with --endpoint, --reasoning takes default, low, medium or high\n");
    return kExitUsage;
  }
  auto ctx_flag = args.get_int("ctx", 0, 16, 1 << 24);
  if (!ctx_flag.ok()) {
    std::fprintf(stderr, "chat: %s\n", ctx_flag.error().message.c_str());
    return kExitUsage;
  }
  QtApp qt;
  remote::OpenAiClient client(setup->config);
  auto model = choose_model("chat", client, setup->model, exit_code);
  if (!model) return exit_code;
  setup->call.model = *model;
  // Without --ctx, the model's context as the server reports it (vLLM,
  // Hearth); 0 when it does not say: nothing is trimmed.
  const int64_t ctx = args.has("ctx") ? *ctx_flag : context_of(client, *model);
  const std::string system = args.get_or("system", "");
  std::vector<remote::ChatMessage> messages;
  auto restart = [&] {
    messages.clear();
    if (!system.empty()) messages.push_back({"system", system});
  };
  restart();
  remote::TokenEstimator estimator;
  remote::ChatReply last;
  std::string line;
  while (true) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/reset") {
      restart();
      continue;
    }
    if (line == "/stats") {
      std::printf("prompt %lld tok, reply %lld tok at %.1f tok/s, ttft %.0f ms, %zu messages, endpoint %s, model %s\n",
                  last.usage ? static_cast<long long>(last.usage->prompt_tokens) : -1LL,
                  static_cast<long long>(last.completion_tokens()), last.tokens_per_second, last.ttft_ms,
                  messages.size(), remote::display_url(*client.base_url()).c_str(), model->c_str());
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({"user", line});
    auto fit = remote::fit_to_context(messages, ctx, setup->call.max_tokens.value_or(512), estimator);
    if (!fit.ok()) {
      messages.pop_back();
      std::fprintf(stderr, "chat: %s\n", fit.error().message.c_str());
      continue;
    }
    if (fit->dropped > 0) {
      std::fprintf(stderr, "[overflow: evicted turns %d-%d (about %lld tokens left)]\n", fit->first_dropped,
                   fit->first_dropped + fit->dropped - 1, static_cast<long long>(fit->estimated_tokens));
      messages = fit->messages;
    }
    setup->call.messages = messages;
    bool thinking = false;
    last = client.stream_chat(setup->call, print_streams(thinking));
    if (thinking) std::fputs("\n[/thinking]\n", stderr);
    if (last.error && !last.cut) {
      messages.pop_back();
      std::fprintf(stderr, "chat: %s\n", last.error->message.c_str());
      continue;
    }
    std::fputc('\n', stdout);
    if (last.usage) estimator.calibrate(setup->call.messages, last.usage->prompt_tokens);
    // A cut reply stays in the conversation as far as it came, marked on stderr.
    if (last.error) std::fprintf(stderr, "chat: %s\n", last.error->message.c_str());
    messages.push_back({"assistant", last.content});
  }
  return kExitOk;
}

}  // namespace hearth::cli
