// The chunker against passages worked out by hand from small documents.
#include "hearth/documents/chunker.h"

#include <gtest/gtest.h>

namespace hearth::documents {
namespace {

std::vector<Passage> chunk(const std::string& text, TextKind kind, ChunkerOptions options = {}) {
  return chunk_text({PageText{std::nullopt, text}}, kind, options);
}

TEST(Chunker, HeadingsStartPassagesAndNameThem) {
  const std::string text =
      "# Install\n"           // 1
      "\n"                    // 2
      "Download the file.\n"  // 3
      "\n"                    // 4
      "## Debian\n"           // 5
      "Run apt install.\n"    // 6
      "Then reboot.\n"        // 7
      "\n"                    // 8
      "# Use\n"               // 9
      "Open the app.\n";      // 10
  const auto passages = chunk(text, TextKind::Markdown);
  ASSERT_EQ(passages.size(), 3u);
  EXPECT_EQ(passages[0].heading, "Install");
  EXPECT_EQ(passages[0].text, "Download the file.");
  EXPECT_EQ(passages[0].line_first, 3);
  EXPECT_EQ(passages[0].line_last, 3);
  EXPECT_EQ(passages[1].heading, "Install > Debian");
  EXPECT_EQ(passages[1].text, "Run apt install.\nThen reboot.");
  EXPECT_EQ(passages[1].line_first, 6);
  EXPECT_EQ(passages[1].line_last, 7);
  EXPECT_EQ(passages[2].heading, "Use");
  EXPECT_EQ(passages[2].line_first, 10);
  EXPECT_FALSE(passages[2].page.has_value());
}

TEST(Chunker, FencedCodeStaysWholeWithItsBlankLines) {
  std::string text = "Intro paragraph.\n\n```cpp\nint a = 1;\n\nint b = 2;\n```\n\nAfter.\n";
  ChunkerOptions options;
  options.target_chars = 20;  // every block is a passage of its own
  options.overlap_chars = 0;
  const auto passages = chunk(text, TextKind::Markdown, options);
  ASSERT_EQ(passages.size(), 3u);
  EXPECT_EQ(passages[1].text, "```cpp\nint a = 1;\n\nint b = 2;\n```");
  EXPECT_EQ(passages[1].line_first, 3);
  EXPECT_EQ(passages[1].line_last, 7);
  EXPECT_EQ(passages[2].text, "After.");
  EXPECT_EQ(passages[2].line_first, 9);
}

TEST(Chunker, PassagesOverlapByWholeParagraphsWithinASection) {
  // Five 30-byte paragraphs; 70 bytes a passage; 40 bytes of overlap.
  std::string text;
  for (int i = 0; i < 5; ++i) text += "Paragraph " + std::to_string(i) + " has thirty bytes..\n\n";
  ChunkerOptions options;
  options.target_chars = 70;
  options.overlap_chars = 40;
  const auto passages = chunk(text, TextKind::Plain, options);
  ASSERT_EQ(passages.size(), 4u);
  EXPECT_EQ(passages[0].line_first, 1);
  EXPECT_EQ(passages[0].line_last, 3);  // paragraphs 0 and 1
  EXPECT_EQ(passages[1].line_first, 3);  // paragraph 1 again, then 2
  EXPECT_EQ(passages[1].line_last, 5);
  EXPECT_EQ(passages[2].line_first, 5);
  EXPECT_EQ(passages[2].line_last, 7);
  EXPECT_EQ(passages[3].line_first, 7);
  EXPECT_EQ(passages[3].line_last, 9);
  EXPECT_NE(passages[1].text.find("Paragraph 1"), std::string::npos);
}

TEST(Chunker, LongLinesAreCutAtSpacesAndNeverInsideACharacter) {
  // 300 copies of "Grüße " (7 bytes each): no newline at all.
  std::string line;
  for (int i = 0; i < 300; ++i) line += "Gr\xC3\xBC\xC3\x9F" "e ";
  ChunkerOptions options;
  options.target_chars = 100;
  options.max_chars = 100;
  options.overlap_chars = 0;
  const auto passages = chunk(line, TextKind::Plain, options);
  ASSERT_GE(passages.size(), 21u);
  std::string joined;
  for (const auto& p : passages) {
    EXPECT_LE(p.text.size(), 100u);
    EXPECT_EQ(p.line_first, 1);
    EXPECT_EQ(p.line_last, 1);
    // Every piece ends after a space: no word and no character is split.
    EXPECT_EQ(p.text.back(), ' ') << p.text;
    joined += p.text;
  }
  EXPECT_EQ(joined, line);
}

TEST(Chunker, CodeIsSplitAtBlankLinesAndHasNoHeadings) {
  const std::string text = "# not a heading in code\nint f() {\n  return 1;\n}\n\nint g() {\n  return 2;\n}\n";
  ChunkerOptions options;
  options.target_chars = 30;
  options.overlap_chars = 0;
  const auto passages = chunk(text, TextKind::Code, options);
  ASSERT_EQ(passages.size(), 2u);
  EXPECT_EQ(passages[0].heading, "");
  EXPECT_EQ(passages[0].line_first, 1);
  EXPECT_EQ(passages[0].line_last, 4);
  EXPECT_EQ(passages[1].text, "int g() {\n  return 2;\n}");
  EXPECT_EQ(passages[1].line_first, 6);
}

TEST(Chunker, PagesKeepTheirNumbersAndLineCountsRestartPerPage) {
  const auto passages =
      chunk_text({PageText{1, "# Title\nFirst page text."}, PageText{2, "Second page.\nMore."}}, TextKind::Markdown);
  ASSERT_EQ(passages.size(), 2u);
  EXPECT_EQ(passages[0].page, 1);
  EXPECT_EQ(passages[0].line_first, 2);
  EXPECT_EQ(passages[1].page, 2);
  EXPECT_EQ(passages[1].heading, "Title");  // the heading of page 1 still applies
  EXPECT_EQ(passages[1].line_first, 1);
  EXPECT_EQ(passages[1].line_last, 2);
  EXPECT_EQ(passages[1].token_estimate, (static_cast<std::int64_t>(passages[1].text.size()) + 3) / 4);
}

TEST(Chunker, EmptyAndBlankTextGivesNoPassages) {
  EXPECT_TRUE(chunk("", TextKind::Plain).empty());
  EXPECT_TRUE(chunk("\n\n  \n\t\n", TextKind::Markdown).empty());
  EXPECT_TRUE(chunk("# Only a heading\n", TextKind::Markdown).empty());
}

}  // namespace
}  // namespace hearth::documents
