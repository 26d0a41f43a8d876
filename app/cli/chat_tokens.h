// How hearth-cli chat turns messages into the tokens appended to the context:
// the whole conversation (evicted turns included) is rendered with the chat
// template, and only what it adds beyond the tokens already produced is
// appended, so the KV cache never needs the conversation prefilled again.
#pragma once

#include <hearth/engine/core/result.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine_setup.h"

namespace hearth::cli {

class ChatTokens {
 public:
  ChatTokens(const TextCodec& codec, std::string system) : codec_(codec), system_(std::move(system)) {}

  // The pinned start of the conversation (BOS, system prompt); restarts the transcript.
  Result<std::vector<int32_t>> start();

  struct TurnTokens {
    std::vector<int32_t> append;  // tokens to prefill for this user message
    size_t rollback = 0;          // trailing context tokens the template renders differently
  };
  Result<TurnTokens> user_turn(const std::string& text);
  // Records the reply (its generated tokens as they are in the context).
  void reply(const std::string& text, const std::vector<int32_t>& tokens);
  // A standalone request for a summary of the conversation so far.
  Result<std::vector<int32_t>> summary_request();
  Result<std::vector<int32_t>> note_prefix();

 private:
  Result<std::vector<int32_t>> raw(const std::string& text) const;  // no BOS
  std::vector<ChatMessage> shadow() const;

  const TextCodec& codec_;
  std::string system_;
  std::vector<ChatMessage> messages_;  // every message, evicted or not: what the template renders
  std::vector<int32_t> produced_;      // tokens produced so far, as the template would render them
};

}  // namespace hearth::cli
