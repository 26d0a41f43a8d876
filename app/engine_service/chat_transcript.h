// The conversation as the KV cache holds it, in tokens: every message the
// engine has taken in (evicted ones too, since the chat template renders the
// whole conversation) and the tokens produced for them. A new message is
// rendered with the template together with everything before it, and only
// what the rendering adds beyond the produced tokens is appended, so a
// follow-up never prefills the conversation again, even after an evict or a
// summary changed what the cache holds.
#pragma once

#include <hearth/engine/core/result.h>

#include <QList>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/engine_types.h"

namespace hearth::app {

enum class GenerationPrompt { No, Yes };

class ChatTranscript {
 public:
  // Renders messages as the tokens of the whole conversation (BOS included).
  using RenderFn =
      std::function<Result<std::vector<int32_t>>(const QList<ui::ChatTurn>& messages, GenerationPrompt prompt)>;

  explicit ChatTranscript(RenderFn render) : render_(std::move(render)) {}

  // Starts over with `system` (empty for none) and returns the pinned start of
  // the context: what every conversation with this system prompt begins with.
  Result<std::vector<int32_t>> start(const QList<ui::ChatTurn>& system);

  struct Append {
    std::vector<int32_t> tokens;  // to prefill
    size_t rollback = 0;          // trailing produced tokens the rendering replaces
  };
  // Takes in `messages` after those already held; `prompt` asks for the
  // template's assistant header (the reply follows).
  Result<Append> append(const QList<ui::ChatTurn>& messages, GenerationPrompt prompt);
  // Records the reply: its text and the tokens it left in the context.
  void reply(const QString& text, std::span<const int32_t> tokens);

  // Forgets the messages from index `keep` on; `produced` is the token count
  // the transcript had when that message was taken in.
  void truncate(qsizetype keep, size_t produced);

  const QList<ui::ChatTurn>& messages() const { return messages_; }
  size_t produced() const { return produced_.size(); }

 private:
  RenderFn render_;
  QList<ui::ChatTurn> messages_;  // the system prompt (if any) first
  std::vector<int32_t> produced_;
};

}  // namespace hearth::app
