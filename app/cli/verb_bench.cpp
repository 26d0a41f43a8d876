// hearth-cli bench: prompt processing (pp) and generation (tg) speed, mean and
// standard deviation over repetitions, the weight bytes read per generated
// token, and the fraction of this machine's read bandwidth that reaches. The
// bandwidth is measured here, with a streaming read over a buffer far larger
// than the caches, on the same number of threads.
#include <fmt/format.h>
#include <hearth/engine/backend/vulkan/profile.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/sampling/sampler.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <thread>

#include "args.h"
#include "engine_setup.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Sums 64-bit words with independent accumulators so the loop is bound by
// loads, not by the add chain.
uint64_t read_sum(const uint64_t* p, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    a += p[i]; b += p[i + 1]; c += p[i + 2]; d += p[i + 3];
    e += p[i + 4]; f += p[i + 5]; g += p[i + 6]; h += p[i + 7];
  }
  return a + b + c + d + e + f + g + h;
}

// Best of several passes of `threads` threads each reading its slice of a
// 1 GiB buffer (32x a large L3), in GB/s.
double measure_read_bandwidth(int threads) {
  const size_t bytes = size_t{1} << 30;
  const size_t words = bytes / 8;
  std::unique_ptr<uint64_t[]> buf(new uint64_t[words]);
  // Touch every page in parallel so it is really allocated before timing.
  {
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        const size_t b = words * static_cast<size_t>(t) / static_cast<size_t>(threads);
        const size_t e = words * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
        for (size_t i = b; i < e; ++i) buf[i] = i;
      });
    }
    for (auto& t : ts) t.join();
  }
  double best = 0;
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        const size_t b = words * static_cast<size_t>(t) / static_cast<size_t>(threads);
        const size_t e = words * static_cast<size_t>(t + 1) / static_cast<size_t>(threads);
        sums[static_cast<size_t>(t)] = read_sum(buf.get() + b, e - b);
      });
    }
    for (auto& t : ts) t.join();
    best = std::max(best, static_cast<double>(bytes) / seconds_since(t0) / 1e9);
  }
  volatile uint64_t sink = std::accumulate(sums.begin(), sums.end(), uint64_t{0});
  (void)sink;
  return best;
}

struct Stats {
  double mean = 0, sd = 0;
};

Stats stats(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}

// Per-op GPU time of the profiled steps: the table bench --profile prints.
struct PhaseProfile {
  std::vector<vulkan::OpProfile> ops;
  double step_ms = 0;  // wall time of the profiled steps
  int64_t steps = 0;
};

void add_step(PhaseProfile& p, const vulkan::VulkanBackend* vk, double seconds) {
  if (!vk) return;
  const auto t = vk->last_timings();
  vulkan::accumulate(p.ops, vulkan::summarize_timings(t));
  p.step_ms += seconds * 1e3;
  p.steps += 1;
}

void print_profile(const char* phase, const PhaseProfile& p) {
  if (p.steps == 0) return;
  std::printf("\nprofile %s: GPU time per op over %lld step(s), %.1f ms wall\n", phase,
              static_cast<long long>(p.steps), p.step_ms);
  std::printf("  %-10s %7s %11s %8s\n", "op", "count", "total ms", "% step");
  for (const auto& o : p.ops) {
    std::printf("  %-10s %7u %11.2f %7.1f%%\n", o.op.c_str(), o.count, o.ms, p.step_ms > 0 ? 100.0 * o.ms / p.step_ms : 0.0);
  }
}

nlohmann::json profile_json(const PhaseProfile& p) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& o : p.ops) {
    ops.push_back({{"op", o.op}, {"count", o.count}, {"ms", o.ms}, {"pct", p.step_ms > 0 ? 100.0 * o.ms / p.step_ms : 0.0}});
  }
  return {{"steps", p.steps}, {"wall_ms", p.step_ms}, {"ops", ops}};
}

}  // namespace

int run_bench(const std::vector<std::string>& argv) {
  VerbSpec spec{"bench", "--model M.gguf [-p 512] [-n 128] [-r 3] [--threads N] [--profile] [--json]",
                "Measures prompt processing and generation speed against the machine's read bandwidth.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"pp", FlagKind::Value, "prompt tokens (default 512)", "p", "N"},
                 {"tg", FlagKind::Value, "generated tokens (default 128)", "n", "N"},
                 {"reps", FlagKind::Value, "repetitions (default 3)", "r", "N"},
                 {"profile", FlagKind::Switch, "GPU time per op of the last repetition (vulkan)", "", ""},
                 {"json", FlagKind::Switch, "one JSON object on stdout", "", ""}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  auto pp = args->get_int("pp", 512, 0, 1 << 16);
  auto tg = args->get_int("tg", 128, 0, 1 << 16);
  auto reps = args->get_int("reps", 3, 1, 100);
  if (!pp.ok() || !tg.ok() || !reps.ok() || !args->has("model")) {
    std::fprintf(stderr, "bench: --model is required; -p, -n, -r take counts\n");
    return kExitUsage;
  }
  const int64_t n_ctx = std::max<int64_t>(*pp + *tg, 32);
  auto setup = setup_engine(*args, n_ctx);
  if (!setup.ok()) {
    std::fprintf(stderr, "bench: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  const auto& model = *setup->model;
  auto& be = *setup->backend;
  // Timestamps come from the Vulkan backend; the CPU backend has none.
  const auto* vk = args->has("profile") ? dynamic_cast<const vulkan::VulkanBackend*>(&be) : nullptr;
  if (args->has("profile") && !vk) std::fprintf(stderr, "bench: --profile times GPU ops; the %s backend has none\n", be.name());
  PhaseProfile pp_profile, tg_profile;
  auto cache = kv::KvCache::create(be, model.kv_config(n_ctx, setup->kv_type));
  if (!cache.ok()) {
    std::fprintf(stderr, "bench: %s\n", cache.error().message.c_str());
    return kExitBadInput;
  }
  sampling::Rng rng(42);
  const auto n_vocab = static_cast<uint64_t>(model.hparams().n_vocab);
  std::vector<float> logits;
  std::vector<double> pp_tps, tg_tps;
  for (int64_t r = 0; r <= *reps; ++r) {  // repetition 0 warms up and is not counted
    if (*pp > 0) {
      std::vector<int32_t> ids(static_cast<size_t>(*pp)), pos(static_cast<size_t>(*pp));
      for (auto& id : ids) id = static_cast<int32_t>(rng.next() % n_vocab);
      std::iota(pos.begin(), pos.end(), 0);
      (*cache)->clear();
      const auto t0 = Clock::now();
      auto st = model.forward(be, **cache, model::Batch{ids, pos}, model::LogitsRows::Last, logits);
      const double s = seconds_since(t0);
      if (!st.ok()) {
        std::fprintf(stderr, "bench: %s\n", st.error().message.c_str());
        return kExitBadInput;
      }
      if (r > 0) pp_tps.push_back(static_cast<double>(*pp) / s);
      if (r == *reps) add_step(pp_profile, vk, s);
    }
    if (*tg > 0) {
      (*cache)->clear();
      int32_t token = static_cast<int32_t>(rng.next() % n_vocab);
      const auto t0 = Clock::now();
      for (int32_t i = 0; i < *tg; ++i) {
        const auto t_step = Clock::now();
        auto st = model.forward(be, **cache, model::Batch{std::span(&token, 1), std::span(&i, 1)},
                                model::LogitsRows::Last, logits);
        if (!st.ok()) {
          std::fprintf(stderr, "bench: %s\n", st.error().message.c_str());
          return kExitBadInput;
        }
        if (r == *reps) add_step(tg_profile, vk, seconds_since(t_step));
        token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
      }
      if (r > 0) tg_tps.push_back(static_cast<double>(*tg) / seconds_since(t0));
    }
  }
  const double bw = measure_read_bandwidth(setup->threads);
  const Stats pps = stats(pp_tps), tgs = stats(tg_tps);
  const auto bpt = model.bytes_per_token();
  const double roofline = bw > 0 ? static_cast<double>(bpt) * tgs.mean / (bw * 1e9) : 0.0;
  if (args->has("json")) {
    nlohmann::json j = {{"model", *args->get("model")},
                        {"backend", be.name()},
                        {"device", be.device().name},
                        {"threads", setup->threads},
                        {"pp_tokens", *pp},
                        {"tg_tokens", *tg},
                        {"pp_tps", pps.mean},
                        {"pp_tps_sd", pps.sd},
                        {"tg_tps", tgs.mean},
                        {"tg_tps_sd", tgs.sd},
                        {"weight_bytes_per_token", bpt},
                        {"read_bandwidth_gbps", bw},
                        {"roofline_fraction", roofline}};
    if (vk) j["profile"] = {{"pp", profile_json(pp_profile)}, {"tg", profile_json(tg_profile)}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("model      %s\nbackend    %s (%s), %d threads\n", args->get("model")->c_str(), be.name(),
                be.device().name.c_str(), setup->threads);
    std::printf("pp%-6lld  %8.2f +- %.2f tok/s\n", static_cast<long long>(*pp), pps.mean, pps.sd);
    std::printf("tg%-6lld  %8.2f +- %.2f tok/s\n", static_cast<long long>(*tg), tgs.mean, tgs.sd);
    std::printf("weights    %.1f MB read per generated token\n", static_cast<double>(bpt) / 1e6);
    std::printf("bandwidth  %.1f GB/s measured read; generation reaches %.0f%% of it\n", bw, roofline * 100);
    if (vk) {
      print_profile(fmt::format("pp{}", *pp).c_str(), pp_profile);
      print_profile(fmt::format("tg{}", *tg).c_str(), tg_profile);
    }
  }
  return kExitOk;
}

}  // namespace hearth::cli
