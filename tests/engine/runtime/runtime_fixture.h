// Shared by the KV runtime tests: loading a fixture model on the CPU backend,
// deterministic pseudo-random token ids, and a fresh-session reference.
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/session.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "../model/fixture_logits.h"

namespace hearth::runtime::testing {

using hearth::testing::data_path;

// Ids in [low, n_vocab) from a fixed linear congruential sequence.
inline std::vector<int32_t> synthetic_tokens(size_t n, uint32_t seed, int32_t n_vocab, int32_t low = 3) {
  std::vector<int32_t> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& t : out) {
    x = x * 1664525u + 1013904223u;
    t = low + static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(n_vocab - low));
  }
  return out;
}

inline std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Largest |a - b| relative to the largest |b|.
inline double max_rel_diff(std::span<const float> a, std::span<const float> b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    diff = std::max(diff, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

class ModelFixture : public ::testing::Test {
 protected:
  void load(const std::string& rel_path) {
    auto m = model::Model::load(data_path(rel_path));
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = std::move(*m);
    // One thread: these models are tiny, and spinning workers only slow a loaded machine.
    backend_ = backend::make_cpu_backend({1});
  }
  std::unique_ptr<Session> session(int64_t n_ctx, DType kv = DType::F32, int32_t n_batch = 64) {
    auto s = Session::create(*model_, *backend_, SessionConfig{n_ctx, kv, n_batch});
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(*s) : nullptr;
  }
  // Logits of the last token after a full prefill in a new session: the
  // independent computation the reuse paths are compared with.
  std::vector<float> fresh_logits(const std::vector<int32_t>& tokens, int64_t n_ctx, DType kv = DType::F32) {
    auto s = session(n_ctx, kv);
    EXPECT_TRUE(s->prefill(tokens).ok());
    return {s->last_logits().begin(), s->last_logits().end()};
  }
  int32_t n_vocab() const { return static_cast<int32_t>(model_->hparams().n_vocab); }

  std::unique_ptr<model::Model> model_;
  std::unique_ptr<backend::Backend> backend_;
};

}  // namespace hearth::runtime::testing
