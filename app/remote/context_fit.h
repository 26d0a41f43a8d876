// Fitting a conversation into a remote model's context. The engine's chat
// layer (runtime::ChatContext, chat_format) counts tokens with the loaded
// model's tokenizer and template; a remote model's tokenizer and template
// live on the server, so here token counts are estimated from the text and
// calibrated by the server's own figures: after each reply, `usage`
// (prompt_tokens for exactly the messages sent) corrects the
// tokens-per-byte rate the next estimate uses. The oldest turns go first; the
// system prompt and the newest message always stay.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <vector>

#include "remote/chat_protocol.h"

namespace hearth::remote {

class TokenEstimator {
 public:
  // Tokens of one message, its role markers included.
  int64_t estimate(const ChatMessage& message) const;
  int64_t estimate(const std::vector<ChatMessage>& messages) const;
  // The server counted `prompt_tokens` for `sent`: later estimates use its rate.
  void calibrate(const std::vector<ChatMessage>& sent, int64_t prompt_tokens);
  double tokens_per_byte() const { return tokens_per_byte_; }

 private:
  // A cautious start (about 3 bytes per token: more tokens than most
  // tokenizers make of English), until the server's count is known.
  double tokens_per_byte_ = 1.0 / 3.0;
};

struct FitResult {
  std::vector<ChatMessage> messages;  // what to send
  int dropped = 0;                    // turns left out
  int first_dropped = -1;             // index in the input of the first one (-1: none)
  int64_t estimated_tokens = 0;       // of `messages`
};

// Drops the oldest non-system messages (a user turn with the reply after it)
// until the estimate of the rest plus `reserve` (room for the reply) fits
// `context_length`. LimitExceeded when the system prompt and the newest
// message alone do not fit. context_length <= 0: no limit, nothing dropped.
Result<FitResult> fit_to_context(const std::vector<ChatMessage>& messages, int64_t context_length, int64_t reserve,
                                 const TokenEstimator& estimator);

}  // namespace hearth::remote
