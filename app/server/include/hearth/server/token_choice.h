// What every CompletionBackend does around the model's logits, in one place:
// the grammar's mask before the draw, the draw itself with the sequence's
// sampler, OpenAI's log-probabilities of the model's own distribution, and
// the reply text as a client sees it (UTF-8 held back until whole, stop
// strings held back until decided, chat replies without leading spaces).
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/chat/stop.h>
#include <hearth/engine/sampling/sampler.h>
#include <hearth/engine/tokenizer/stream_decoder.h>
#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/server/backend.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hearth::server {

// A request's prompt as every backend takes it: at least one token, room for
// one more in the context, every id in the vocabulary. InvalidArgument
// saying which rule it broke (HTTP 400).
Status check_prompt(const std::vector<int32_t>& prompt, int64_t n_ctx, int64_t n_vocab);

struct TokenChoice {
  int32_t token = -1;
  bool end_of_generation = false;
  bool has_logprob = false;  // set for tokens that are shown, when the request asks
  TokenLogprob chosen;
  std::vector<TokenLogprob> top;
};

// Picks one token for `request` from `logits` (n_vocab). With a constraint,
// tokens it forbids are masked out first and the chosen one is fed back to
// it. InvalidArgument when the constraint allows no token at all.
class TokenChooser {
 public:
  TokenChooser(const tokenizer::Tokenizer& tokenizer, std::vector<int32_t> end_of_generation)
      : tokenizer_(tokenizer), end_of_generation_(std::move(end_of_generation)) {}
  // `ignore_eos`: end-of-generation tokens are masked out (never chosen).
  Result<TokenChoice> choose(std::span<const float> logits, sampling::Sampler& sampler,
                             TokenConstraint* constraint, int32_t top_logprobs, bool ignore_eos = false);
  bool ends_generation(int32_t token) const;

 private:
  const tokenizer::Tokenizer& tokenizer_;
  std::vector<int32_t> end_of_generation_;
  std::vector<float> masked_;  // reused between tokens
  std::vector<bool> allowed_;
};

// The text of one reply as it streams to the client.
class ReplyText {
 public:
  ReplyText(const tokenizer::Tokenizer& tokenizer, const std::vector<std::string>& stop, bool strip_leading_space)
      : decoder_(tokenizer), stops_(stop), first_visible_(!strip_leading_space) {}
  // The text this token makes safe to show (may be empty).
  std::string push(int32_t token);
  // A stop string has appeared: the reply ends here.
  bool stopped() const { return stops_.stopped(); }
  // At the end of a reply that did not stop: the bytes held back. `stopped`
  // turns true when they complete a stop string.
  std::string finish();

 private:
  std::string shown(std::string text);
  tokenizer::StreamDecoder decoder_;
  chat::StopMatcher stops_;
  bool first_visible_;
};

}  // namespace hearth::server
