// bench --spec: speculative decoding measured against plain decoding in the
// same run: tokens/s with and without, acceptance, draft cost, the verify
// pass's cost by batch size, and the speed-up those costs predict at given
// acceptance rates.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/speculation.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace hearth::cli {

struct SpecBenchInput {
  const model::Model* model = nullptr;
  backend::Backend* backend = nullptr;
  DType kv_type = DType::F16;
  runtime::Speculator* speculator = nullptr;
  std::vector<int32_t> prompt;
  int64_t tg = 128;
  int64_t reps = 3;
};

// JSON keys: spec, tg_tps, tg_tps_sd, tg_tps_nospec, tg_tps_nospec_sd,
// acceptance_rate, mean_accepted, draft_ms_per_token, switch_offs,
// verify_ms (by batch size 1..9), verify_cost_ratio (T(k+1)/T(1), k = 1..8),
// modeled_speedup ({acceptance, k, speedup} at 0.5, 0.7, 0.9).
Result<nlohmann::json> bench_speculation(const SpecBenchInput& in);

// The text report of that JSON.
void print_speculation(const nlohmann::json& j);

}  // namespace hearth::cli
