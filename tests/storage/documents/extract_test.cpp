// Text extraction: hand-written HTML and byte sequences with known readings.
#include "hearth/documents/extract.h"

#include <gtest/gtest.h>

namespace hearth::documents {
namespace {

TEST(Extract, HtmlBecomesHeadingsParagraphsListsAndFencedCode) {
  const std::string html =
      "<!DOCTYPE html><html><head><title>T</title><style>p{color:red}</style></head><body>"
      "<h1>Fish &amp; Chips</h1><p>Fried\n   fish, <b>hot</b>.</p><!-- a comment <p>hidden</p> -->"
      "<script>var x = '<p>no</p>';</script><ul><li>one</li><li>two &#x2014; &#8364;5</li></ul>"
      "<pre>int a;\n  int b;</pre><p>End&nbsp;here</p></body></html>";
  EXPECT_EQ(html_to_text(html),
            "# Fish & Chips\n\nFried fish, hot.\n\n- one\n\n- two \xE2\x80\x94 \xE2\x82\xAC" "5\n\n```\nint a;\n  int b;\n```\n\nEnd here");
}

TEST(Extract, HostileHtmlEndsCleanly) {
  EXPECT_EQ(html_to_text("<p>cut <b"), "cut");
  EXPECT_EQ(html_to_text("<script>never closed"), "");
  EXPECT_EQ(html_to_text("a &#99999999; b &bogus; c &#xD800; d"), "a &#99999999; b &bogus; c \xEF\xBF\xBD d");
}

TEST(Extract, Utf8CheckNamesTheFileAndOffset) {
  EXPECT_TRUE(check_utf8("plain \xC3\xA9t\xC3\xA9", "a.txt").ok());
  for (const std::string& bad : {std::string("ab\xC3"), std::string("ab\xC0\x80"), std::string("ab\xED\xA0\x80"),
                                std::string("ab\xF4\x90\x80\x80"), std::string("ab\xFF")}) {
    auto status = check_utf8(bad, "notes.txt");
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.error().code, ErrorCode::InvalidFormat);
    EXPECT_NE(status.error().message.find("notes.txt"), std::string::npos);
    EXPECT_NE(status.error().message.find("offset 2"), std::string::npos) << status.error().message;
  }
}

TEST(Extract, ByExtensionWithClearErrorsForWhatItCannotRead) {
  const Extractors e = Extractors::builtin();
  EXPECT_TRUE(e.supports("notes/README.MD"));
  EXPECT_TRUE(e.supports("src/main.cpp"));
  EXPECT_FALSE(e.supports("photo.jpg"));
  auto md = e.extract("README.md", "\xEF\xBB\xBF# Title\nText");
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(md->kind, "markdown");
  EXPECT_EQ(md->structure, TextKind::Markdown);
  ASSERT_EQ(md->pages.size(), 1u);
  EXPECT_EQ(md->pages[0].text, "# Title\nText");  // the byte-order mark is gone
  auto binary = e.extract("data.txt", std::string("ab\0cd", 5));
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.error().message.find("NUL"), std::string::npos);
  auto jpg = e.extract("photo.jpg", "x");
  ASSERT_FALSE(jpg.ok());
  EXPECT_EQ(jpg.error().code, ErrorCode::Unsupported);
  EXPECT_NE(jpg.error().message.find(".jpg"), std::string::npos);
}

}  // namespace
}  // namespace hearth::documents
