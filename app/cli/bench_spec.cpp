#include "bench_spec.h"

#include <hearth/engine/runtime/session.h>
#include <hearth/engine/sampling/sampler.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "measure/speed.h"

namespace hearth::cli {

// bench and compare share one timing path (app/measure), which the app uses too.
using namespace hearth::measure;
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Greedy generation of `tg` tokens after the prompt; decode tokens/s (the
// gaps between tokens, so prefill is not counted).
Result<double> decode_tps(runtime::Session& s, const SpecBenchInput& in, runtime::Speculator* spec) {
  s.reset();
  runtime::GenerateOptions opt;
  opt.max_tokens = static_cast<int32_t>(in.tg);
  opt.sampler.temperature = 0;
  opt.speculator = spec;
  HEARTH_TRY(auto r, s.generate(in.prompt, opt, {}, {}));
  return r.figures.decode_tps;
}

}  // namespace

Result<nlohmann::json> bench_speculation(const SpecBenchInput& in) {
  runtime::SessionConfig config;
  config.n_ctx = static_cast<int64_t>(in.prompt.size()) + in.tg + 64;
  config.kv_type = in.kv_type;
  config.n_batch = 64;
  HEARTH_TRY(auto session, runtime::Session::create(*in.model, *in.backend, config));
  runtime::Speculator& spec = *in.speculator;

  // Plain and speculative runs alternate, so a machine that gets busier
  // during the run slows both alike. Run 0 warms up and is not counted.
  std::vector<double> plain, fast;
  runtime::SpecFigures counted;
  for (int64_t r = 0; r <= in.reps; ++r) {
    HEARTH_TRY(const double p, decode_tps(*session, in, nullptr));
    spec.reset();
    const runtime::SpecFigures before = spec.figures();
    HEARTH_TRY(const double f, decode_tps(*session, in, &spec));
    if (r == 0) continue;
    plain.push_back(p);
    fast.push_back(f);
    const auto d = spec.figures().since(before);
    counted.verify_passes += d.verify_passes;
    counted.drafted += d.drafted;
    counted.accepted += d.accepted;
    counted.draft_ms += d.draft_ms;
    counted.switch_offs += d.switch_offs;
  }

  // The verify pass by batch size, after the prompt: n tokens in one pass,
  // then cut back (what a rejected draft costs). Each round times every
  // size once, so a machine whose memory bandwidth drifts (other tenants)
  // shifts all sizes alike instead of skewing their ratios; round 0 warms up.
  session->reset();
  HEARTH_CHECK(session->prefill(in.prompt));
  const size_t base = session->context().size();
  sampling::Rng rng(7);
  const auto n_vocab = static_cast<uint64_t>(in.model->hparams().n_vocab);
  std::vector<float> rows;
  constexpr int kVerifySizes = 9, kVerifyRounds = 9;
  std::vector<std::vector<double>> times(kVerifySizes);
  for (int round = 0; round <= kVerifyRounds; ++round) {
    for (int n = 1; n <= kVerifySizes; ++n) {
      std::vector<int32_t> tokens(static_cast<size_t>(n));
      for (auto& id : tokens) id = static_cast<int32_t>(rng.next() % n_vocab);
      const auto t0 = Clock::now();
      HEARTH_CHECK(session->verify(tokens, rows));
      if (round > 0) times[static_cast<size_t>(n - 1)].push_back(ms_since(t0));
      HEARTH_CHECK(session->truncate(base));
    }
  }
  std::vector<double> verify_ms;
  for (auto& t : times) verify_ms.push_back(median(t));
  nlohmann::json ratio = nlohmann::json::array();
  for (int k = 1; k < kVerifySizes; ++k) ratio.push_back(verify_ms[static_cast<size_t>(k)] / verify_ms[0]);

  // Expected tokens per step with draft length k at acceptance a (each draft
  // kept with probability a, independently): (1 - a^(k+1)) / (1 - a); the
  // step costs k drafts and one verify pass of k + 1 tokens.
  const double draft_ms = counted.drafted > 0 ? counted.draft_ms / static_cast<double>(counted.drafted) : 0.0;
  nlohmann::json modeled = nlohmann::json::array();
  for (double a : {0.5, 0.7, 0.9}) {
    double best = 0;
    int best_k = 1;
    for (int k = 1; k <= runtime::kMaxDraftTokens; ++k) {
      const double tokens = (1.0 - std::pow(a, k + 1)) / (1.0 - a);
      const double cost = k * draft_ms + verify_ms[static_cast<size_t>(k)];
      const double speedup = tokens * verify_ms[0] / cost;
      if (speedup > best) {
        best = speedup;
        best_k = k;
      }
    }
    modeled.push_back({{"acceptance", a}, {"k", best_k}, {"speedup", best}});
  }
  const Stats with = stats(fast), without = stats(plain);
  return nlohmann::json{{"spec", spec.drafter().name()},
                        {"draft_max", spec.config().draft_max},
                        {"adaptive", spec.config().adaptive},
                        {"tg_tps", with.mean},
                        {"tg_tps_sd", with.sd},
                        {"tg_tps_nospec", without.mean},
                        {"tg_tps_nospec_sd", without.sd},
                        {"speedup", without.mean > 0 ? with.mean / without.mean : 0.0},
                        {"acceptance_rate", counted.acceptance_rate()},
                        {"mean_accepted", counted.mean_accepted()},
                        {"verify_passes", counted.verify_passes},
                        {"draft_ms_per_token", draft_ms},
                        {"switch_offs", counted.switch_offs},
                        {"verify_ms", verify_ms},
                        {"verify_cost_ratio", ratio},
                        {"modeled_speedup", modeled}};
}

void print_speculation(const nlohmann::json& j) {
  std::printf("speculation %s (k <= %d%s)\n", j["spec"].get<std::string>().c_str(), j["draft_max"].get<int>(),
              j["adaptive"].get<bool>() ? ", adaptive" : ", fixed");
  std::printf("  tg with     %8.2f +- %.2f tok/s\n", j["tg_tps"].get<double>(), j["tg_tps_sd"].get<double>());
  std::printf("  tg without  %8.2f +- %.2f tok/s   speed-up %.2fx\n", j["tg_tps_nospec"].get<double>(),
              j["tg_tps_nospec_sd"].get<double>(), j["speedup"].get<double>());
  std::printf("  acceptance  %.1f%%, %.2f accepted per verify pass (%lld passes), draft %.3f ms/token, switched off "
              "%lld times\n",
              100.0 * j["acceptance_rate"].get<double>(), j["mean_accepted"].get<double>(),
              static_cast<long long>(j["verify_passes"].get<int64_t>()), j["draft_ms_per_token"].get<double>(),
              static_cast<long long>(j["switch_offs"].get<int64_t>()));
  std::printf("  verify pass ms by tokens:");
  const auto& v = j["verify_ms"];
  for (size_t i = 0; i < v.size(); ++i) std::printf(" %zu:%.2f", i + 1, v[i].get<double>());
  std::printf("\n  cost T(k+1)/T(1):");
  const auto& r = j["verify_cost_ratio"];
  for (size_t i = 0; i < r.size(); ++i) std::printf(" k=%zu:%.2f", i + 1, r[i].get<double>());
  std::printf("\n  modeled speed-up:");
  for (const auto& m : j["modeled_speedup"]) {
    std::printf(" a=%.1f:%.2fx(k=%d)", m["acceptance"].get<double>(), m["speedup"].get<double>(), m["k"].get<int>());
  }
  std::printf("\n");
}

}  // namespace hearth::cli
