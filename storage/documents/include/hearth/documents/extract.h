// Text out of the files a library holds. Plain text, Markdown, source code and
// HTML are read here; other formats (PDF, DOCX) plug in as Extractor functions
// registered by file extension, so this library needs no Qt or PDF library.
// Every file is untrusted: invalid UTF-8 is an error naming the file and byte
// offset, sizes are capped, and nothing is executed or fetched.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/documents/chunker.h"

namespace hearth::documents {

struct ExtractedText {
  std::string kind;  // "text", "markdown", "code", "html", "pdf", "docx"
  TextKind structure = TextKind::Plain;
  std::vector<PageText> pages;
};

// Reads a file's bytes (already loaded, at most the indexer's size cap) into text.
using Extractor = std::function<Result<ExtractedText>(const std::filesystem::path& path, std::string_view bytes)>;

class Extractors {
 public:
  // The formats this library reads itself: .txt .text .log .md .markdown .rst,
  // common source and config files, .html .htm.
  static Extractors builtin();

  // Adds or replaces the extractor for a lower-case extension with its dot (".pdf").
  void add(std::string extension, Extractor extractor);
  bool supports(const std::filesystem::path& path) const;
  Result<ExtractedText> extract(const std::filesystem::path& path, std::string_view bytes) const;

 private:
  std::map<std::string, Extractor, std::less<>> by_extension_;
};

// HTML to Markdown-like text: headings become '#' lines, paragraphs and list items
// their own blocks, <pre> a fenced block; scripts, styles and comments vanish and
// character references are decoded. Exposed for tests.
std::string html_to_text(std::string_view html);

// Checks `bytes` is UTF-8; the error names `what` and the offset of the first bad byte.
Status check_utf8(std::string_view bytes, std::string_view what);

}  // namespace hearth::documents
