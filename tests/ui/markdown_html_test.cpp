#include "viewmodels/markdown_html.h"

#include <gtest/gtest.h>

namespace hearth::ui {
namespace {

std::string html(const char* md) { return markdown_to_html(QString::fromUtf8(md)).toStdString(); }

TEST(MarkdownHtml, ParagraphsJoinSoftBreaksAndEscape) {
  EXPECT_EQ(html("a <b>\nc & d\n\nnext"), "<p>a &lt;b&gt; c &amp; d</p><p>next</p>");
}

TEST(MarkdownHtml, InlineSpans) {
  EXPECT_EQ(html("**bold** and *it* and `x*y*` and ~~no~~ [site](https://a.b)"),
            "<p><b>bold</b> and <i>it</i> and <code>x*y*</code> and <s>no</s> "
            "<a href=\"https://a.b\">site</a></p>");
}

TEST(MarkdownHtml, ListsAndHeadings) {
  EXPECT_EQ(html("# Title\n- one\n- two\n\n3. three\n4. four"),
            "<h1>Title</h1><ul><li>one</li><li>two</li></ul><ol start=\"3\"><li>three</li><li>four</li></ol>");
}

TEST(MarkdownHtml, Table) {
  EXPECT_EQ(html("| a | b |\n|---|:-:|\n| 1 | 2 |"),
            "<table border=\"1\" cellspacing=\"0\" cellpadding=\"6\"><tr><th>a</th><th>b</th></tr>"
            "<tr><td>1</td><td>2</td></tr></table>");
}

TEST(MarkdownHtml, UnclosedSpansStayLiteral) {
  EXPECT_EQ(html("2 * 3 and `open"), "<p>2 * 3 and `open</p>");
}

}  // namespace
}  // namespace hearth::ui
