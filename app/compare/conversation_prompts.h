// The user's own conversations as a comparison's prompts: the questions they
// asked, along the branch they last looked at, so levels are judged on what
// this user really sends.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "compare/prompt_set.h"
#include "store/conversation_store.h"

namespace hearth::compare {

struct ConversationSource {
  std::string title;
  ui::MessageTree messages;
};

struct ConversationPrompts {
  PromptSet prompts;       // one prompt per user message; the category is the conversation's title
  size_t skipped_long = 0;  // user messages longer than the limit, left out
};

// At most `max_prompts` prompts in all, in conversation order and then message
// order. Messages over `max_chars` characters (pasted documents, logs) are
// left out and counted: a comparison answers each prompt with every level,
// and one long paste would dwarf the rest.
ConversationPrompts prompts_from_conversations(const std::vector<ConversationSource>& conversations,
                                               size_t max_prompts, size_t max_chars);

}  // namespace hearth::compare
