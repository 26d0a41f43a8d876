// Stop handling: which tokens end a reply, and user stop strings that may
// arrive split across streamed pieces.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::chat {

// Token texts that end an assistant turn in the common chat formats
// (<|im_end|>, <|eot_id|>, <|eom_id|>, <end_of_turn>, <|end|>, ...).
std::span<const std::string_view> end_of_generation_texts();

// Ids of the tokens that end generation: the vocabulary's EOS and EOT (from
// metadata, when present) plus every token whose text is one of
// end_of_generation_texts(). Sorted, without duplicates. Ids outside the
// vocabulary are ignored.
std::vector<int32_t> end_of_generation_tokens(const std::vector<std::string>& vocab_tokens,
                                              std::optional<int32_t> eos_id, std::optional<int32_t> eot_id);

struct StopScan {
  std::string text;      // safe to show now
  bool stopped = false;  // a stop string was found; `text` ends just before it
  std::string matched;   // the stop string found
};

// Finds user stop strings in streamed text. Text that could be the start of a
// stop string is held back until the following pieces prove or disprove it,
// so the stop string itself is never shown.
class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stop_strings);  // empty strings are ignored

  // Feeds the next piece. After a stop, further pieces yield nothing.
  StopScan push(std::string_view piece);
  // Generation ended without a stop: releases what was held back.
  std::string flush();
  bool stopped() const { return stopped_; }
  void reset();

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace hearth::chat
