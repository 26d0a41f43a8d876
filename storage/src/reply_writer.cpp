#include "hearth/storage/reply_writer.h"

#include <utility>

namespace hearth::storage {

ReplyWriter::ReplyWriter(Database& db, MessageId id, ReplyWriterOptions options)
    : db_(&db), id_(id), options_(std::move(options)) {
  last_commit_ = now();
}

std::chrono::steady_clock::time_point ReplyWriter::now() const {
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

Status ReplyWriter::append(std::string_view text, std::int64_t tokens) {
  if (finished_) return already_finished(id_);
  text_.append(text);
  tokens_ += tokens;
  dirty_ = true;
  if (now() - last_commit_ < options_.flush_interval) return {};
  return flush();
}

Status ReplyWriter::flush() {
  if (finished_) return already_finished(id_);
  if (!dirty_) return {};
  HEARTH_CHECK(Messages(*db_).update_reply(id_, text_, tokens_));
  dirty_ = false;
  last_commit_ = now();
  return {};
}

Status ReplyWriter::finish(MessageState state, const GenerationStats& stats, std::string_view error_message) {
  if (finished_) return already_finished(id_);
  ReplyEnd end{state, text_, tokens_, stats, std::string(error_message)};
  HEARTH_CHECK(Messages(*db_).finish_reply(id_, end));
  dirty_ = false;
  finished_ = true;
  return {};
}

}  // namespace hearth::storage
