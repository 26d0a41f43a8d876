// A small Markdown-to-HTML converter for message prose (headings, paragraphs,
// lists, block quotes, tables, rules; inline code, bold, italic, strike-through
// and links). Qt's own Markdown import re-parses slowly as a streaming reply
// grows (hundreds of milliseconds per update for a long paragraph); this
// converter is linear and its HTML subset is what Qt's rich text lays out fast.
#pragma once

#include <QString>

namespace hearth::ui {

// `text` is one prose segment (code fences are split off before).
QString markdown_to_html(const QString& text);

}  // namespace hearth::ui
