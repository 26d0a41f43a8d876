#include "hearth/storage/messages.h"

#include "database_impl.h"
#include "row_readers.h"

namespace hearth::storage {
namespace {

Result<Message> load(DatabaseImpl& impl, MessageId id) {
  HEARTH_TRY(auto stmt, impl.prepare("SELECT " HEARTH_MESSAGE_COLUMNS " FROM messages WHERE id = ?1"));
  stmt.bind(1, id);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::NotFound, describe("message", id) + " does not exist");
  return read_message(stmt);
}

Status require_conversation(DatabaseImpl& impl, ConversationId id) {
  HEARTH_TRY(auto stmt, impl.prepare("SELECT 1 FROM conversations WHERE id = ?1"));
  stmt.bind(1, id);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::NotFound, describe("conversation", id) + " does not exist");
  return {};
}

Result<MessageId> active_leaf(DatabaseImpl& impl, ConversationId id) {
  HEARTH_TRY(auto stmt, impl.prepare("SELECT active_leaf_id FROM conversations WHERE id = ?1"));
  stmt.bind(1, id);
  HEARTH_TRY(bool row, stmt.step());
  if (!row) return make_error(ErrorCode::NotFound, describe("conversation", id) + " does not exist");
  return stmt.id<MessageId>(0);
}

enum class Touch { No, Yes };

// Moves the active leaf; Touch::Yes also marks the conversation as updated (new or
// removed content), which reorders the conversation list.
Status set_active_leaf(DatabaseImpl& impl, ConversationId conversation, MessageId leaf, Touch touch) {
  if (touch == Touch::Yes) {
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET active_leaf_id = ?2, updated_ms = ?3 WHERE id = ?1"));
    stmt.bind(1, conversation).bind(2, leaf).bind(3, impl.now());
    return stmt.run();
  }
  HEARTH_TRY(auto stmt, impl.prepare("UPDATE conversations SET active_leaf_id = ?2 WHERE id = ?1"));
  stmt.bind(1, conversation).bind(2, leaf);
  return stmt.run();
}

Result<MessageId> newest_child(DatabaseImpl& impl, MessageId parent) {
  HEARTH_TRY(auto stmt, impl.prepare("SELECT max(id) FROM messages WHERE parent_id = ?1"));
  stmt.bind(1, parent);
  HEARTH_TRY(bool row, stmt.step());
  (void)row;  // an aggregate always yields one row
  return stmt.id<MessageId>(0);
}

Result<MessageId> newest_leaf_under(DatabaseImpl& impl, MessageId id) {
  MessageId leaf = id;
  while (true) {
    HEARTH_TRY(MessageId child, newest_child(impl, leaf));
    if (!child.valid()) return leaf;
    leaf = child;
  }
}

Result<std::vector<MessageId>> ids(Statement& stmt) {
  std::vector<MessageId> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    out.push_back(stmt.id<MessageId>(0));
  }
}

Result<std::vector<Message>> messages_from(Statement& stmt) {
  std::vector<Message> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    HEARTH_TRY(auto message, read_message(stmt));
    out.push_back(std::move(message));
  }
}

struct Insert {
  ConversationId conversation;
  MessageId parent;
  Role role;
  std::string_view content;
  MessageState state;
  std::int64_t token_count;
  std::string_view reasoning;
  std::optional<double> reasoning_ms;
};

// Validates the parent, inserts, and makes the new message the active leaf.
Result<MessageId> insert(DatabaseImpl& impl, const Insert& m) {
  HEARTH_CHECK(require_conversation(impl, m.conversation));
  if (m.parent.valid()) {
    HEARTH_TRY(Message parent, load(impl, m.parent));
    if (parent.conversation != m.conversation) {
      return make_error(ErrorCode::InvalidArgument, describe("message", m.parent) + " belongs to " +
                                                        describe("conversation", parent.conversation) + ", not " +
                                                        describe("conversation", m.conversation));
    }
  }
  HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO messages (conversation_id, parent_id, role, content, created_ms, "
                                     "updated_ms, state, token_count, reasoning, reasoning_ms) "
                                     "VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, ?8, ?9)"));
  stmt.bind(1, m.conversation).bind(2, m.parent).bind(3, to_string(m.role)).bind(4, m.content);
  stmt.bind(5, impl.now()).bind(6, to_string(m.state)).bind(7, m.token_count).bind(8, m.reasoning);
  stmt.bind(9, m.reasoning_ms);
  HEARTH_CHECK(stmt.run());
  const MessageId id{impl.last_insert_id()};
  HEARTH_CHECK(set_active_leaf(impl, m.conversation, id, Touch::Yes));
  return id;
}

// Explains why an update of a streaming reply matched no row.
Error not_streaming(DatabaseImpl& impl, MessageId id) {
  auto message = load(impl, id);
  if (!message.ok()) return message.take_error();
  return make_error(ErrorCode::InvalidArgument,
                    describe("message", id) + " is " + to_string(message->state) + ", not streaming");
}

}  // namespace

Result<MessageId> Messages::append(ConversationId conversation, MessageId parent, const NewMessage& message) {
  return in_transaction(db_, Durability::Full, [&]() -> Result<MessageId> {
    return insert(db_.impl(), Insert{conversation, parent, message.role, message.content, MessageState::Complete,
                                     message.token_count, message.reasoning, message.reasoning_ms});
  });
}

Result<MessageId> Messages::edit(MessageId original, std::string_view content) {
  return in_transaction(db_, Durability::Full, [&]() -> Result<MessageId> {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(Message source, load(impl, original));
    return insert(impl, Insert{source.conversation, source.parent, source.role, content, MessageState::Complete, 0,
                               {}, std::nullopt});
  });
}

Result<Message> Messages::get(MessageId id) { return load(db_.impl(), id); }

Result<std::vector<Message>> Messages::active_path(ConversationId conversation) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_CHECK(require_conversation(impl, conversation));
  HEARTH_TRY(auto stmt, impl.prepare(
                            "WITH RECURSIVE path(id, depth) AS ("
                            "  SELECT active_leaf_id, 0 FROM conversations"
                            "    WHERE id = ?1 AND active_leaf_id IS NOT NULL"
                            "  UNION ALL"
                            "  SELECT m.parent_id, path.depth + 1 FROM messages m JOIN path ON m.id = path.id"
                            "    WHERE m.parent_id IS NOT NULL)"
                            "SELECT " HEARTH_MESSAGE_COLUMNS " FROM messages JOIN path USING (id)"
                            " ORDER BY path.depth DESC"));
  stmt.bind(1, conversation);
  return messages_from(stmt);
}

Result<std::vector<Message>> Messages::all(ConversationId conversation) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_CHECK(require_conversation(impl, conversation));
  HEARTH_TRY(auto stmt, impl.prepare("SELECT " HEARTH_MESSAGE_COLUMNS
                                     " FROM messages WHERE conversation_id = ?1 ORDER BY id"));
  stmt.bind(1, conversation);
  return messages_from(stmt);
}

Result<std::vector<MessageId>> Messages::roots(ConversationId conversation) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_CHECK(require_conversation(impl, conversation));
  HEARTH_TRY(auto stmt, impl.prepare("SELECT id FROM messages WHERE conversation_id = ?1 AND parent_id IS NULL "
                                     "ORDER BY id"));
  stmt.bind(1, conversation);
  return ids(stmt);
}

Result<std::vector<MessageId>> Messages::children(MessageId parent) {
  DatabaseImpl& impl = db_.impl();
  HEARTH_CHECK(load(impl, parent));
  HEARTH_TRY(auto stmt, impl.prepare("SELECT id FROM messages WHERE parent_id = ?1 ORDER BY id"));
  stmt.bind(1, parent);
  return ids(stmt);
}

Result<std::vector<MessageId>> Messages::siblings(MessageId id) {
  HEARTH_TRY(Message message, load(db_.impl(), id));
  return message.parent.valid() ? children(message.parent) : roots(message.conversation);
}

Status Messages::switch_to(MessageId id) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(Message message, load(impl, id));
    HEARTH_TRY(MessageId leaf, newest_leaf_under(impl, id));
    return set_active_leaf(impl, message.conversation, leaf, Touch::No);
  });
}

Status Messages::delete_branch(MessageId id) {
  return in_transaction(db_, Durability::Full, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(Message message, load(impl, id));
    HEARTH_TRY(MessageId leaf, active_leaf(impl, message.conversation));

    // Is `id` the active leaf or one of its ancestors?
    bool active_inside = false;
    if (leaf.valid()) {
      HEARTH_TRY(auto stmt, impl.prepare("WITH RECURSIVE up(id) AS (SELECT ?1 UNION ALL "
                                         "  SELECT m.parent_id FROM messages m JOIN up ON m.id = up.id "
                                         "  WHERE m.parent_id IS NOT NULL) "
                                         "SELECT 1 FROM up WHERE id = ?2"));
      stmt.bind(1, leaf).bind(2, id);
      HEARTH_TRY(active_inside, stmt.step());
    }

    MessageId new_leaf = leaf;
    if (active_inside) {
      HEARTH_TRY(auto stmt, impl.prepare("SELECT max(id) FROM messages WHERE conversation_id = ?1 AND id <> ?2 AND "
                                         "parent_id IS ?3"));
      stmt.bind(1, message.conversation).bind(2, id).bind(3, message.parent);
      HEARTH_TRY(bool row, stmt.step());
      (void)row;
      const auto sibling = stmt.id<MessageId>(0);
      if (sibling.valid()) {
        HEARTH_TRY(new_leaf, newest_leaf_under(impl, sibling));
      } else {
        new_leaf = message.parent;
      }
    }
    HEARTH_CHECK(set_active_leaf(impl, message.conversation, new_leaf, Touch::Yes));

    HEARTH_TRY(auto del, impl.prepare("DELETE FROM messages WHERE id IN ("
                                      "  WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL "
                                      "    SELECT m.id FROM messages m JOIN sub ON m.parent_id = sub.id) "
                                      "  SELECT id FROM sub)"));
    del.bind(1, id);
    return del.run();
  });
}

Result<MessageId> Messages::begin_reply(ConversationId conversation, MessageId parent, Role role) {
  return in_transaction(db_, Durability::Normal, [&]() -> Result<MessageId> {
    return insert(db_.impl(), Insert{conversation, parent, role, "", MessageState::Streaming, 0, {}, std::nullopt});
  });
}

Status Messages::update_reply(MessageId id, std::string_view content, std::int64_t token_count) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE messages SET content = ?2, token_count = ?3, updated_ms = ?4 "
                                       "WHERE id = ?1 AND state = 'streaming'"));
    stmt.bind(1, id).bind(2, content).bind(3, token_count).bind(4, impl.now());
    HEARTH_CHECK(stmt.run());
    if (impl.changes() == 0) return not_streaming(impl, id);
    return {};
  });
}

Status Messages::update_reply(MessageId id, const ReplyProgress& progress) {
  return in_transaction(db_, Durability::Normal, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE messages SET content = ?2, token_count = ?3, reasoning = ?4, "
                                       "reasoning_ms = ?5, updated_ms = ?6 WHERE id = ?1 AND state = 'streaming'"));
    stmt.bind(1, id).bind(2, progress.content).bind(3, progress.token_count).bind(4, progress.reasoning);
    stmt.bind(5, progress.reasoning_ms).bind(6, impl.now());
    HEARTH_CHECK(stmt.run());
    if (impl.changes() == 0) return not_streaming(impl, id);
    return {};
  });
}

Status Messages::finish_reply(MessageId id, const ReplyEnd& end) {
  if (end.state == MessageState::Streaming) {
    return make_error(ErrorCode::InvalidArgument, "finish_reply for " + describe("message", id) +
                                                      " needs a final state (complete, interrupted or error)");
  }
  return in_transaction(db_, Durability::Full, [&]() -> Status {
    DatabaseImpl& impl = db_.impl();
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE messages SET content = ?2, state = ?3, token_count = ?4, "
                                       "ttft_ms = ?5, tokens_per_second = ?6, backend = ?7, error_message = ?8, "
                                       "updated_ms = ?9, reasoning = ?10, reasoning_ms = ?11 "
                                       "WHERE id = ?1 AND state = 'streaming'"));
    stmt.bind(1, id).bind(2, end.content).bind(3, to_string(end.state)).bind(4, end.token_count);
    stmt.bind(5, end.stats.ttft_ms).bind(6, end.stats.tokens_per_second).bind(7, end.stats.backend);
    stmt.bind(8, end.error_message).bind(9, impl.now()).bind(10, end.reasoning).bind(11, end.reasoning_ms);
    HEARTH_CHECK(stmt.run());
    if (impl.changes() == 0) return not_streaming(impl, id);
    HEARTH_TRY(auto touch, impl.prepare("UPDATE conversations SET updated_ms = ?2 "
                                        "WHERE id = (SELECT conversation_id FROM messages WHERE id = ?1)"));
    touch.bind(1, id).bind(2, impl.now());
    return touch.run();
  });
}

}  // namespace hearth::storage
