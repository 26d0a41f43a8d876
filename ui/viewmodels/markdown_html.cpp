#include "viewmodels/markdown_html.h"

#include <QRegularExpression>
#include <QStringList>

namespace hearth::ui {
namespace {

// Inline spans on already HTML-escaped text. Code spans are cut out first so
// their content is never interpreted.
QString inline_html(const QString& raw) {
  QString out;
  const QString text = raw;
  qsizetype i = 0;
  QString plain;
  auto flush_plain = [&] {
    QString s = plain.toHtmlEscaped();
    static const QRegularExpression bold(QStringLiteral(R"(\*\*(.+?)\*\*|__(.+?)__)"));
    static const QRegularExpression italic(QStringLiteral(R"((?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?!\*)|(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w))"));
    static const QRegularExpression strike(QStringLiteral(R"(~~(.+?)~~)"));
    static const QRegularExpression link(QStringLiteral(R"(\[([^\]]+)\]\(([^)\s]+)\))"));
    s.replace(bold, QStringLiteral("<b>\\1\\2</b>"));
    s.replace(italic, QStringLiteral("<i>\\1\\2</i>"));
    s.replace(strike, QStringLiteral("<s>\\1</s>"));
    s.replace(link, QStringLiteral("<a href=\"\\2\">\\1</a>"));
    out += s;
    plain.clear();
  };
  while (i < text.size()) {
    if (text[i] == QLatin1Char('`')) {
      qsizetype ticks = 0;
      while (i + ticks < text.size() && text[i + ticks] == QLatin1Char('`')) ++ticks;
      const QString fence(ticks, QLatin1Char('`'));
      const qsizetype end = text.indexOf(fence, i + ticks);
      if (end > 0) {
        flush_plain();
        out += QStringLiteral("<code>") + text.mid(i + ticks, end - i - ticks).trimmed().toHtmlEscaped() +
               QStringLiteral("</code>");
        i = end + ticks;
        continue;
      }
      plain += fence;
      i += ticks;
      continue;
    }
    plain += text[i++];
  }
  flush_plain();
  return out;
}

bool is_table_separator(const QString& line) {
  static const QRegularExpression re(QStringLiteral(R"(^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$)"));
  return re.match(line).hasMatch();
}

QStringList table_cells(QString line) {
  line = line.trimmed();
  if (line.startsWith(QLatin1Char('|'))) line.remove(0, 1);
  if (line.endsWith(QLatin1Char('|'))) line.chop(1);
  QStringList cells = line.split(QLatin1Char('|'));
  for (auto& c : cells) c = c.trimmed();
  return cells;
}

}  // namespace

QString markdown_to_html(const QString& text) {
  static const QRegularExpression heading(QStringLiteral(R"(^(#{1,6})\s+(.*)$)"));
  static const QRegularExpression bullet(QStringLiteral(R"(^\s*[-*+]\s+(.*)$)"));
  static const QRegularExpression ordered(QStringLiteral(R"(^\s*(\d{1,9})[.)]\s+(.*)$)"));
  static const QRegularExpression rule(QStringLiteral(R"(^\s*([-*_])(\s*\1){2,}\s*$)"));

  const QStringList lines = text.split(QLatin1Char('\n'));
  QString html;
  QStringList paragraph;
  QString open_list;  // "ul", "ol" or empty

  auto close_paragraph = [&] {
    if (paragraph.isEmpty()) return;
    html += QStringLiteral("<p>") + inline_html(paragraph.join(QLatin1Char(' '))) + QStringLiteral("</p>");
    paragraph.clear();
  };
  auto close_list = [&] {
    if (open_list.isEmpty()) return;
    html += QStringLiteral("</%1>").arg(open_list);
    open_list.clear();
  };

  for (qsizetype n = 0; n < lines.size(); ++n) {
    const QString& line = lines[n];
    if (line.trimmed().isEmpty()) {
      close_paragraph();
      close_list();
      continue;
    }
    if (auto m = heading.match(line); m.hasMatch()) {
      close_paragraph();
      close_list();
      const int level = static_cast<int>(m.captured(1).size());
      html += QStringLiteral("<h%1>%2</h%1>").arg(level).arg(inline_html(m.captured(2)));
      continue;
    }
    if (rule.match(line).hasMatch() && paragraph.isEmpty()) {
      close_list();
      html += QStringLiteral("<hr/>");
      continue;
    }
    // A table: a header row, a separator row, then body rows.
    if (line.contains(QLatin1Char('|')) && n + 1 < lines.size() && is_table_separator(lines[n + 1])) {
      close_paragraph();
      close_list();
      html += QStringLiteral("<table border=\"1\" cellspacing=\"0\" cellpadding=\"6\"><tr>");
      for (const QString& c : table_cells(line)) html += QStringLiteral("<th>") + inline_html(c) + QStringLiteral("</th>");
      html += QStringLiteral("</tr>");
      n += 2;
      for (; n < lines.size() && lines[n].contains(QLatin1Char('|')); ++n) {
        html += QStringLiteral("<tr>");
        for (const QString& c : table_cells(lines[n])) html += QStringLiteral("<td>") + inline_html(c) + QStringLiteral("</td>");
        html += QStringLiteral("</tr>");
      }
      --n;
      html += QStringLiteral("</table>");
      continue;
    }
    if (auto m = bullet.match(line); m.hasMatch()) {
      close_paragraph();
      if (open_list != QLatin1String("ul")) {
        close_list();
        html += QStringLiteral("<ul>");
        open_list = QStringLiteral("ul");
      }
      html += QStringLiteral("<li>") + inline_html(m.captured(1)) + QStringLiteral("</li>");
      continue;
    }
    if (auto m = ordered.match(line); m.hasMatch()) {
      close_paragraph();
      if (open_list != QLatin1String("ol")) {
        close_list();
        html += QStringLiteral("<ol start=\"%1\">").arg(m.captured(1));
        open_list = QStringLiteral("ol");
      }
      html += QStringLiteral("<li>") + inline_html(m.captured(2)) + QStringLiteral("</li>");
      continue;
    }
    if (line.trimmed().startsWith(QLatin1Char('>'))) {
      close_paragraph();
      close_list();
      html += QStringLiteral("<blockquote>") + inline_html(line.trimmed().mid(1).trimmed()) +
              QStringLiteral("</blockquote>");
      continue;
    }
    close_list();
    paragraph << line.trimmed();
  }
  close_paragraph();
  close_list();
  return html;
}

}  // namespace hearth::ui
