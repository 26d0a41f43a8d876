// The app's own chat while its local API serves a 4-stream load: the chat's
// decode tokens/s and time to first token with the API idle, then with four
// API clients streaming (each decoded in the API's batch), through the real
// EngineService, the real HTTP server on loopback and the real model.
//
//   HEARTH_BENCH_MODEL=model.gguf bench_chat_under_api [--threads N] [--tokens N] [--repeat N]
//
// With --repeat, the two replies run N rounds (one right after the other in
// each, so a slow stretch of the machine falls on both sides of that round's
// ratio); each figure is the median of the rounds', tps_ratio the median of
// the rounds' ratios, and "runs" lists every round. Prints one JSON object.
// Speculation is off on both sides, so both replies measure plain decoding.
// A measurement, not a test: it asserts nothing.
#include <QCoreApplication>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../app/api_stream_request.h"
#include "cli/stream_load.h"
#include "engine_service/engine_service.h"

namespace {

using nlohmann::json;
using hearth::app::EngineService;
namespace ui = hearth::ui;

struct Reply {
  double tps = 0, ttft_ms = 0;
  int tokens = 0;
};

Reply chat_once(EngineService& service, int id, int tokens) {
  ui::GenerationRequest chat;
  chat.turns = {{ui::ChatRole::User, QStringLiteral("Write a short story about a lighthouse keeper and a storm.")}};
  chat.sampling.temperature = 0;
  chat.max_new_tokens = tokens;
  chat.conversation_id = id;
  QSignalSpy finished(&service, &EngineService::finished);
  service.generate(id, chat);
  if (finished.isEmpty()) return {};
  const auto stats = finished.at(0).at(1).value<ui::GenerationStats>();
  return {stats.tokens_per_second, stats.ttft_ms, stats.generated_tokens};
}

}  // namespace

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  const char* model = std::getenv("HEARTH_BENCH_MODEL");
  if (!model) {
    std::fprintf(stderr, "set HEARTH_BENCH_MODEL to a GGUF file\n");
    return 2;
  }
  int threads = 2, tokens = 64, rounds = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    if (flag == "--tokens") tokens = std::atoi(argv[i + 1]);
    if (flag == "--repeat") rounds = std::max(1, std::atoi(argv[i + 1]));
  }
  QTemporaryDir dir;
  EngineService service(hearth::app::make_default_chat_engine());
  ui::LocalApiStatus last;
  QObject::connect(&service, &EngineService::localApiStatus, [&](const ui::LocalApiStatus& s) { last = s; });
  QSignalSpy loaded(&service, &EngineService::modelLoaded);
  ui::LoadRequest load;
  load.model_path = QString::fromLocal8Bit(model);
  load.context_length = 1024;
  load.gpu_layers = 0;
  load.threads = threads;
  load.speculation = QStringLiteral("off");
  service.load(load);
  if (loaded.isEmpty()) {
    std::fprintf(stderr, "the model did not load\n");
    return 1;
  }
  ui::LocalApiRequest api;
  api.enabled = true;
  api.host = QStringLiteral("127.0.0.1");
  api.port = 0;
  api.parallel = 4;
  api.context_length = 1024;
  api.key_file = dir.filePath(QStringLiteral("api-key"));
  service.configure_local_api(api);
  if (!last.running) {
    std::fprintf(stderr, "local API: %s\n", last.error.toStdString().c_str());
    return 1;
  }
  const int port = last.url.section(QLatin1Char(':'), 2).section(QLatin1Char('/'), 0, 0).toInt();
  const std::string token = last.token.toStdString();

  // Each round: a reply with the API idle, then one beside four streaming
  // API clients, back to back, so both see the same stretch of the machine.
  std::vector<Reply> idle, busy;
  int64_t yielded = 0, pending_after = 0;
  for (int round = 0; round < rounds; ++round) {
    idle.push_back(chat_once(service, 1 + 2 * round, tokens));
    constexpr int kClients = 4;
    std::atomic<int> started{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> clients;
    for (int i = 0; i < kClients; ++i) {
      clients.emplace_back([&, i] {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(600, 0);
        httplib::Request req = hearth::testing::streamed_completion(token, "Once upon a time", 900, i);
        bool counted = false;
        req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
          if (!counted) {
            counted = true;
            ++started;
          }
          return !stop.load();
        };
        (void)c.send(req);
      });
    }
    while (started.load() < kClients) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto api_before = service.local_api_status();
    busy.push_back(chat_once(service, 2 + 2 * round, tokens));
    const auto api_after = service.local_api_status();
    stop = true;
    for (auto& t : clients) t.join();
    yielded += api_after.yielded_steps - api_before.yielded_steps;
    pending_after = api_after.pending;
  }
  service.configure_local_api(ui::LocalApiRequest{});

  auto median = [](std::vector<double> v) { return hearth::cli::percentile(std::move(v), 50); };
  auto figures = [&](const std::vector<Reply>& r) {
    std::vector<double> tps, ttft;
    for (const Reply& x : r) {
      tps.push_back(x.tps);
      ttft.push_back(x.ttft_ms);
    }
    return json{{"tps", median(tps)}, {"ttft_ms", median(ttft)}, {"tokens", r.empty() ? 0 : r.back().tokens}};
  };
  std::vector<double> ratios;
  json per_round = json::array();
  for (int round = 0; round < rounds; ++round) {
    const auto r = static_cast<size_t>(round);
    ratios.push_back(idle[r].tps > 0 ? busy[r].tps / idle[r].tps : 0.0);
    per_round.push_back({{"idle_tps", idle[r].tps}, {"api_4_streams_tps", busy[r].tps}, {"tps_ratio", ratios.back()}});
  }
  json out = {{"model", model},
              {"threads", threads},
              {"chat_tokens", tokens},
              {"rounds", rounds},
              {"idle", figures(idle)},
              {"api_4_streams", figures(busy)},
              {"tps_ratio", median(ratios)},
              {"api_steps_yielded", yielded},
              {"api_pending_after", pending_after}};
  if (rounds > 1) out["runs"] = per_round;
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
