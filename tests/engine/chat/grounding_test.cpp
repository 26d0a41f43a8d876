// The grounded user turn and citation parsing, against texts written by hand.
#include "hearth/engine/chat/grounding.h"

#include <gtest/gtest.h>

namespace hearth::chat {
namespace {

// One token per four bytes, rounded up: a stand-in for a tokenizer whose counts
// the expectations below can be worked out from.
std::int64_t quarter_bytes(std::string_view text) { return static_cast<std::int64_t>((text.size() + 3) / 4); }

TEST(Grounding, NumbersThePassagesThatFitAndKeepsTheQuestionLast) {
  const std::vector<GroundingPassage> passages{
      {"a.md, lines 1-2", "Apples are red."},              // block: 37 bytes -> 10 tokens
      {"b.md, lines 5-9", std::string(200, 'x')},          // 222 bytes -> 56 tokens: too big
      {"c.pdf, page 3", "Pears are green.\n"}};            // as [2]: 36 bytes -> 9 tokens
  const GroundedTurn turn = ground_question("What colour are pears?", passages, 20, quarter_bytes);
  EXPECT_EQ(turn.included, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(turn.passage_tokens, 19);
  EXPECT_EQ(turn.text,
            "Answer the question using the numbered sources below when they help. Cite a source by its number in "
            "brackets, like [1], right after what it supports. If the sources do not answer it, say so.\n\n"
            "[1] a.md, lines 1-2\nApples are red.\n\n"
            "[2] c.pdf, page 3\nPears are green.\n\n"
            "Question: What colour are pears?");
}

TEST(Grounding, WithoutPassagesTheTurnIsTheQuestion) {
  EXPECT_EQ(ground_question("Hi?", {}, 100, quarter_bytes).text, "Hi?");
  const std::vector<GroundingPassage> big{{"x", std::string(1000, 'y')}};
  const GroundedTurn turn = ground_question("Hi?", big, 10, quarter_bytes);
  EXPECT_EQ(turn.text, "Hi?");
  EXPECT_TRUE(turn.included.empty());
  EXPECT_EQ(turn.passage_tokens, 0);
}

TEST(Grounding, CitationsAreReadInOrderOnceAndWithinRange) {
  EXPECT_EQ(cited_sources("Red [2]. Green [1, 3] and [2][4]. [7] [0] [a] [ ] [12", 4),
            (std::vector<int>{2, 1, 3, 4}));
  EXPECT_TRUE(cited_sources("no citations here", 3).empty());
  EXPECT_TRUE(cited_sources("[99999999999999999999]", 3).empty());
  EXPECT_EQ(cited_sources("[[1]]", 1), (std::vector<int>{1}));
}

}  // namespace
}  // namespace hearth::chat
