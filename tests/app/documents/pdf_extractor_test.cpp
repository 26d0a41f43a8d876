// PDF text through Poppler's Qt 6 binding: a hand-made two-page PDF (its texts are
// written in tests/data/documents/make_pdf.py), and damaged input.
#include "documents/pdf_extractor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace hearth::app {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(PdfExtractor, EachPageKeepsItsNumberAndText) {
  const std::string bytes = read(HEARTH_TEST_DATA_DIR "/documents/two-pages.pdf");
  ASSERT_FALSE(bytes.empty());
  auto text = extract_pdf("two-pages.pdf", bytes);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->kind, "pdf");
  ASSERT_EQ(text->pages.size(), 2u);
  EXPECT_EQ(text->pages[0].page, 1);
  EXPECT_NE(text->pages[0].text.find("Hearth reads page one."), std::string::npos) << text->pages[0].text;
  EXPECT_EQ(text->pages[1].page, 2);
  EXPECT_NE(text->pages[1].text.find("The second page mentions a lighthouse."), std::string::npos);
  // Through the extractor table, by extension.
  documents::Extractors extractors = documents::Extractors::builtin();
  EXPECT_FALSE(extractors.supports("x.pdf"));
  add_document_formats(extractors);
  EXPECT_TRUE(extractors.supports("manual.PDF"));
  EXPECT_TRUE(extractors.extract("manual.pdf", bytes).ok());
}

TEST(PdfExtractor, DamagedFilesAreErrorsNamingTheFile) {
  const std::string bytes = read(HEARTH_TEST_DATA_DIR "/documents/two-pages.pdf");
  for (const std::string& bad : {std::string("not a pdf at all"), bytes.substr(0, 40), std::string()}) {
    auto text = extract_pdf("broken.pdf", bad);
    ASSERT_FALSE(text.ok());
    EXPECT_NE(text.error().message.find("broken.pdf"), std::string::npos) << text.error().message;
  }
}

}  // namespace
}  // namespace hearth::app
