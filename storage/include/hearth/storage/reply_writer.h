// Persists a reply while the engine streams it: text is committed at most every
// flush_interval (default 300 ms) in a short transaction, so a crash loses at most
// that much, and the final commit is synced to disk. One per reply, on the thread
// that owns the Database.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"
#include "hearth/storage/messages.h"

namespace hearth::storage {

struct ReplyWriterOptions {
  std::chrono::milliseconds flush_interval{300};
  Role role = Role::Assistant;
  // Monotonic time source; defaults to std::chrono::steady_clock (tests replace it).
  std::function<std::chrono::steady_clock::time_point()> clock;
};

class ReplyWriter {
 public:
  // Inserts the reply as `streaming` under `parent` and makes it the active leaf.
  static Result<ReplyWriter> begin(Database& db, ConversationId conversation, MessageId parent,
                                   ReplyWriterOptions options = {});

  // Adds generated text; commits it when flush_interval has passed since the last
  // commit. On error the text stays buffered and the next call retries.
  Status append(std::string_view text, std::int64_t tokens = 1);
  // Commits the buffered text now (for example before a long pause).
  Status flush();
  // Ends the reply with its final state (Complete, Interrupted or Error), synced.
  // After it, every call fails with InvalidArgument.
  Status finish(MessageState state, const GenerationStats& stats = {}, std::string_view error_message = {});

  MessageId id() const { return id_; }
  const std::string& text() const { return text_; }
  std::int64_t token_count() const { return tokens_; }
  // Whether text() is newer than what the database holds.
  bool dirty() const { return dirty_; }

 private:
  ReplyWriter(Database& db, MessageId id, ReplyWriterOptions options);
  std::chrono::steady_clock::time_point now() const;

  Database* db_;
  MessageId id_;
  ReplyWriterOptions options_;
  std::string text_;
  std::int64_t tokens_ = 0;
  bool dirty_ = false;
  bool finished_ = false;
  std::chrono::steady_clock::time_point last_commit_;
};

}  // namespace hearth::storage
