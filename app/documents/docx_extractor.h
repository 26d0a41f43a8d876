// DOCX text for document libraries: the archive (libzip) holds the body as
// word/document.xml; paragraphs become blocks, paragraphs styled as headings
// become Markdown headings (so passages know the section they are in), tabs and
// line breaks are kept, and tables give one block per row.
#pragma once

#include <hearth/documents/extract.h>

namespace hearth::app {

// Damaged archives, a missing body and malformed XML are errors naming the
// file; the body is read up to a size cap (a zip bomb stops there).
Result<documents::ExtractedText> extract_docx(const std::filesystem::path& path, std::string_view bytes);

}  // namespace hearth::app
