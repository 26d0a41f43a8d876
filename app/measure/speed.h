// Prompt processing (pp) and generation (tg) speed of a loaded model, and the
// memory the measurement held: the one timing path behind `bench` and
// `compare`, so their figures are the same measurement.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "measure/read_bandwidth.h"

namespace hearth::measure {

struct SpeedOptions {
  int64_t pp = 512;  // prompt tokens per pp run (0: none)
  int64_t tg = 128;  // generated tokens per tg run (0: none)
  int64_t reps = 3;  // counted repetitions, after one uncounted warm-up
};

enum class SpeedPhase { Prompt, Generation };

struct SpeedHooks {
  // Measured right before and right after every counted generation run
  // (bench's roofline); null: bandwidth is not measured.
  const ReadBandwidthProbe* probe = nullptr;
  int probe_passes = 3;
  // Called after every forward pass of the last repetition with its wall
  // seconds (bench --profile reads the GPU timings there).
  std::function<void(SpeedPhase, double seconds)> on_last_rep_step;
};

struct SpeedRuns {
  std::vector<double> pp_tps, tg_tps;
  std::vector<double> tg_bandwidth_gbps;  // per tg run, with a probe
  uint64_t weight_bytes = 0;              // the model's weights in memory
  uint64_t kv_bytes = 0;                  // the KV cache the runs used
  uint64_t memory_bytes() const { return weight_bytes + kv_bytes; }
};

struct Stats {
  double mean = 0, sd = 0;
};
// Mean and sample standard deviation.
Stats stats(const std::vector<double>& v);

// The context the runs need: pp + tg tokens (at least 32).
int64_t speed_context(const SpeedOptions& options);

// Random-token prompts and greedy generation from an empty cache, seeded so
// every model sees the same ids.
Result<SpeedRuns> measure_speed(const model::Model& model, backend::Backend& backend, DType kv_type,
                                const SpeedOptions& options, const SpeedHooks& hooks = {});

}  // namespace hearth::measure
