#include "documents/docx_extractor.h"

#include <zip.h>

#include <QString>
#include <QXmlStreamReader>

#include <memory>

namespace hearth::app {
namespace {

// The body's uncompressed size a document may have (a 64 MiB XML body is a book
// of several thousand pages).
constexpr zip_uint64_t kMaxBodyBytes = 64ull << 20;

struct ArchiveCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct FileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

Result<std::string> read_body(const std::filesystem::path& path, std::string_view bytes) {
  const std::string where = "'" + path.string() + "'";
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) return make_error(ErrorCode::OutOfMemory, where + ": cannot read the archive");
  std::unique_ptr<zip_t, ArchiveCloser> archive(zip_open_from_source(source, ZIP_RDONLY, &error));
  if (!archive) {
    zip_source_free(source);
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    return make_error(ErrorCode::InvalidFormat, where + " is not a DOCX (zip) archive: " + why);
  }
  zip_error_fini(&error);
  zip_stat_t stat;
  if (zip_stat(archive.get(), "word/document.xml", 0, &stat) != 0 || (stat.valid & ZIP_STAT_SIZE) == 0) {
    return make_error(ErrorCode::InvalidFormat, where + " has no word/document.xml: not a Word document");
  }
  if (stat.size > kMaxBodyBytes) {
    return make_error(ErrorCode::LimitExceeded, where + ": the document body is " + std::to_string(stat.size >> 20) +
                                                    " MiB, over the 64 MiB Hearth reads");
  }
  std::unique_ptr<zip_file_t, FileCloser> file(zip_fopen(archive.get(), "word/document.xml", 0));
  if (!file) return make_error(ErrorCode::InvalidFormat, where + ": cannot open word/document.xml");
  std::string body(static_cast<std::size_t>(stat.size), '\0');
  zip_int64_t done = 0;
  while (done < static_cast<zip_int64_t>(body.size())) {
    const zip_int64_t n = zip_fread(file.get(), body.data() + done, body.size() - static_cast<std::size_t>(done));
    if (n <= 0) return make_error(ErrorCode::InvalidFormat, where + ": word/document.xml is damaged");
    done += n;
  }
  return body;
}

// "Heading2" / "heading 2" / "Title" -> 2 / 2 / 1; 0 for other styles.
int heading_level(const QString& style) {
  const QString s = style.toLower().remove(QLatin1Char(' '));
  if (s == QLatin1String("title")) return 1;
  if (!s.startsWith(QLatin1String("heading"))) return 0;
  bool ok = false;
  const int level = s.mid(7).toInt(&ok);
  return ok && level >= 1 && level <= 6 ? level : 0;
}

}  // namespace

Result<documents::ExtractedText> extract_docx(const std::filesystem::path& path, std::string_view bytes) {
  HEARTH_TRY(std::string body, read_body(path, bytes));
  QXmlStreamReader xml(QByteArray::fromRawData(body.data(), static_cast<qsizetype>(body.size())));
  QString out;
  QString paragraph;
  int level = 0;
  bool in_text = false;
  while (!xml.atEnd()) {
    const auto token = xml.readNext();
    if (token == QXmlStreamReader::StartElement) {
      const auto name = xml.qualifiedName();
      if (name == QLatin1String("w:p")) {
        paragraph.clear();
        level = 0;
      } else if (name == QLatin1String("w:pStyle")) {
        level = heading_level(xml.attributes().value(QLatin1String("w:val")).toString());
      } else if (name == QLatin1String("w:t")) {
        in_text = true;
      } else if (name == QLatin1String("w:tab")) {
        paragraph += QLatin1Char('\t');
      } else if (name == QLatin1String("w:br") || name == QLatin1String("w:cr")) {
        paragraph += QLatin1Char('\n');
      } else if (name == QLatin1String("w:tc") && !paragraph.isEmpty()) {
        paragraph += QLatin1String(" | ");
      }
    } else if (token == QXmlStreamReader::Characters && in_text) {
      paragraph += xml.text();
    } else if (token == QXmlStreamReader::EndElement) {
      const auto name = xml.qualifiedName();
      if (name == QLatin1String("w:t")) {
        in_text = false;
      } else if (name == QLatin1String("w:p")) {
        const QString text = paragraph.trimmed();
        if (!text.isEmpty()) {
          if (!out.isEmpty()) out += QLatin1String("\n\n");
          if (level > 0) out += QString(level, QLatin1Char('#')) + QLatin1Char(' ');
          out += text;
        }
        paragraph.clear();
      }
    }
  }
  if (xml.hasError()) {
    return make_error(ErrorCode::InvalidFormat, "'" + path.string() + "': word/document.xml is malformed at line " +
                                                    std::to_string(xml.lineNumber()) + ": " +
                                                    xml.errorString().toStdString());
  }
  documents::ExtractedText text;
  text.kind = "docx";
  text.structure = documents::TextKind::Markdown;
  text.pages.push_back(documents::PageText{std::nullopt, out.toStdString()});
  return text;
}

}  // namespace hearth::app
