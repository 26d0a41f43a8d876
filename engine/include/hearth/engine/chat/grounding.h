// Retrieved passages in the user's turn: numbered sources a reply can cite.
// The app (documents attached to a conversation), hearth-cli and the server build
// the grounded turn with this one function, so every front end shows the model the
// same layout and reads citations back the same way.
//
// The passages are untrusted document text. They go into the user message's
// content, which the chat layer never parses for control tokens, so a document
// that spells "<|im_end|>" stays text.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::chat {

struct GroundingPassage {
  std::string source;  // where it is from: "install.md, lines 10-24" or "manual.pdf, page 3"
  std::string text;
};

struct GroundedTurn {
  std::string text;                   // the user turn the model sees
  std::vector<std::size_t> included;  // indexes into the passages given, in order; numbered 1, 2, ...
  std::int64_t passage_tokens = 0;    // what the sources cost within the budget
};

// Counts the tokens of a text with the model's tokenizer.
using TokenCounter = std::function<std::int64_t(std::string_view text)>;

// The question with as many passages (best first) as fit `budget_tokens`; a
// passage that does not fit is skipped and a smaller later one may still go in.
// With no passage included the turn is the question alone.
GroundedTurn ground_question(std::string_view question, std::span<const GroundingPassage> passages,
                             std::int64_t budget_tokens, const TokenCounter& count_tokens);

// The source numbers a reply cites as "[2]", "[1, 3]" or "[1][2]", each once, in
// order of first citation, limited to 1..source_count.
std::vector<int> cited_sources(std::string_view reply, int source_count);

}  // namespace hearth::chat
