// Document formats the app reads for libraries beyond the built-in ones: PDF
// through Poppler's Qt 6 binding (page by page, so citations name the page) and
// DOCX (docx_extractor.h).
#pragma once

#include <hearth/documents/extract.h>

namespace hearth::app {

// Registers the app's extractors (".pdf", ".docx") next to the built-in ones.
void add_document_formats(documents::Extractors& extractors);

// Text of a PDF, one PageText per page. Encrypted or damaged files are errors
// naming the file; a PDF with no text layer (a scan) is an error saying so.
Result<documents::ExtractedText> extract_pdf(const std::filesystem::path& path, std::string_view bytes);

}  // namespace hearth::app
