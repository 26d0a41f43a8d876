// Greedy speculative decoding must give exactly the tokens of greedy
// decoding without it: shared by the CPU and the Vulkan suites. The
// reference is the same engine decoding one token at a time (whose greedy
// output the conformance suites check against the reference engine).
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/runtime/speculation.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace hearth::runtime::testing {

inline std::vector<int32_t> greedy_tokens(const model::Model& model, backend::Backend& backend,
                                          const std::vector<int32_t>& prompt, int32_t n, Speculator* spec,
                                          SpecFigures* figures = nullptr) {
  auto s = Session::create(model, backend, SessionConfig{512, DType::F16, 64});
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  if (!s.ok()) return {};
  GenerateOptions opt;
  opt.max_tokens = n;
  opt.sampler.temperature = 0;
  opt.speculator = spec;
  auto r = (*s)->generate(prompt, opt, {}, {});
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return {};
  if (figures) *figures = r->spec;
  // The session's context mirrors what was emitted (all but the last token).
  const auto& ctx = (*s)->context();
  EXPECT_EQ(ctx.size(), prompt.size() + r->tokens.size() - 1);
  EXPECT_TRUE(std::equal(r->tokens.begin(), r->tokens.end() - 1, ctx.begin() + static_cast<std::ptrdiff_t>(prompt.size())));
  return r->tokens;
}

// Two greedy runs must give the same tokens. Where they part, the failure
// names the token and the plain run's logits of the two choices there (as a
// one-token decode computes them), to tell a rounding near-tie from a bug.
inline void expect_same_tokens(const model::Model& model, backend::Backend& backend, const std::vector<int32_t>& prompt,
                               const std::vector<int32_t>& plain, const std::vector<int32_t>& got,
                               const std::string& what) {
  const size_t at = static_cast<size_t>(std::mismatch(plain.begin(), plain.end(), got.begin(), got.end()).first - plain.begin());
  if (at == plain.size() && got.size() == plain.size()) return;
  ASSERT_LT(at, std::min(plain.size(), got.size())) << what << ": the runs have different lengths";
  auto s = Session::create(model, backend, SessionConfig{512, DType::F16, 64});
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE((*s)->prefill(prompt).ok());
  for (size_t i = 0; i < at; ++i) ASSERT_TRUE((*s)->decode(plain[i]).ok());
  const auto l = (*s)->last_logits();
  ADD_FAILURE() << what << ": the runs part at token " << at << " (" << plain[at] << " vs " << got[at]
                << ") where the plain logits are " << l[static_cast<size_t>(plain[at])] << " and "
                << l[static_cast<size_t>(got[at])];
}

// Generates `n` tokens plainly, then with n-gram drafting and with `draft`
// drafting (on `draft_backend`) at each length of `ks`, fixed (not
// adaptive, so every step speculates), and expects the same tokens. Returns
// the figures summed over the speculative runs so callers can check that
// drafts were both accepted and rejected.
inline SpecFigures expect_speculation_exact(const model::Model& target, backend::Backend& backend,
                                            const model::Model* draft, backend::Backend* draft_backend,
                                            const std::vector<int32_t>& prompt, int32_t n,
                                            const std::vector<int32_t>& ks) {
  const auto plain = greedy_tokens(target, backend, prompt, n, nullptr);
  EXPECT_EQ(plain.size(), static_cast<size_t>(n));
  SpecFigures total;
  auto add = [&](const SpecFigures& f) {
    total.verify_passes += f.verify_passes;
    total.drafted += f.drafted;
    total.accepted += f.accepted;
  };
  for (int32_t k : ks) {
    SpeculationConfig config;
    config.draft_max = k;
    config.adaptive = false;
    Speculator ngram(std::make_unique<NgramDrafter>(), config);
    SpecFigures f;
    expect_same_tokens(target, backend, prompt, plain, greedy_tokens(target, backend, prompt, n, &ngram, &f),
                       "n-gram drafts, k = " + std::to_string(k));
    add(f);
    if (draft) {
      auto drafter = ModelDrafter::create(target, *draft, *draft_backend, 512);
      EXPECT_TRUE(drafter.ok()) << (drafter.ok() ? "" : drafter.error().message);
      if (!drafter.ok()) continue;
      Speculator with_model(std::move(*drafter), config);
      expect_same_tokens(target, backend, prompt, plain, greedy_tokens(target, backend, prompt, n, &with_model, &f),
                         "model drafts, k = " + std::to_string(k));
      EXPECT_GT(f.verify_passes, 0) << "k = " << k;
      add(f);
    }
  }
  return total;
}

}  // namespace hearth::runtime::testing
