#include "remote/context_fit.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace hearth::remote {
namespace {

// Role markers and separators a chat template adds around each message.
constexpr int64_t kPerMessageOverhead = 6;

}  // namespace

int64_t TokenEstimator::estimate(const ChatMessage& message) const {
  return kPerMessageOverhead + static_cast<int64_t>(std::ceil(static_cast<double>(message.content.size()) * tokens_per_byte_));
}

int64_t TokenEstimator::estimate(const std::vector<ChatMessage>& messages) const {
  int64_t total = 0;
  for (const auto& m : messages) total += estimate(m);
  return total;
}

void TokenEstimator::calibrate(const std::vector<ChatMessage>& sent, int64_t prompt_tokens) {
  size_t bytes = 0;
  for (const auto& m : sent) bytes += m.content.size();
  const int64_t overhead = kPerMessageOverhead * static_cast<int64_t>(sent.size());
  // Too little text to learn a rate from: keep the current one.
  if (bytes < 64 || prompt_tokens <= overhead) return;
  const double rate = static_cast<double>(prompt_tokens - overhead) / static_cast<double>(bytes);
  // Never trust a rate far off any tokenizer's (a server that reports nonsense).
  tokens_per_byte_ = std::clamp(rate, 0.05, 1.5);
}

Result<FitResult> fit_to_context(const std::vector<ChatMessage>& messages, int64_t context_length, int64_t reserve,
                                 const TokenEstimator& estimator) {
  FitResult out;
  out.messages = messages;
  out.estimated_tokens = estimator.estimate(messages);
  if (context_length <= 0 || messages.empty()) return out;
  const int64_t budget = context_length - std::max<int64_t>(reserve, 0);
  const size_t first = (messages.front().role == "system") ? 1 : 0;
  // Keep [0, first) and [cut, end); `cut` moves forward past whole turns.
  size_t cut = first;
  int64_t kept = out.estimated_tokens;
  while (kept > budget && cut + 1 < messages.size()) {
    kept -= estimator.estimate(messages[cut]);
    ++cut;
    // A reply without the question it answered is dropped with it.
    while (cut + 1 < messages.size() && messages[cut].role == "assistant") {
      kept -= estimator.estimate(messages[cut]);
      ++cut;
    }
  }
  if (kept > budget) {
    return make_error(ErrorCode::LimitExceeded,
                      "the system prompt and the newest message need about " + std::to_string(kept) +
                          " tokens, more than the " + std::to_string(budget) + " the context of " +
                          std::to_string(context_length) + " tokens leaves beside the reply");
  }
  if (cut > first) {
    out.dropped = static_cast<int>(cut - first);
    out.first_dropped = static_cast<int>(first);
    out.messages.erase(out.messages.begin() + static_cast<std::ptrdiff_t>(first),
                       out.messages.begin() + static_cast<std::ptrdiff_t>(cut));
  }
  out.estimated_tokens = kept;
  return out;
}

}  // namespace hearth::remote
