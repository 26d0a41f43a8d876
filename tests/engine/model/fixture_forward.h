// Shared by the CPU conformance tests (this tree's and the aarch64 cross
// build's): a fixture model's logits for every position of its fixture
// tokens through the CPU backend, as one batch or token by token. Engine
// headers only, so that the engine-only cross build can include it.
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/model/model.h>

#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "fixture_logits.h"

namespace hearth::testing {

// One batch runs the prompt path (tiles); token by token the decode path
// (one row dot per weight row).
enum class Feed { OneBatch, TokenByToken };

// Logits [positions x n_vocab] of `c`'s tokens on a CPU backend made with
// `options` and a KV cache of `kv_type`; empty (with a failure recorded) when
// the model or the cache cannot be made.
inline std::vector<float> fixture_forward(const FixtureCase& c, const backend::CpuBackendOptions& options, Feed feed,
                                          DType kv_type = DType::F16) {
  auto model = model::Model::load(data_path(std::string("models/") + c.model));
  EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
  if (!model.ok()) return {};
  auto be = backend::make_cpu_backend(options);
  const auto ids = read_ids(data_path(std::string("models/") + c.tokens));
  auto cache = kv::KvCache::create(*be, (*model)->kv_config(static_cast<int64_t>(ids.size()), kv_type));
  EXPECT_TRUE(cache.ok());
  if (!cache.ok()) return {};
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<float> all, logits;
  if (feed == Feed::OneBatch) {
    auto st = (*model)->forward(*be, **cache, model::Batch{ids, pos}, model::LogitsRows::All, all);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    return all;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    auto st = (*model)->forward(*be, **cache,
                                model::Batch{std::span(ids).subspan(i, 1), std::span(pos).subspan(i, 1)},
                                model::LogitsRows::Last, logits);
    EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

}  // namespace hearth::testing
