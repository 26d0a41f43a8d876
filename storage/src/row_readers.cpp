#include "row_readers.h"

namespace hearth::storage {

Result<Conversation> read_conversation(const Statement& stmt) {
  Conversation c;
  c.id = stmt.id<ConversationId>(0);
  c.title = stmt.text(1);
  c.created_ms = stmt.int64(2);
  c.updated_ms = stmt.int64(3);
  c.model_file = stmt.text(4);
  c.model_quant = stmt.text(5);
  c.system_prompt = stmt.text(6);
  auto settings = settings_from_json(stmt.text(7));
  if (!settings.ok()) {
    return make_error(ErrorCode::Corrupt, describe("conversation", c.id) + ": " + settings.error().message);
  }
  c.settings = std::move(settings).value();
  c.pinned = stmt.int64(8) != 0 ? Pinned::Yes : Pinned::No;
  c.archived = stmt.int64(9) != 0 ? Archived::Yes : Archived::No;
  c.active_leaf = stmt.id<MessageId>(10);
  auto reasoning = parse_reasoning_setting(stmt.text(11));
  if (!reasoning.ok()) {
    return make_error(ErrorCode::Corrupt, describe("conversation", c.id) + ": " + reasoning.error().message);
  }
  c.reasoning = *reasoning;
  return c;
}

Result<Message> read_message(const Statement& stmt) {
  Message m;
  m.id = stmt.id<MessageId>(0);
  m.conversation = stmt.id<ConversationId>(1);
  m.parent = stmt.id<MessageId>(2);
  auto role = parse_role(stmt.text(3));
  if (!role.ok()) return make_error(ErrorCode::Corrupt, describe("message", m.id) + ": " + role.error().message);
  m.role = *role;
  m.content = stmt.text(4);
  m.created_ms = stmt.int64(5);
  m.updated_ms = stmt.int64(6);
  auto state = parse_message_state(stmt.text(7));
  if (!state.ok()) return make_error(ErrorCode::Corrupt, describe("message", m.id) + ": " + state.error().message);
  m.state = *state;
  m.error_message = stmt.text(8);
  m.token_count = stmt.int64(9);
  m.stats.ttft_ms = stmt.optional_real(10);
  m.stats.tokens_per_second = stmt.optional_real(11);
  m.stats.backend = stmt.text(12);
  m.reasoning = stmt.text(13);
  m.reasoning_ms = stmt.optional_real(14);
  return m;
}

}  // namespace hearth::storage
