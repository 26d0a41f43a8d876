#include "hearth/storage/reply_writer.h"

#include <utility>

namespace hearth::storage {

ReplyWriter::ReplyWriter(Database& db, MessageId id, ReplyWriterOptions options)
    : db_(&db), id_(id), options_(std::move(options)) {
  last_commit_ = now();
}

ReplyWriter::TimePoint ReplyWriter::now() const {
  return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

Result<ReplyWriter> ReplyWriter::begin(Database& db, ConversationId conversation, MessageId parent,
                                       ReplyWriterOptions options) {
  HEARTH_TRY(MessageId id, Messages(db).begin_reply(conversation, parent, options.role));
  return ReplyWriter(db, id, std::move(options));
}

namespace {
Error already_finished(MessageId id) {
  return make_error(ErrorCode::InvalidArgument, "reply " + std::to_string(id.value()) + " is already finished");
}
}  // namespace

std::optional<double> ReplyWriter::reasoning_ms() const {
  if (reasoning_ms_override_) return reasoning_ms_override_;
  if (!reasoning_started_ || !reasoning_ended_) return std::nullopt;
  return std::chrono::duration<double, std::milli>(*reasoning_ended_ - *reasoning_started_).count();
}

Status ReplyWriter::append(std::string_view text, std::int64_t tokens) {
  if (finished_) return already_finished(id_);
  if (reasoning_started_ && !reasoning_ended_) reasoning_ended_ = now();
  text_.append(text);
  tokens_ += tokens;
  return added();
}

Status ReplyWriter::append_reasoning(std::string_view text, std::int64_t tokens) {
  if (finished_) return already_finished(id_);
  if (!reasoning_started_) reasoning_started_ = now();
  reasoning_.append(text);
  tokens_ += tokens;
  return added();
}

Status ReplyWriter::added() {
  dirty_ = true;
  if (now() - last_commit_ < options_.flush_interval) return {};
  return flush();
}

Status ReplyWriter::flush() {
  if (finished_) return already_finished(id_);
  if (!dirty_) return {};
  HEARTH_CHECK(Messages(*db_).update_reply(id_, ReplyProgress{text_, tokens_, reasoning_, reasoning_ms()}));
  dirty_ = false;
  last_commit_ = now();
  return {};
}

Status ReplyWriter::finish(MessageState state, const GenerationStats& stats, std::string_view error_message) {
  if (finished_) return already_finished(id_);
  // A reply that ends while thinking thought until its end.
  const std::optional<TimePoint> ended = reasoning_ended_;
  if (reasoning_started_ && !reasoning_ended_) reasoning_ended_ = now();
  ReplyEnd end{state, text_, tokens_, stats, std::string(error_message), reasoning_, reasoning_ms()};
  Status finished = Messages(*db_).finish_reply(id_, end);
  if (!finished.ok()) {
    reasoning_ended_ = ended;  // a retry measures again
    return finished;
  }
  dirty_ = false;
  finished_ = true;
  return {};
}

}  // namespace hearth::storage
