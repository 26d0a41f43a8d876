// Internal: column lists and row-to-struct readers shared by the repositories, so
// each table is decoded in exactly one place.
#pragma once

#include "database_impl.h"
#include "hearth/storage/types.h"

#define HEARTH_CONVERSATION_COLUMNS                                                             \
  "id, title, created_ms, updated_ms, model_file, model_quant, system_prompt, settings_json, " \
  "pinned, archived, active_leaf_id, reasoning"

#define HEARTH_MESSAGE_COLUMNS                                                                          \
  "id, conversation_id, parent_id, role, content, created_ms, updated_ms, state, error_message, " \
  "token_count, ttft_ms, tokens_per_second, backend, reasoning, reasoning_ms"

namespace hearth::storage {

Result<Conversation> read_conversation(const Statement& stmt);
Result<Message> read_message(const Statement& stmt);

}  // namespace hearth::storage
