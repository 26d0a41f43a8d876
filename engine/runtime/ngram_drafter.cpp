#include <hearth/engine/runtime/drafter.h>

#include <algorithm>

namespace hearth::runtime {

uint64_t NgramDrafter::key(std::span<const int32_t> gram) {
  // FNV-1a over the ids: collisions only cost a useless draft (the target
  // verifies), and propose() checks the candidate's tokens anyway.
  uint64_t h = 1469598103934665603ull;
  for (int32_t t : gram) {
    h ^= static_cast<uint32_t>(t);
    h *= 1099511628211ull;
  }
  return h;
}

void NgramDrafter::index_up_to(std::span<const int32_t> context) {
  const bool extends = indexed_.size() <= context.size() &&
                       std::equal(indexed_.begin(), indexed_.end(), context.begin());
  if (!extends) {
    indexed_.clear();
    latest_.assign(static_cast<size_t>(max_n_ + 1), {});
  }
  if (latest_.empty()) latest_.assign(static_cast<size_t>(max_n_ + 1), {});
  // An n-gram ending at position e-1 is recorded once a token follows it,
  // i.e. when e < size: the last tokens are the query, never their own match.
  const size_t from = indexed_.size();
  for (size_t e = std::max<size_t>(from, 1); e < context.size(); ++e) {
    for (int32_t n = min_n_; n <= max_n_; ++n) {
      if (e < static_cast<size_t>(n)) break;
      latest_[static_cast<size_t>(n)][key(context.subspan(e - static_cast<size_t>(n), static_cast<size_t>(n)))] = e;
    }
  }
  indexed_.assign(context.begin(), context.end());
}

Result<Draft> NgramDrafter::propose(std::span<const int32_t> context, int32_t max, const sampling::SamplerConfig&) {
  Draft draft;
  if (max <= 0 || context.size() < static_cast<size_t>(min_n_) + 1) return draft;
  index_up_to(context);
  for (int32_t n = std::min<int32_t>(max_n_, static_cast<int32_t>(context.size()) - 1); n >= min_n_; --n) {
    const auto tail = context.subspan(context.size() - static_cast<size_t>(n));
    const auto& map = latest_[static_cast<size_t>(n)];
    const auto it = map.find(key(tail));
    if (it == map.end()) continue;
    const size_t after = it->second;
    if (!std::equal(tail.begin(), tail.end(), context.begin() + static_cast<std::ptrdiff_t>(after - tail.size()))) {
      continue;  // a hash collision
    }
    for (size_t i = after; i < context.size() && draft.tokens.size() < static_cast<size_t>(max); ++i) {
      draft.tokens.push_back(context[i]);
    }
    break;
  }
  return draft;
}

}  // namespace hearth::runtime
