#include "engine_service/chat_transcript.h"

#include <algorithm>

namespace hearth::app {

Result<std::vector<int32_t>> ChatTranscript::start(const QList<ui::ChatTurn>& system) {
  messages_ = system;
  // What two renderings with different first messages share is the system part.
  QList<ui::ChatTurn> a = system, b = system;
  a.append({ui::ChatRole::User, QStringLiteral("a")});
  b.append({ui::ChatRole::User, QStringLiteral("b")});
  HEARTH_TRY(const auto ra, render_(a, GenerationPrompt::Yes));
  HEARTH_TRY(const auto rb, render_(b, GenerationPrompt::Yes));
  const auto end = std::mismatch(ra.begin(), ra.end(), rb.begin(), rb.end()).first;
  produced_.assign(ra.begin(), end);
  return produced_;
}

Result<ChatTranscript::Append> ChatTranscript::append(const QList<ui::ChatTurn>& messages, GenerationPrompt prompt) {
  QList<ui::ChatTurn> all = messages_;
  all.append(messages);
  HEARTH_TRY(auto full, render_(all, prompt));
  const auto common = static_cast<size_t>(
      std::mismatch(produced_.begin(), produced_.end(), full.begin(), full.end()).first - produced_.begin());
  Append out;
  out.rollback = produced_.size() - common;
  out.tokens.assign(full.begin() + static_cast<std::ptrdiff_t>(common), full.end());
  produced_ = std::move(full);
  messages_ = std::move(all);
  return out;
}

void ChatTranscript::reply(const QString& text, std::span<const int32_t> tokens) {
  messages_.append({ui::ChatRole::Assistant, text});
  produced_.insert(produced_.end(), tokens.begin(), tokens.end());
}

void ChatTranscript::truncate(qsizetype keep, size_t produced) {
  if (keep < messages_.size()) messages_.resize(keep);
  if (produced < produced_.size()) produced_.resize(produced);
}

}  // namespace hearth::app
