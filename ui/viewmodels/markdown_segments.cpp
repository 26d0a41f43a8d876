#include "viewmodels/markdown_segments.h"

#include <QStringList>

namespace hearth::ui {
namespace {

struct Fence {
  QChar ch;
  int length = 0;
  QString info;
};

// Recognises an opening or closing fence line per CommonMark's basic rule.
bool parse_fence(const QString& line, Fence* fence) {
  int i = 0;
  while (i < line.size() && i < 3 && line[i] == QLatin1Char(' ')) ++i;
  if (i >= line.size()) return false;
  const QChar ch = line[i];
  if (ch != QLatin1Char('`') && ch != QLatin1Char('~')) return false;
  int n = 0;
  while (i + n < line.size() && line[i + n] == ch) ++n;
  if (n < 3) return false;
  const QString info = line.mid(i + n).trimmed();
  // A backtick fence's info string may not contain backticks (CommonMark).
  if (ch == QLatin1Char('`') && info.contains(QLatin1Char('`'))) return false;
  fence->ch = ch;
  fence->length = n;
  fence->info = info.section(QLatin1Char(' '), 0, 0);
  return true;
}

bool closes(const QString& line, const Fence& open) {
  Fence f;
  return parse_fence(line, &f) && f.ch == open.ch && f.length >= open.length && f.info.isEmpty();
}

}  // namespace

QList<MarkdownSegment> split_markdown(const QString& text) {
  QList<MarkdownSegment> out;
  const QStringList lines = text.split(QLatin1Char('\n'));
  QStringList prose;
  QStringList code;
  Fence open;
  bool in_code = false;

  auto flush_prose = [&] {
    if (prose.isEmpty()) return;
    QString joined = prose.join(QLatin1Char('\n'));
    prose.clear();
    if (joined.trimmed().isEmpty()) return;
    out.append({MarkdownSegment::Kind::Prose, joined, QString(), true});
  };

  for (const QString& line : lines) {
    if (!in_code) {
      Fence f;
      if (parse_fence(line, &f)) {
        flush_prose();
        open = f;
        in_code = true;
        code.clear();
      } else {
        prose.append(line);
      }
    } else if (closes(line, open)) {
      out.append({MarkdownSegment::Kind::Code, code.join(QLatin1Char('\n')), open.info, true});
      in_code = false;
    } else {
      code.append(line);
    }
  }
  if (in_code) {
    out.append({MarkdownSegment::Kind::Code, code.join(QLatin1Char('\n')), open.info, false});
  }
  flush_prose();
  return out;
}

}  // namespace hearth::ui
