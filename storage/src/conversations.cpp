#include "hearth/storage/conversations.h"

#include "database_impl.h"
#include "row_readers.h"

namespace hearth::storage {
namespace {

Status expect_one_row(DatabaseImpl& impl, ConversationId id) {
  if (impl.changes() == 0) return make_error(ErrorCode::NotFound, describe("conversation", id) + " does not exist");
  return {};
}

}  // namespace

Result<ConversationId> Conversations::create(const NewConversation& c) {
  return in_transaction(db_, Durability::Full, [&]() -> Result<ConversationId> {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO conversations (title, created_ms, updated_ms, model_file, "
                                       "model_quant, system_prompt, settings_json, reasoning) "
                                       "VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?6, ?7)"));
    stmt.bind(1, c.title).bind(2, impl.now()).bind(3, c.model_file).bind(4, c.model_quant);
    stmt.bind(5, c.system_prompt).bind(6, settings_to_json(c.settings)).bind(7, to_string(c.reasoning));
    HEARTH_CHECK(stmt.run());
    return ConversationId{impl.last_insert_id()};
  });
}

Result<Conversation> Conversations::get(ConversationId id) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_TRY(auto stmt, impl.prepare("SELECT " HEARTH_CONVERSATION_COLUMNS " FROM conversations WHERE id = ?1"));
  stmt.bind(1, id);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::NotFound, describe("conversation", id) + " does not exist");
  return read_conversation(stmt);
}

Result<std::vector<Conversation>> Conversations::list(const ConversationPage& page) {
  DatabaseImpl& impl = db_.impl();
  // One statement per filter keeps each one able to walk conversations_by_listing.
  const char* sql = nullptr;
  switch (page.filter) {
    case ArchiveFilter::NotArchived:
      sql = "SELECT " HEARTH_CONVERSATION_COLUMNS " FROM conversations WHERE archived = 0 "
            "ORDER BY pinned DESC, updated_ms DESC, id DESC LIMIT ?1 OFFSET ?2";
      break;
    case ArchiveFilter::ArchivedOnly:
      sql = "SELECT " HEARTH_CONVERSATION_COLUMNS " FROM conversations WHERE archived = 1 "
            "ORDER BY pinned DESC, updated_ms DESC, id DESC LIMIT ?1 OFFSET ?2";
      break;
    case ArchiveFilter::All:
      sql = "SELECT " HEARTH_CONVERSATION_COLUMNS " FROM conversations "
            "ORDER BY pinned DESC, updated_ms DESC, id DESC LIMIT ?1 OFFSET ?2";
      break;
  }
  HEARTH_TRY(auto stmt, impl.prepare(sql));
  stmt.bind(1, page.limit).bind(2, page.offset);
  std::vector<Conversation> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) break;
    HEARTH_TRY(auto conversation, read_conversation(stmt));
    out.push_back(std::move(conversation));
  }
  return out;
}

Result<std::int64_t> Conversations::count(ArchiveFilter filter) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_TRY(auto stmt, impl.prepare("SELECT count(*) FROM conversations WHERE ?1 = 2 OR archived = ?1"));
  stmt.bind(1, static_cast<std::int64_t>(filter == ArchiveFilter::All ? 2 : filter == ArchiveFilter::ArchivedOnly ? 1 : 0));
  HEARTH_TRY(bool row, stmt.step());
  (void)row;
  return stmt.int64(0);
}

Status Conversations::rename(ConversationId id, std::string_view title) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET title = ?2, updated_ms = ?3 WHERE id = ?1"));
    stmt.bind(1, id).bind(2, title).bind(3, impl.now());
    HEARTH_CHECK(stmt.run());
    return expect_one_row(impl, id);
  });
}

Status Conversations::set_system_prompt(ConversationId id, std::string_view system_prompt) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET system_prompt = ?2, updated_ms = ?3 WHERE id = ?1"));
    stmt.bind(1, id).bind(2, system_prompt).bind(3, impl.now());
    HEARTH_CHECK(stmt.run());
    return expect_one_row(impl, id);
  });
}

Status Conversations::set_model(ConversationId id, std::string_view model_file, std::string_view model_quant) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET model_file = ?2, model_quant = ?3, updated_ms = ?4 "
                                       "WHERE id = ?1"));
    stmt.bind(1, id).bind(2, model_file).bind(3, model_quant).bind(4, impl.now());
    HEARTH_CHECK(stmt.run());
    return expect_one_row(impl, id);
  });
}

Status Conversations::set_settings(ConversationId id, const ConversationSettings& settings) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET settings_json = ?2, updated_ms = ?3 WHERE id = ?1"));
    stmt.bind(1, id).bind(2, settings_to_json(settings)).bind(3, impl.now());
    HEARTH_CHECK(stmt.run());
    return expect_one_row(impl, id);
  });
}

Status Conversations::set_reasoning(ConversationId id, ReasoningSetting reasoning) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET reasoning = ?2, updated_ms = ?3 WHERE id = ?1"));
    stmt.bind(1, id).bind(2, to_string(reasoning)).bind(3, impl.now());
    HEARTH_CHECK(stmt.run());
    return expect_one_row(impl, id);
  });
}

// Pinning and archiving are not edits of the conversation: updated_ms stays.
Status Conversations::set_pinned(ConversationId id, Pinned pinned) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET pinned = ?2 WHERE id = ?1"));
    stmt.bind(1, id).bind(2, static_cast<std::int64_t>(pinned == Pinned::Yes));
    HEARTH_CHECK(stmt.run());
    return expect_one_row(impl, id);
  });
}

Status Conversations::set_archived(ConversationId id, Archived archived) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET archived = ?2 WHERE id = ?1"));
    stmt.bind(1, id).bind(2, static_cast<std::int64_t>(archived == Archived::Yes));
    HEARTH_CHECK(stmt.run());
    return expect_one_row(impl, id);
  });
}

Status Conversations::remove(ConversationId id) {
  return in_transaction(db_, Durability::Full, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    // The leaf reference points into the rows being deleted; clear it first so the
    // cascade does not have to update this row once per message.
    HEARTH_TRY(auto clear, impl.prepare("UPDATE conversations SET active_leaf_id = NULL WHERE id = ?1"));
    clear.bind(1, id);
    HEARTH_CHECK(clear.run());
    HEARTH_TRY(auto stmt, impl.prepare("DELETE FROM conversations WHERE id = ?1"));
    stmt.bind(1, id);
    HEARTH_CHECK(stmt.run());
    return expect_one_row(impl, id);
  });
}

}  // namespace hearth::storage
