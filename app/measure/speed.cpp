#include "measure/speed.h"

#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/sampling/sampler.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace hearth::measure {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

Stats stats(const std::vector<double>& v) {
  Stats s;
  if (v.empty()) return s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - s.mean) * (x - s.mean);
  s.sd = v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0;
  return s;
}

int64_t speed_context(const SpeedOptions& options) { return std::max<int64_t>(options.pp + options.tg, 32); }

Result<SpeedRuns> measure_speed(const model::Model& model, backend::Backend& be, DType kv_type,
                                const SpeedOptions& options, const SpeedHooks& hooks) {
  HEARTH_TRY(auto cache, kv::KvCache::create(be, model.kv_config(speed_context(options), kv_type)));
  SpeedRuns runs;
  runs.weight_bytes = model.weight_bytes();
  runs.kv_bytes = cache->bytes();
  sampling::Rng rng(42);
  const auto n_vocab = static_cast<uint64_t>(model.hparams().n_vocab);
  std::vector<float> logits;
  const auto step_done = [&](int64_t r, SpeedPhase phase, double s) {
    if (r == options.reps && hooks.on_last_rep_step) hooks.on_last_rep_step(phase, s);
  };
  for (int64_t r = 0; r <= options.reps; ++r) {  // repetition 0 warms up and is not counted
    if (options.pp > 0) {
      std::vector<int32_t> ids(static_cast<size_t>(options.pp)), pos(static_cast<size_t>(options.pp));
      for (auto& id : ids) id = static_cast<int32_t>(rng.next() % n_vocab);
      std::iota(pos.begin(), pos.end(), 0);
      cache->clear();
      const auto t0 = Clock::now();
      HEARTH_CHECK(model.forward(be, *cache, model::Batch{ids, pos}, model::LogitsRows::Last, logits));
      const double s = seconds_since(t0);
      if (r > 0) runs.pp_tps.push_back(static_cast<double>(options.pp) / s);
      step_done(r, SpeedPhase::Prompt, s);
    }
    if (options.tg > 0) {
      cache->clear();
      auto token = static_cast<int32_t>(rng.next() % n_vocab);
      // The run's bandwidth: the better of the probes just before and just
      // after it (the higher figure makes the fraction the harder to reach).
      const double bw_before = r > 0 && hooks.probe ? hooks.probe->measure(hooks.probe_passes) : 0.0;
      const auto t0 = Clock::now();
      for (int32_t i = 0; i < options.tg; ++i) {
        const auto t_step = Clock::now();
        HEARTH_CHECK(model.forward(be, *cache, model::Batch{std::span(&token, 1), std::span(&i, 1)},
                                   model::LogitsRows::Last, logits));
        step_done(r, SpeedPhase::Generation, seconds_since(t_step));
        token = sampling::argmax(logits);
      }
      if (r > 0) {
        runs.tg_tps.push_back(static_cast<double>(options.tg) / seconds_since(t0));
        if (hooks.probe) {
          runs.tg_bandwidth_gbps.push_back(std::max(bw_before, hooks.probe->measure(hooks.probe_passes)));
        }
      }
    }
  }
  return runs;
}

}  // namespace hearth::measure
