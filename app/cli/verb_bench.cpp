// hearth-cli bench: prompt processing (pp) and generation (tg) speed, mean and
// standard deviation over repetitions, the weight bytes read per generated
// token, and the fraction of this machine's read bandwidth that reaches. The
// bandwidth is measured here (measure/read_bandwidth.h), on the same number of
// threads, right before and right after every counted generation run; the
// timed runs themselves are measure/speed.h, which compare and the app share.
#include <fmt/format.h>
#include <hearth/engine/backend/op_profile.h>
#include <hearth/engine/backend/vulkan/vulkan_backend.h>
#include <hearth/engine/sampling/sampler.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "args.h"
#include "measure/speed.h"
#include "bench_spec.h"
#include "engine_setup.h"
#include "spec_setup.h"
#include "measure/read_bandwidth.h"
#include "verbs.h"

namespace hearth::cli {

// bench and compare share one timing path (app/measure), which the app uses too.
using namespace hearth::measure;
namespace {

// Per-op time of the profiled steps (GPU time on Vulkan, wall time on the
// CPU): the table bench --profile prints.
struct PhaseProfile {
  std::vector<backend::OpProfile> ops;
  double step_ms = 0;  // wall time of the profiled steps
  int64_t steps = 0;
};

void add_step(PhaseProfile& p, const backend::Backend* timed, double seconds) {
  if (!timed) return;
  const auto t = timed->op_timings();
  backend::accumulate(p.ops, backend::summarize_timings(t));
  p.step_ms += seconds * 1e3;
  p.steps += 1;
}

void print_profile(const char* phase, const char* clock, const PhaseProfile& p) {
  if (p.steps == 0) return;
  std::printf("\nprofile %s: %s time per op over %lld step(s), %.1f ms wall\n", phase, clock,
              static_cast<long long>(p.steps), p.step_ms);
  std::printf("  %-22s %7s %11s %8s\n", "op", "count", "total ms", "% step");
  for (const auto& o : p.ops) {
    std::printf("  %-22s %7u %11.2f %7.1f%%\n", o.op.c_str(), o.count, o.ms, p.step_ms > 0 ? 100.0 * o.ms / p.step_ms : 0.0);
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
                 {"profile", FlagKind::Switch, "time per op of the last repetition (GPU time on vulkan, wall time on cpu)", "", ""},
                 {"prompt", FlagKind::Value, "with --spec: the prompt (raw text) instead of -p random tokens", "", "TEXT"},
                 {"json", FlagKind::Switch, "one JSON object on stdout", "", ""}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  for (auto& f : speculation_flags()) spec.flags.push_back(f);
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
  auto setup = setup_engine(*args, speed_context(SpeedOptions{*pp, *tg, *reps}));
  if (!setup.ok()) {
    std::fprintf(stderr, "bench: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  const auto& model = *setup->model;
  auto& be = *setup->backend;
  // The draft session holds what the spec runs hold: a prompt (-p tokens,
  // or a --prompt text of up to 1024 tokens) and the generated tokens.
  auto speculation =
      setup_speculation(*args, model, speed_context(SpeedOptions{*pp, *tg, *reps}) + 1024, setup->threads);
  if (!speculation.ok()) {
    std::fprintf(stderr, "bench: %s\n", speculation.error().message.c_str());
    return speculation.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  // The Vulkan pipeline choice (layer 0's backend: the GPU part of a split).
  const auto* gpu = dynamic_cast<const vulkan::VulkanBackend*>(&be.backend_for_layer(0));
  const char* gpu_path = gpu ? vulkan::to_string(gpu->stats().matvec_path) : nullptr;
  // The backend times its ops when --profile made it (engine_setup); a
  // split between GPU and CPU layers does not.
  const backend::Backend* timed = args->has("profile") ? &be : nullptr;
  const bool on_gpu = dynamic_cast<const vulkan::VulkanBackend*>(&be) != nullptr;
  PhaseProfile pp_profile, tg_profile;
  auto probe = ReadBandwidthProbe::create(setup->threads);
  if (!probe.ok()) {
    std::fprintf(stderr, "bench: %s\n", probe.error().message.c_str());
    return kExitBadInput;
  }
  SpeedHooks hooks;
  hooks.probe = &*probe;
  hooks.on_last_rep_step = [&](SpeedPhase phase, double seconds) {
    add_step(phase == SpeedPhase::Prompt ? pp_profile : tg_profile, timed, seconds);
  };
  auto runs = measure_speed(model, be, setup->kv_type, SpeedOptions{*pp, *tg, *reps}, hooks);
  if (!runs.ok()) {
    std::fprintf(stderr, "bench: %s\n", runs.error().message.c_str());
    return kExitBadInput;
  }
  const std::vector<double>& pp_tps = runs->pp_tps;
  const std::vector<double>& tg_tps = runs->tg_tps;
  std::vector<double> tg_bw = runs->tg_bandwidth_gbps;
  if (tg_bw.empty()) tg_bw.push_back(probe->measure(5));  // no generation runs to bracket
  const Stats pps = stats(pp_tps), tgs = stats(tg_tps), bws = stats(tg_bw);
  const auto bpt = model.bytes_per_token();
  const double bw = bws.mean;
  const double roofline = bw > 0 ? static_cast<double>(bpt) * tgs.mean / (bw * 1e9) : 0.0;
  // The same fraction run by run, each against its own bracketing bandwidth.
  std::vector<double> run_fractions;
  for (size_t i = 0; i < tg_tps.size(); ++i) {
    run_fractions.push_back(static_cast<double>(bpt) * tg_tps[i] / (tg_bw[i] * 1e9));
  }
  const Stats fracs = stats(run_fractions);
  nlohmann::json spec_figures;
  if (runtime::Speculator* speculator = (*speculation)->speculator.get()) {
    SpecBenchInput in{&model, &be, setup->kv_type, speculator, {}, std::max<int64_t>(*tg, 1), *reps};
    if (args->has("prompt")) {
      auto codec = TextCodec::from_model(model);
      auto ids = codec.ok() ? codec->encode(*args->get("prompt"), PromptMode::Raw)
                            : Result<std::vector<int32_t>>(codec.error());
      if (!ids.ok()) {
        std::fprintf(stderr, "bench: --prompt: %s\n", ids.error().message.c_str());
        return kExitBadInput;
      }
      in.prompt = *ids;
    } else {
      // Random tokens, as the pp runs use (a fixed seed: the same prompt every run).
      sampling::Rng rng(42);
      const auto n_vocab = static_cast<uint64_t>(model.hparams().n_vocab);
      in.prompt.resize(static_cast<size_t>(std::max<int64_t>(*pp, 1)));
      for (auto& id : in.prompt) id = static_cast<int32_t>(rng.next() % n_vocab);
    }
    auto measured = bench_speculation(in);
    if (!measured.ok()) {
      std::fprintf(stderr, "bench: speculation: %s\n", measured.error().message.c_str());
      return kExitBadInput;
    }
    spec_figures = std::move(*measured);
  }
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
                        {"weight_memory", model::to_string(model.weight_memory())},
                        {"memory_bytes", runs->memory_bytes()},
                        {"read_bandwidth_gbps", bw},
                        {"read_bandwidth_gbps_sd", bws.sd},
                        {"roofline_fraction", roofline},
                        {"roofline_fraction_runs", run_fractions}};
    // The GPU pipelines this run used: the path of the products (plain or
    // int-dot), for the matrix-vector products and the prefill tiles alike.
    if (gpu_path) {
      j["pipeline"] = {{"matvec", gpu_path},
                       {"matmul", std::string_view(gpu_path) == "int-dot" ? "int-dot tiles" : "tiles"}};
    }
    if (timed) {
      j["profile"] = {{"clock", on_gpu ? "gpu" : "wall"}, {"pp", profile_json(pp_profile)}, {"tg", profile_json(tg_profile)}};
    }
    if (!spec_figures.is_null()) {
      // tg_tps becomes the speculative figure (tg_tps_nospec beside it); the
      // plain forward loop's figure, which the roofline uses, stays apart.
      j["tg_tps_forward"] = j["tg_tps"];
      j.update(spec_figures);
    }
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("model      %s\nbackend    %s (%s), %d threads\n", args->get("model")->c_str(), be.name(),
                be.device().name.c_str(), setup->threads);
    if (gpu_path) std::printf("gpu        products (matrix-vector and prefill tiles): %s\n", gpu_path);
    std::printf("pp%-6lld  %8.2f +- %.2f tok/s\n", static_cast<long long>(*pp), pps.mean, pps.sd);
    std::printf("tg%-6lld  %8.2f +- %.2f tok/s\n", static_cast<long long>(*tg), tgs.mean, tgs.sd);
    std::printf("weights    %.1f MB read per generated token (%s)\n", static_cast<double>(bpt) / 1e6,
                model.weight_memory() == model::WeightMemory::HugePageCopy ? "huge-page copy" : "file mapping");
    std::printf("bandwidth  %.1f +- %.1f GB/s measured read around the generation runs\n", bw, bws.sd);
    std::printf("roofline   generation reaches %.0f%% of it", roofline * 100);
    if (run_fractions.size() > 1) {
      const auto [lo, hi] = std::minmax_element(run_fractions.begin(), run_fractions.end());
      std::printf(" (runs: %.0f%% +- %.0f%%, %.0f%%..%.0f%%)", fracs.mean * 100, fracs.sd * 100, *lo * 100, *hi * 100);
    }
    std::printf("\n");
    if (!spec_figures.is_null()) print_speculation(spec_figures);
    if (timed) {
      const char* clock = on_gpu ? "GPU" : "wall";
      print_profile(fmt::format("pp{}", *pp).c_str(), clock, pp_profile);
      print_profile(fmt::format("tg{}", *tg).c_str(), clock, tg_profile);
    }
  }
  return kExitOk;
}

}  // namespace hearth::cli
