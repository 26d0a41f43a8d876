#include "documents/pdf_extractor.h"

#include "documents/docx_extractor.h"

#include <poppler-qt6.h>

#include <QByteArray>
#include <QRectF>

namespace hearth::app {

// A document of more pages than this is read up to it: a library is for reading
// passages, and a 10,000-page PDF is more likely a mistake than a book.
constexpr int kMaxPages = 5000;

Result<documents::ExtractedText> extract_pdf(const std::filesystem::path& path, std::string_view bytes) {
  const QByteArray data(bytes.data(), static_cast<qsizetype>(bytes.size()));
  std::unique_ptr<Poppler::Document> doc = Poppler::Document::loadFromData(data);
  if (!doc) return make_error(ErrorCode::InvalidFormat, "'" + path.string() + "' is not a readable PDF");
  if (doc->isLocked()) {
    return make_error(ErrorCode::Unsupported, "'" + path.string() + "' is a password-protected PDF");
  }
  documents::ExtractedText out;
  out.kind = "pdf";
  out.structure = documents::TextKind::Plain;
  const int pages = std::min(doc->numPages(), kMaxPages);
  bool any_text = false;
  for (int i = 0; i < pages; ++i) {
    std::unique_ptr<Poppler::Page> page = doc->page(i);
    if (!page) continue;
    const std::string text = page->text(QRectF()).toStdString();
    if (text.find_first_not_of(" \t\r\n\f") != std::string::npos) any_text = true;
    out.pages.push_back(documents::PageText{i + 1, text});
  }
  if (!any_text) {
    return make_error(ErrorCode::Unsupported,
                      "'" + path.string() + "' has no text layer (a scanned PDF); Hearth does not read images");
  }
  return out;
}

void add_document_formats(documents::Extractors& extractors) {
  extractors.add(".pdf", extract_pdf);
  extractors.add(".docx", extract_docx);
}

}  // namespace hearth::app
