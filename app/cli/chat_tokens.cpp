#include "chat_tokens.h"

#include <algorithm>

namespace hearth::cli {

std::vector<ChatMessage> ChatTokens::shadow() const {
  std::vector<ChatMessage> all;
  if (!system_.empty()) all.push_back({"system", system_});
  all.insert(all.end(), messages_.begin(), messages_.end());
  return all;
}

Result<std::vector<int32_t>> ChatTokens::raw(const std::string& text) const {
  HEARTH_TRY(auto ids, codec_.encode(text, PromptMode::Raw));
  const int32_t bos = codec_.tokenizer().vocab().special.bos;
  if (!ids.empty() && ids.front() == bos) ids.erase(ids.begin());
  return ids;
}

Result<std::vector<int32_t>> ChatTokens::start() {
  messages_.clear();
  // What two renderings with different user messages share is the system part.
  auto a = shadow(), b = shadow();
  a.push_back({"user", "a"});
  b.push_back({"user", "b"});
  HEARTH_TRY(const auto ra, codec_.encode_chat(a));
  HEARTH_TRY(const auto rb, codec_.encode_chat(b));
  const auto end = std::mismatch(ra.begin(), ra.end(), rb.begin(), rb.end()).first;
  produced_.assign(ra.begin(), end);
  return produced_;
}

Result<ChatTokens::TurnTokens> ChatTokens::user_turn(const std::string& text) {
  TurnTokens t;
  messages_.push_back({"user", text});
  HEARTH_TRY(auto full, codec_.encode_chat(shadow()));
  const auto common = static_cast<size_t>(
      std::mismatch(produced_.begin(), produced_.end(), full.begin(), full.end()).first - produced_.begin());
  t.rollback = produced_.size() - common;
  t.append.assign(full.begin() + static_cast<std::ptrdiff_t>(common), full.end());
  produced_ = std::move(full);
  return t;
}

void ChatTokens::reply(const std::string& text, const std::vector<int32_t>& tokens) {
  messages_.push_back({"assistant", text});
  produced_.insert(produced_.end(), tokens.begin(), tokens.end());
}

Result<std::vector<int32_t>> ChatTokens::summary_request() {
  const std::string ask = "Summarize briefly.";
  // The template's rendering of one user message, without its leading BOS.
  HEARTH_TRY(auto ids, codec_.encode_chat({{"user", ask}}));
  const int32_t bos = codec_.tokenizer().vocab().special.bos;
  if (!ids.empty() && ids.front() == bos) ids.erase(ids.begin());
  return ids;
}

Result<std::vector<int32_t>> ChatTokens::note_prefix() { return raw("\nEarlier in this conversation:"); }

}  // namespace hearth::cli
