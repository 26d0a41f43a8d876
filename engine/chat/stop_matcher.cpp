#include <algorithm>
#include <array>

#include "hearth/engine/chat/stop.h"

namespace hearth::chat {

namespace {
constexpr std::array<std::string_view, 11> kEndOfGeneration = {
      "<|im_end|>",     "<|eot_id|>",           "<|eom_id|>",  "<end_of_turn>",
      "<|end|>",        "<|endoftext|>",        "</s>",        "<|END_OF_TURN_TOKEN|>",
      "<|end_of_text|>", "<｜end▁of▁sentence｜>", "<|return|>",
};
}  // namespace

std::span<const std::string_view> end_of_generation_texts() { return kEndOfGeneration; }

std::vector<int32_t> end_of_generation_tokens(const std::vector<std::string>& vocab_tokens,
                                              std::optional<int32_t> eos_id, std::optional<int32_t> eot_id) {
  std::vector<int32_t> ids;
  const auto n = static_cast<int64_t>(vocab_tokens.size());
  for (auto id : {eos_id, eot_id}) {
    if (id && *id >= 0 && *id < n) ids.push_back(*id);
  }
  const auto texts = end_of_generation_texts();
  for (int64_t i = 0; i < n; ++i) {
    if (std::find(texts.begin(), texts.end(), vocab_tokens[static_cast<size_t>(i)]) != texts.end()) {
      ids.push_back(static_cast<int32_t>(i));
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

StopMatcher::StopMatcher(std::vector<std::string> stop_strings) {
  for (auto& s : stop_strings) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

void StopMatcher::reset() {
  pending_.clear();
  stopped_ = false;
}

StopScan StopMatcher::push(std::string_view piece) {
  StopScan scan;
  if (stopped_) return scan;
  pending_.append(piece);
  // The earliest complete stop string wins.
  size_t best = std::string::npos;
  const std::string* best_stop = nullptr;
  for (const auto& stop : stops_) {
    const size_t at = pending_.find(stop);
    if (at != std::string::npos && (at < best || (at == best && stop.size() > best_stop->size()))) {
      best = at;
      best_stop = &stop;
    }
  }
  if (best_stop) {
    scan.text = pending_.substr(0, best);
    scan.stopped = true;
    scan.matched = *best_stop;
    stopped_ = true;
    pending_.clear();
    return scan;
  }
  // Hold back the longest tail that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const auto& stop : stops_) {
    const size_t max_k = std::min(stop.size() - 1, pending_.size());
    for (size_t k = max_k; k > hold; --k) {
      if (pending_.compare(pending_.size() - k, k, stop, 0, k) == 0) {
        hold = k;
        break;
      }
    }
  }
  scan.text = pending_.substr(0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return scan;
}

std::string StopMatcher::flush() {
  std::string out;
  if (!stopped_) out.swap(pending_);
  pending_.clear();
  return out;
}

}  // namespace hearth::chat
