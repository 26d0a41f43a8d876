// Stop strings split across streamed pieces, and end-of-generation tokens.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "hearth/engine/chat/stop.h"

namespace hearth::chat {
namespace {

// Feeds pieces one by one; returns everything shown and whether it stopped.
std::pair<std::string, bool> stream(StopMatcher& m, const std::vector<std::string>& pieces) {
  std::string shown;
  for (const auto& p : pieces) {
    StopScan scan = m.push(p);
    shown += scan.text;
    if (scan.stopped) return {shown, true};
  }
  shown += m.flush();
  return {shown, false};
}

TEST(StopMatcher, StopInsideOnePiece) {
  StopMatcher m({"###"});
  auto [shown, stopped] = stream(m, {"Hello ### world"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "Hello ");
}

TEST(StopMatcher, StopSpanningPiecesIsNeverShown) {
  StopMatcher m({"<|user|>"});
  std::string shown;
  StopScan a = m.push("Sure. <|");
  EXPECT_EQ(a.text, "Sure. ");  // "<|" could start the stop string: held back
  EXPECT_FALSE(a.stopped);
  StopScan b = m.push("us");
  EXPECT_EQ(b.text, "");
  StopScan c = m.push("er|> next");
  EXPECT_TRUE(c.stopped);
  EXPECT_EQ(c.text, "");
  EXPECT_EQ(c.matched, "<|user|>");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.push("more").text, "");  // nothing after a stop
}

TEST(StopMatcher, HeldTextIsReleasedWhenDisproved) {
  StopMatcher m({"</answer>"});
  StopScan a = m.push("x </ans");
  EXPECT_EQ(a.text, "x ");
  StopScan b = m.push("wer is");
  EXPECT_EQ(b.text, "</answer is");  // "</answe" + "r is": not the stop string after all
  EXPECT_FALSE(b.stopped);
}

TEST(StopMatcher, FlushReleasesATrailingPrefix) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("the end ST").text, "the end ");
  EXPECT_EQ(m.flush(), "ST");
}

TEST(StopMatcher, EarliestOfSeveralStopsWins) {
  StopMatcher m({"bb", "abc", ""});  // the empty string is ignored
  auto [shown, stopped] = stream(m, {"xxa", "bcbb"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "xx");  // "abc" starts at 2, before "bb" at 5
}

TEST(StopMatcher, OverlappingPrefixesAreHandled) {
  // "aab" must be found in "aaab" even though the first "aa" attempt fails.
  StopMatcher m({"aab"});
  auto [shown, stopped] = stream(m, {"a", "a", "a", "b", "c"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "a");
}

TEST(StopMatcher, MultiByteStopSplitInsideACharacter) {
  StopMatcher m({"終わり"});
  const std::string stop = "終わり";
  auto [shown, stopped] = stream(m, {"これで" + stop.substr(0, 2), stop.substr(2, 5), stop.substr(7) + "!"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(shown, "これで");
}

TEST(StopMatcher, RandomSplitsAgreeWithWholeTextSearch) {
  // Reference: find the earliest stop in the whole text at once.
  const std::vector<std::string> stops = {"<|im_end|>", "\n\nUser:", "END"};
  std::mt19937 rng(1234);
  const std::string alphabet = "ab <|im_end>\nUser:END";
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    const int len = static_cast<int>(rng() % 60);
    for (int i = 0; i < len; ++i) text.push_back(alphabet[rng() % alphabet.size()]);
    size_t cut = std::string::npos;
    for (const auto& s : stops) cut = std::min(cut, text.find(s));
    const std::string expected = cut == std::string::npos ? text : text.substr(0, cut);

    std::vector<std::string> pieces;
    for (size_t i = 0; i < text.size();) {
      const size_t n = 1 + rng() % 5;
      pieces.push_back(text.substr(i, n));
      i += n;
    }
    StopMatcher m(stops);
    auto [shown, stopped] = stream(m, pieces);
    EXPECT_EQ(stopped, cut != std::string::npos) << text;
    EXPECT_EQ(shown, expected) << text;
  }
}

TEST(StopMatcher, ResetStartsOver) {
  StopMatcher m({"x"});
  EXPECT_TRUE(m.push("x").stopped);
  m.reset();
  EXPECT_EQ(m.push("ab").text, "ab");
}

TEST(EndOfGeneration, CollectsMetadataAndKnownTurnEnds) {
  const std::vector<std::string> vocab = {"<unk>", "<s>", "</s>", "hello", "<|im_end|>", "<|eot_id|>",
                                          "<end_of_turn>", "<|end|>", "world", "<|im_start|>"};
  auto ids = end_of_generation_tokens(vocab, 2, std::nullopt);
  EXPECT_EQ(ids, (std::vector<int32_t>{2, 4, 5, 6, 7}));
  // EOS/EOT from metadata count even when their text is unusual; bad ids are ignored.
  auto ids2 = end_of_generation_tokens({"a", "b", "c"}, 1, 99);
  EXPECT_EQ(ids2, (std::vector<int32_t>{1}));
  auto ids3 = end_of_generation_tokens({"a", "b", "c"}, std::nullopt, 0);
  EXPECT_EQ(ids3, (std::vector<int32_t>{0}));
}

}  // namespace
}  // namespace hearth::chat
