#include "hearth/engine/chat/grounding.h"

#include <algorithm>

namespace hearth::chat {
namespace {

constexpr std::string_view kPreamble =
    "Answer the question using the numbered sources below when they help. Cite a source by its number in "
    "brackets, like [1], right after what it supports. If the sources do not answer it, say so.\n\n";

std::string source_block(std::size_t number, const GroundingPassage& passage) {
  std::string block = "[" + std::to_string(number) + "] " + passage.source + "\n" + passage.text;
  while (!block.empty() && (block.back() == '\n' || block.back() == ' ')) block.pop_back();
  return block + "\n\n";
}

}  // namespace

GroundedTurn ground_question(std::string_view question, std::span<const GroundingPassage> passages,
                             std::int64_t budget_tokens, const TokenCounter& count_tokens) {
  GroundedTurn turn;
  std::string sources;
  std::int64_t used = 0;
  for (std::size_t i = 0; i < passages.size(); ++i) {
    const std::string block = source_block(turn.included.size() + 1, passages[i]);
    const std::int64_t cost = count_tokens(block);
    if (used + cost > budget_tokens) continue;
    used += cost;
    sources += block;
    turn.included.push_back(i);
  }
  if (turn.included.empty()) {
    turn.text = std::string(question);
    return turn;
  }
  turn.passage_tokens = used;
  turn.text.reserve(kPreamble.size() + sources.size() + question.size() + 16);
  turn.text += kPreamble;
  turn.text += sources;
  turn.text += "Question: ";
  turn.text += question;
  return turn;
}

std::vector<int> cited_sources(std::string_view reply, int source_count) {
  std::vector<int> out;
  std::size_t i = 0;
  while ((i = reply.find('[', i)) != std::string_view::npos) {
    // A bracket of numbers separated by commas (and spaces): "[1]", "[2, 3]".
    std::size_t j = i + 1;
    std::vector<int> numbers;
    bool valid = true;
    while (j < reply.size() && reply[j] != ']') {
      if (reply[j] == ' ' || reply[j] == ',') {
        ++j;
        continue;
      }
      if (reply[j] < '0' || reply[j] > '9') {
        valid = false;
        break;
      }
      int n = 0;
      while (j < reply.size() && reply[j] >= '0' && reply[j] <= '9' && n < 100000) n = n * 10 + (reply[j++] - '0');
      numbers.push_back(n);
    }
    if (valid && j < reply.size() && !numbers.empty()) {
      for (int n : numbers) {
        if (n >= 1 && n <= source_count && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
      }
    }
    i = j > i ? j : i + 1;
  }
  return out;
}

}  // namespace hearth::chat
