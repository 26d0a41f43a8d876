#include <hearth/engine/quality/greedy.h>
#include <hearth/engine/quality/log_probs.h>

#include <algorithm>
#include <numeric>
#include <string>

namespace hearth::quality {

Result<std::vector<int32_t>> greedy_continuation(const model::Model& model, backend::Backend& backend,
                                                 std::span<const int32_t> prompt, int32_t n_tokens,
                                                 const EvalOptions& options) {
  if (prompt.empty() || n_tokens < 0 || options.n_batch < 1) {
    return make_error(ErrorCode::InvalidArgument, "a greedy continuation needs a prompt and a token count");
  }
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  HEARTH_TRY(auto cache, kv::KvCache::create(backend, model.kv_config(n_prompt + n_tokens, options.kv_type)));
  std::vector<int32_t> positions(static_cast<size_t>(n_prompt));
  std::iota(positions.begin(), positions.end(), 0);
  std::vector<float> logits;
  for (int64_t b0 = 0; b0 < n_prompt; b0 += options.n_batch) {
    const auto len = static_cast<size_t>(std::min<int64_t>(options.n_batch, n_prompt - b0));
    const model::Batch batch{prompt.subspan(static_cast<size_t>(b0), len),
                             std::span<const int32_t>(positions).subspan(static_cast<size_t>(b0), len)};
    HEARTH_CHECK(model.forward(backend, *cache, batch, model::LogitsRows::Last, logits));
  }
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(n_tokens));
  for (int32_t i = 0; i < n_tokens; ++i) {
    int32_t token = argmax(logits);
    out.push_back(token);
    if (i + 1 == n_tokens) break;
    int32_t pos = static_cast<int32_t>(n_prompt) + i;
    HEARTH_CHECK(model.forward(backend, *cache, model::Batch{std::span(&token, 1), std::span(&pos, 1)},
                               model::LogitsRows::Last, logits));
  }
  return out;
}

int64_t common_prefix(std::span<const int32_t> a, std::span<const int32_t> b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<int64_t>(ia - a.begin());
}

Segment continuation_segment(std::span<const int32_t> prompt, std::span<const int32_t> continuation) {
  Segment s;
  s.tokens.assign(prompt.begin(), prompt.end());
  s.tokens.insert(s.tokens.end(), continuation.begin(), continuation.end());
  // The prompt's last position predicts the continuation's first token.
  s.first = static_cast<int32_t>(prompt.size()) - 1;
  return s;
}

}  // namespace hearth::quality
