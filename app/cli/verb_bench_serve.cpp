// hearth-cli bench-serve: the local API server under load. For each
// concurrency level, that many streaming clients (staggered arrivals) send
// p-token prompts and read n-token replies over real HTTP on loopback;
// aggregate tokens/s and p50/p95 time to first token and inter-token latency
// come from the clients' clocks. With --ref-server, the reference engine's
// server (llama-server -np N -cb) runs the same load on the same file in the
// same run, one level at a time. With --repeat N the levels run N rounds and
// each figure is the median of the rounds'.
#include <fmt/format.h>
#include <hearth/server/http_server.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "args.h"
#include "engine_setup.h"
#include "serve_backend.h"
#include "spec_setup.h"
#include "stream_load.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

struct BenchShape {
  int64_t prompt_tokens = 256;
  int64_t reply_tokens = 128;
  int threads = 2;
  double stagger_ms = 50;
};

// Distinct prompts of exactly `n` tokens from ordinary prose: stream i reads
// the text from a different place, so no two share a prefix (nothing is
// reused between streams on either server).
Result<std::vector<std::vector<int32_t>>> make_prompts(const TextCodec& codec, int streams, int64_t n) {
  std::string text;
  std::vector<int32_t> ids;
  const auto need = static_cast<size_t>(n + 31 * streams);
  while (ids.size() < need) {
    text += "The lighthouse keeper climbed the stairs every evening to light the lamp. Ships passed in the dark, "
            "and the sailors counted the flashes to know which coast they saw. One winter the storms came early. ";
    HEARTH_TRY(ids, codec.encode(text, PromptMode::Raw));
  }
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < streams; ++i) {
    const auto from = ids.begin() + 31 * i;
    out.emplace_back(from, from + n);
  }
  return out;
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

// The reference engine's server for one level, stopped when this goes away.
class ReferenceServer {
 public:
  static constexpr std::chrono::seconds kStopWait{10};
  // Asked to stop, then killed if it has not exited within kStopWait: the
  // reference server sometimes stays up after SIGTERM, and waiting for it
  // hung a whole run.
  ~ReferenceServer() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + kStopWait;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  Status start(const std::string& exe, const std::string& model, const BenchShape& shape, int streams,
               const std::filesystem::path& log) {
    port_ = free_port();
    const int64_t ctx = streams * (shape.prompt_tokens + shape.reply_tokens + 64);
    std::vector<std::string> args = {exe, "-m", model, "-np", std::to_string(streams), "-cb",
                                     "-c", std::to_string(ctx), "-t", std::to_string(shape.threads),
                                     "-tb", std::to_string(shape.threads), "-ngl", "0",
                                     "--host", "127.0.0.1", "--port", std::to_string(port_)};
    pid_ = fork();
    if (pid_ < 0) return make_error(ErrorCode::Io, "cannot start the reference server (fork failed)");
    if (pid_ == 0) {
      FILE* f = std::fopen(log.c_str(), "w");
      if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(1, 0);
    for (int i = 0; i < 600; ++i) {
      if (auto r = c.Get("/health"); r && r->status == 200) return {};
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return make_error(ErrorCode::Io, fmt::format("the reference server exited during start-up (see {})",
                                                     log.string()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return make_error(ErrorCode::Io, fmt::format("the reference server did not become healthy (see {})", log.string()));
  }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

nlohmann::json to_json(const LoadFigures& f) {
  return {{"streams", f.streams}, {"agg_tps", f.agg_tps}, {"ttft_p50_ms", f.ttft_p50_ms},
          {"ttft_p95_ms", f.ttft_p95_ms}, {"itl_p50_ms", f.itl_p50_ms}, {"itl_p95_ms", f.itl_p95_ms},
          {"tokens", f.tokens}, {"seconds", f.seconds}};
}

void print_row(const char* who, const LoadFigures& f) {
  std::fprintf(stderr, "%-9s %3d streams  %8.1f tok/s  TTFT p50 %8.1f p95 %8.1f ms  ITL p50 %7.1f p95 %7.1f ms\n", who,
               f.streams, f.agg_tps, f.ttft_p50_ms, f.ttft_p95_ms, f.itl_p50_ms, f.itl_p95_ms);
}

Result<std::vector<int64_t>> parse_levels(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 256) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("--streams: '{}' is not a count from 1 to 256", item));
    }
    out.push_back(v);
  }
  if (out.empty()) return make_error(ErrorCode::InvalidArgument, "--streams lists no level");
  return out;
}

// One level on Hearth's own server: the clients' figures and, with --spec,
// what the drafts gave (every request has finished when the load returns).
struct HearthLevel {
  LoadFigures figures;
  server::SpeculationTotals drafts;
};

Result<HearthLevel> run_hearth_level(EngineSetup& setup, const runtime::ChatFormat& format, const ServeShape& serve,
                                     server::SpeculatorFactory speculators, const std::string& key, LoadSpec load) {
  HEARTH_TRY(auto backend, make_backend(setup, format, serve, "bench", 0, std::move(speculators)));
  server::ServerConfig sc;
  sc.hosts = {"127.0.0.1"};
  sc.port = 0;
  sc.api_key = key;
  sc.max_connections = static_cast<size_t>(serve.parallel) + 8;
  sc.write_timeout = std::chrono::seconds(120);
  HEARTH_TRY(auto http, server::HttpServer::start(*backend, sc));
  load.port = http->port();
  load.api_key = key;
  auto figures = run_load(load);
  http->stop();
  if (!figures.ok()) {
    return make_error(figures.error().code, fmt::format("hearth, {} streams: {}", load.prompts.size(),
                                                        figures.error().message));
  }
  print_row("hearth", *figures);
  HearthLevel out{*figures, backend->speculation()};
  if (const server::SpeculationTotals& d = out.drafts; d.requests > 0) {
    std::fprintf(stderr, "  speculation: %lld drafted, %lld accepted (%.0f %%)\n", static_cast<long long>(d.drafted),
                 static_cast<long long>(d.accepted),
                 d.drafted > 0 ? 100.0 * static_cast<double>(d.accepted) / static_cast<double>(d.drafted) : 0.0);
  }
  return out;
}

// The same load on the reference engine's server, started for this level.
Result<LoadFigures> run_reference_level(const std::string& exe, const std::string& model_path, const BenchShape& shape,
                                        LoadSpec load) {
  const auto streams = static_cast<int>(load.prompts.size());
  ReferenceServer ref;
  const auto log = std::filesystem::temp_directory_path() / fmt::format("bench-serve-ref-{}.log", streams);
  HEARTH_CHECK(ref.start(exe, model_path, shape, streams, log));
  load.port = ref.port();
  load.api_key.clear();
  auto figures = run_load(load);
  if (!figures.ok()) {
    return make_error(figures.error().code, fmt::format("reference, {} streams: {}", streams,
                                                        figures.error().message));
  }
  print_row("reference", *figures);
  return *figures;
}

// How a level scales against the first: the ratio of the two medians'
// aggregate tok/s, and with several rounds each round's ratio (the two
// levels ran minutes apart at most, so a slow stretch of the machine falls
// on both) and their median, which moves less with the machine than the
// ratio of the medians.
nlohmann::json scaling_json(const std::vector<LoadFigures>& base, const std::vector<LoadFigures>& level,
                            const char* who) {
  const double ratio = median_figures(level).agg_tps / median_figures(base).agg_tps;
  nlohmann::json out = {{"base_streams", base.front().streams}, {"agg_tps_ratio", ratio}};
  std::string line = fmt::format("{:<9}  {:2d} streams   {:5.2f}x the aggregate of {}", who, level.front().streams, ratio,
                                 base.front().streams);
  if (level.size() > 1) {
    std::vector<double> rounds;
    for (size_t i = 0; i < level.size(); ++i) rounds.push_back(level[i].agg_tps / base[i].agg_tps);
    const double middle = percentile(rounds, 50);
    const auto [lo, hi] = std::minmax_element(rounds.begin(), rounds.end());
    line += fmt::format(" (rounds {:.2f}-{:.2f}, median {:.2f})", *lo, *hi, middle);
    out["round_ratios"] = std::move(rounds);
    out["round_ratio_median"] = middle;
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  return out;
}

}  // namespace

int run_bench_serve(const std::vector<std::string>& argv) {
  VerbSpec spec{"bench-serve",
                "--model M.gguf [--streams 1,2,4,8,16] [-p 256] [-n 128] [--temperature T] [--repeat N] [--ref-server PATH] "
                "[--json]",
                "The local API server under concurrent streaming clients: tok/s, TTFT and inter-token latency.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"streams", FlagKind::Value, "concurrency levels (default 1,2,4,8,16)", "", "LIST"},
                 {"prompt-tokens", FlagKind::Value, "prompt length of every stream (default 256)", "p", "N"},
                 {"tokens", FlagKind::Value, "reply length of every stream (default 128)", "n", "N"},
                 {"stagger-ms", FlagKind::Value, "time between stream arrivals (default 50)", "", "MS"},
                 {"max-batch-tokens", FlagKind::Value, "tokens per forward pass (default 256)", "", "N"},
                 {"temperature", FlagKind::Value,
                  "every request's temperature, nothing else of the sampler set (default 0: greedy)", "", "T"},
                 {"repeat", FlagKind::Value,
                  "rounds over the levels; each figure is the median of the rounds' (default 1)", "", "N"},
                 {"ref-server", FlagKind::Value, "the reference engine's llama-server, run on the same file", "", "PATH"},
                 {"json", FlagKind::Switch, "one JSON object on stdout", "", ""}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  for (auto& f : speculation_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  auto levels = parse_levels(args->get("streams").value_or("1,2,4,8,16"));
  auto n_prompt = args->get_int("prompt-tokens", 256, 1, 1 << 16);
  auto n_reply = args->get_int("tokens", 128, 1, 1 << 16);
  auto stagger = args->get_int("stagger-ms", 50, 0, 60000);
  auto batch = args->get_int("max-batch-tokens", 256, 1, 1 << 16);
  auto repeat = args->get_int("repeat", 1, 1, 50);
  auto temperature = args->get_double("temperature", 0.0, 0.0, 2.0);
  for (const Error* e : {levels.ok() ? nullptr : &levels.error(), n_prompt.ok() ? nullptr : &n_prompt.error(),
                         n_reply.ok() ? nullptr : &n_reply.error(), stagger.ok() ? nullptr : &stagger.error(),
                         batch.ok() ? nullptr : &batch.error(), repeat.ok() ? nullptr : &repeat.error(),
                         temperature.ok() ? nullptr : &temperature.error()}) {
    if (e) {
      std::fprintf(stderr, "bench-serve: %s\n", e->message.c_str());
      return kExitUsage;
    }
  }
  if (!args->has("model")) {
    std::fprintf(stderr, "bench-serve: --model is required\n");
    return kExitUsage;
  }
  BenchShape shape{*n_prompt, *n_reply, 2, static_cast<double>(*stagger)};
  const int64_t n_ctx = shape.prompt_tokens + shape.reply_tokens + 16;
  const int64_t max_level = *std::max_element(levels->begin(), levels->end());
  auto setup = setup_engine(*args, n_ctx * max_level);
  if (!setup.ok()) {
    std::fprintf(stderr, "bench-serve: %s\n", setup.error().message.c_str());
    return kExitBadInput;
  }
  shape.threads = setup->threads;
  auto codec = TextCodec::from_model(*setup->model);
  if (!codec.ok()) {
    std::fprintf(stderr, "bench-serve: %s\n", codec.error().message.c_str());
    return kExitBadInput;
  }
  auto prompts = make_prompts(*codec, static_cast<int>(max_level), shape.prompt_tokens);
  if (!prompts.ok()) {
    std::fprintf(stderr, "bench-serve: %s\n", prompts.error().message.c_str());
    return kExitBadInput;
  }
  auto speculation = setup_speculation(*args, *setup->model, n_ctx, setup->threads);
  if (!speculation.ok()) {
    std::fprintf(stderr, "bench-serve: %s\n", speculation.error().message.c_str());
    return speculation.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  (*speculation)->speculator.reset();  // the server makes one per request
  const std::string model_path = *args->get("model");
  const std::string key = fmt::format("bench-{:x}", std::chrono::steady_clock::now().time_since_epoch().count());

  nlohmann::json out = {{"model", std::filesystem::path(model_path).filename().string()},
                        {"threads", shape.threads}, {"prompt_tokens", shape.prompt_tokens},
                        {"reply_tokens", shape.reply_tokens}, {"stagger_ms", shape.stagger_ms},
                        {"temperature", *temperature},
                        {"spec", runtime::to_string((*speculation)->mode)},
                        {"levels", nlohmann::json::array()}};
  // Rounds over the levels (one level after another, so a slow moment of the
  // machine falls on every level alike), each level's figures kept per round.
  const size_t n_levels = levels->size();
  std::vector<std::vector<LoadFigures>> hearth_runs(n_levels), reference_runs(n_levels);
  std::vector<server::SpeculationTotals> drafts(n_levels);
  for (int64_t round = 0; round < *repeat; ++round) {
    for (size_t li = 0; li < n_levels; ++li) {
      const int64_t level = (*levels)[li];
      LoadSpec load;
      load.prompts.assign(prompts->begin(), prompts->begin() + level);
      load.max_tokens = static_cast<int32_t>(shape.reply_tokens);
      load.stagger_ms = shape.stagger_ms;
      load.temperature = *temperature;
      auto ours = run_hearth_level(*setup, codec->format(), ServeShape{n_ctx, level, *batch, static_cast<size_t>(level)},
                                   speculator_factory(**speculation, *setup->model, n_ctx), key, load);
      if (!ours.ok()) {
        std::fprintf(stderr, "bench-serve: %s\n", ours.error().message.c_str());
        return kExitBadInput;
      }
      hearth_runs[li].push_back(ours->figures);
      drafts[li].requests += ours->drafts.requests;
      drafts[li].drafted += ours->drafts.drafted;
      drafts[li].accepted += ours->drafts.accepted;
      if (args->has("ref-server")) {
        auto theirs = run_reference_level(*args->get("ref-server"), model_path, shape, load);
        if (!theirs.ok()) {
          std::fprintf(stderr, "bench-serve: %s\n", theirs.error().message.c_str());
          return kExitBadInput;
        }
        reference_runs[li].push_back(*theirs);
      }
    }
  }
  // Per level the median of the rounds, and with --repeat the rounds too.
  const auto level_json = [&](const std::vector<LoadFigures>& runs, const char* who) {
    const LoadFigures m = median_figures(runs);
    nlohmann::json row = to_json(m);
    if (runs.size() > 1) {
      print_row(who, m);
      row["runs"] = nlohmann::json::array();
      for (const LoadFigures& r : runs) row["runs"].push_back(to_json(r));
    }
    return row;
  };
  if (*repeat > 1) std::fprintf(stderr, "median of %lld rounds:\n", static_cast<long long>(*repeat));
  if (args->has("ref-server")) out["reference"] = nlohmann::json::array();
  for (size_t li = 0; li < n_levels; ++li) {
    nlohmann::json row = level_json(hearth_runs[li], "hearth");
    if (drafts[li].requests > 0) {
      row["drafted"] = drafts[li].drafted;
      row["accepted"] = drafts[li].accepted;
    }
    out["levels"].push_back(std::move(row));
    if (args->has("ref-server")) out["reference"].push_back(level_json(reference_runs[li], "reference"));
  }
  for (size_t li = 1; li < n_levels; ++li) {
    out["levels"][li]["scaling"] = scaling_json(hearth_runs[0], hearth_runs[li], "hearth");
    if (args->has("ref-server")) {
      out["reference"][li]["scaling"] = scaling_json(reference_runs[0], reference_runs[li], "reference");
    }
  }
  if (args->has("json")) std::printf("%s\n", out.dump().c_str());
  return kExitOk;
}

}  // namespace hearth::cli
