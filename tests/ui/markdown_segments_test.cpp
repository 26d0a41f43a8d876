#include "viewmodels/markdown_segments.h"

#include <gtest/gtest.h>

namespace hearth::ui {
namespace {

using Kind = MarkdownSegment::Kind;

TEST(MarkdownSegments, ProseOnlyIsOneSegment) {
  const auto s = split_markdown(QStringLiteral("Hello *world*\n\n- a\n- b"));
  ASSERT_EQ(s.size(), 1);
  EXPECT_EQ(s[0].kind, Kind::Prose);
  EXPECT_EQ(s[0].text, QStringLiteral("Hello *world*\n\n- a\n- b"));
}

TEST(MarkdownSegments, FencedCodeBetweenProse) {
  const auto s = split_markdown(QStringLiteral("Try this:\n```python\nprint(1)\nprint(2)\n```\nDone."));
  ASSERT_EQ(s.size(), 3);
  EXPECT_EQ(s[0], (MarkdownSegment{Kind::Prose, QStringLiteral("Try this:"), QString(), true}));
  EXPECT_EQ(s[1], (MarkdownSegment{Kind::Code, QStringLiteral("print(1)\nprint(2)"), QStringLiteral("python"), true}));
  EXPECT_EQ(s[2], (MarkdownSegment{Kind::Prose, QStringLiteral("Done."), QString(), true}));
}

TEST(MarkdownSegments, UnclosedFenceWhileStreamingIsOpenCode) {
  const auto s = split_markdown(QStringLiteral("Code:\n~~~\nint x"));
  ASSERT_EQ(s.size(), 2);
  EXPECT_EQ(s[1].kind, Kind::Code);
  EXPECT_EQ(s[1].text, QStringLiteral("int x"));
  EXPECT_FALSE(s[1].closed);
}

TEST(MarkdownSegments, ShorterOrDifferentFenceDoesNotClose) {
  // A ```` block may contain ``` and ~~~ lines (CommonMark).
  const auto s = split_markdown(QStringLiteral("````\n```\n~~~\n````"));
  ASSERT_EQ(s.size(), 1);
  EXPECT_EQ(s[0].text, QStringLiteral("```\n~~~"));
  EXPECT_TRUE(s[0].closed);
}

TEST(MarkdownSegments, InlineBackticksAreProse) {
  const auto s = split_markdown(QStringLiteral("Use `x` and ``y`` here"));
  ASSERT_EQ(s.size(), 1);
  EXPECT_EQ(s[0].kind, Kind::Prose);
}

TEST(MarkdownSegments, IndentedUpToThreeSpacesIsAFence) {
  const auto s = split_markdown(QStringLiteral("   ```c\nx;\n   ```"));
  ASSERT_EQ(s.size(), 1);
  EXPECT_EQ(s[0].language, QStringLiteral("c"));
  EXPECT_EQ(s[0].text, QStringLiteral("x;"));
}

TEST(MarkdownSegments, EmptyTextHasNoSegments) {
  EXPECT_TRUE(split_markdown(QString()).isEmpty());
}

}  // namespace
}  // namespace hearth::ui
