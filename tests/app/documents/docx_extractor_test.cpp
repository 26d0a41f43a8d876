// DOCX text on a hand-made document (tests/data/documents/make_docx.py) and on
// damaged input.
#include "documents/docx_extractor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace hearth::app {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(DocxExtractor, HeadingsParagraphsTabsBreaksAndTableCells) {
  const std::string bytes = read(HEARTH_TEST_DATA_DIR "/documents/notes.docx");
  ASSERT_FALSE(bytes.empty());
  auto text = extract_docx("notes.docx", bytes);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->kind, "docx");
  EXPECT_EQ(text->structure, documents::TextKind::Markdown);
  ASSERT_EQ(text->pages.size(), 1u);
  EXPECT_EQ(text->pages[0].text,
            "# Boiler manual\n\n## Reset\n\nHold the red button for ten seconds.\n\n"
            "Code:\tE42\nmeans low pressure.\n\nCell one\n\nCell two");
  // The chunker then knows the section.
  const auto passages = documents::chunk_text(text->pages, text->structure);
  ASSERT_FALSE(passages.empty());
  EXPECT_EQ(passages[0].heading, "Boiler manual > Reset");
}

TEST(DocxExtractor, DamagedFilesAreErrorsNamingTheFile) {
  const std::string bytes = read(HEARTH_TEST_DATA_DIR "/documents/notes.docx");
  const std::string pdf = read(HEARTH_TEST_DATA_DIR "/documents/two-pages.pdf");
  for (const std::string& bad : {std::string("not a zip"), bytes.substr(0, bytes.size() / 2), pdf, std::string()}) {
    auto text = extract_docx("broken.docx", bad);
    ASSERT_FALSE(text.ok());
    EXPECT_NE(text.error().message.find("broken.docx"), std::string::npos) << text.error().message;
  }
}

}  // namespace
}  // namespace hearth::app
