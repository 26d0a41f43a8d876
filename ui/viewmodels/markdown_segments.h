// Splits a (possibly still streaming) Markdown message into prose and fenced
// code blocks. Prose is rendered by Qt's Markdown support (lists, tables,
// emphasis); code blocks get their own component with a copy button.
#pragma once

#include <QList>
#include <QString>

namespace hearth::ui {

struct MarkdownSegment {
  enum class Kind { Prose, Code };
  Kind kind = Kind::Prose;
  QString text;      // for Code: the code without the fences
  QString language;  // info string of the fence, e.g. "cpp"; may be empty
  bool closed = true;  // false for a code block still being streamed

  friend bool operator==(const MarkdownSegment&, const MarkdownSegment&) = default;
};

// A fence is a line starting (after up to three spaces) with ``` or ~~~; it is
// closed by a line with at least as many of the same character. An unclosed
// fence runs to the end of the text (a reply still streaming).
QList<MarkdownSegment> split_markdown(const QString& text);

}  // namespace hearth::ui
