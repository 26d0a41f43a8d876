// Persists a reply while the engine streams it: text is committed at most every
// flush_interval (default 300 ms) in a short transaction, so a crash loses at most
// that much, and the final commit is synced to disk. One per reply, on the thread
// that owns the Database.
//
// A reasoning model's reply has two texts: its reasoning ("thinking") and its
// answer. Both are buffered and committed together, with the same bound on loss.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
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

  // Adds generated answer text; commits it when flush_interval has passed since the
  // last commit. On error the text stays buffered and the next call retries.
  Status append(std::string_view text, std::int64_t tokens = 1);
  // Adds generated reasoning text, committed like append's.
  Status append_reasoning(std::string_view text, std::int64_t tokens = 1);
  // Commits the buffered text now (for example before a long pause).
  Status flush();
  // Ends the reply with its final state (Complete, Interrupted or Error), synced.
  // After it, every call fails with InvalidArgument.
  Status finish(MessageState state, const GenerationStats& stats = {}, std::string_view error_message = {});

  // How long the thinking took. Measured by default on the options' clock, from the
  // first reasoning piece to the first answer piece after it (or to finish() when
  // the reply ends while still thinking); set_reasoning_ms replaces the measurement
  // with the engine's own figure. nullopt before the thinking ends.
  std::optional<double> reasoning_ms() const;
  void set_reasoning_ms(double ms) { reasoning_ms_override_ = ms; }

  MessageId id() const { return id_; }
  const std::string& text() const { return text_; }
  const std::string& reasoning() const { return reasoning_; }
  std::int64_t token_count() const { return tokens_; }
  // Whether text() or reasoning() is newer than what the database holds.
  bool dirty() const { return dirty_; }

 private:
  using TimePoint = std::chrono::steady_clock::time_point;

  ReplyWriter(Database& db, MessageId id, ReplyWriterOptions options);
  TimePoint now() const;
  Status added();

  Database* db_;
  MessageId id_;
  ReplyWriterOptions options_;
  std::string text_;
  std::string reasoning_;
  std::int64_t tokens_ = 0;
  bool dirty_ = false;
  bool finished_ = false;
  TimePoint last_commit_;
  std::optional<TimePoint> reasoning_started_;
  std::optional<TimePoint> reasoning_ended_;
  std::optional<double> reasoning_ms_override_;
};

}  // namespace hearth::storage
