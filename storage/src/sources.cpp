#include "hearth/storage/sources.h"

#include "database_impl.h"

namespace hearth::storage {

Status Sources::attach(ConversationId conversation, LibraryId library) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("INSERT OR IGNORE INTO conversation_libraries (conversation_id, library_id) "
                                           "VALUES (?1, ?2)"));
  stmt.bind(1, conversation).bind(2, library);
  auto done = stmt.run();
  if (!done.ok() && done.error().message.find("FOREIGN KEY") != std::string::npos) {
    return make_error(ErrorCode::NotFound, describe("conversation", conversation) + " or " +
                                               describe("library", library) + " does not exist");
  }
  return done;
}

Status Sources::detach(ConversationId conversation, LibraryId library) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("DELETE FROM conversation_libraries WHERE conversation_id = ?1 AND "
                                           "library_id = ?2"));
  stmt.bind(1, conversation).bind(2, library);
  return stmt.run();
}

Result<std::vector<LibraryId>> Sources::attached(ConversationId conversation) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT library_id FROM conversation_libraries WHERE conversation_id = ?1 "
                                           "ORDER BY library_id"));
  stmt.bind(1, conversation);
  std::vector<LibraryId> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    out.push_back(stmt.id<LibraryId>(0));
  }
}

Status Sources::put(MessageId message, std::span<const MessageSource> sources) {
  for (const MessageSource& s : sources) {
    if (s.ordinal < 1) {
      return make_error(ErrorCode::InvalidArgument, describe("message", message) + ": source number " +
                                                        std::to_string(s.ordinal) + " is below 1");
    }
  }
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    {
      HEARTH_TRY(auto clear, impl.prepare("DELETE FROM message_sources WHERE message_id = ?1"));
      clear.bind(1, message);
      HEARTH_CHECK(clear.run());
    }
    HEARTH_TRY(auto insert, impl.prepare("INSERT INTO message_sources (message_id, ordinal, chunk_id, library_name, "
                                         "document_path, page, line_first, line_last, text, score) "
                                         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
    for (const MessageSource& s : sources) {
      insert.reset();
      insert.bind(1, message).bind(2, s.ordinal).bind(3, s.chunk).bind(4, s.library_name).bind(5, s.document_path);
      insert.bind(6, s.page).bind(7, s.line_first).bind(8, s.line_last).bind(9, s.text).bind(10, s.score);
      auto done = insert.run();
      if (!done.ok()) {
        Error error = done.take_error();
        error.message = describe("message", message) + " source " + std::to_string(s.ordinal) + ": " + error.message;
        return error;
      }
    }
    return Status{};
  });
}

Result<std::vector<MessageSource>> Sources::of(MessageId message) {
  HEARTH_TRY(auto stmt, db_.impl().prepare("SELECT ordinal, chunk_id, library_name, document_path, page, line_first, "
                                           "line_last, text, score FROM message_sources WHERE message_id = ?1 "
                                           "ORDER BY ordinal"));
  stmt.bind(1, message);
  std::vector<MessageSource> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    out.push_back(MessageSource{stmt.int64(0), stmt.id<ChunkId>(1), stmt.text(2), stmt.text(3),
                                stmt.optional_int64(4), stmt.int64(5), stmt.int64(6), stmt.text(7), stmt.real(8)});
  }
}

}  // namespace hearth::storage
