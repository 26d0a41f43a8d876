// Splits a document's text into passages for retrieval. A passage never crosses a
// heading (each knows the headings above it), keeps paragraphs, list items and
// fenced code blocks whole where they fit, and repeats the end of the previous
// passage of the same section (the overlap) so a sentence cut at a boundary is
// still found whole in one of them. Line numbers are 1-based within the page (or
// the file, when it has no pages), so a citation opens the source at its lines.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::documents {

// How the text is structured: Markdown has '#' headings and ``` fences; Code is
// split at blank lines (between functions, mostly) and never reflowed; Plain has
// paragraphs separated by blank lines.
enum class TextKind { Plain, Markdown, Code };

struct ChunkerOptions {
  std::int64_t target_chars = 1200;  // ~300 tokens: a passage answers one question
  std::int64_t max_chars = 2000;     // a block longer than this is split at lines
  std::int64_t overlap_chars = 200;  // repeated from the previous passage's end
};

// One page of a document (a PDF page), or the whole text of a file without pages.
struct PageText {
  std::optional<std::int64_t> page;  // 1-based, none for files without pages
  std::string text;
};

struct Passage {
  std::string heading;  // "Install > Debian": the headings above, outermost first
  std::string text;
  std::optional<std::int64_t> page;
  std::int64_t line_first = 1;
  std::int64_t line_last = 1;
  std::int64_t token_estimate = 0;  // ~4 bytes per token, for the prompt budget
};

std::vector<Passage> chunk_text(const std::vector<PageText>& pages, TextKind kind, const ChunkerOptions& options = {});

}  // namespace hearth::documents
