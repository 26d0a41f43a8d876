#include "controllers/archive_controller.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace hearth::ui {
namespace {

// QByteArray cannot hold more; an export this large is not one Hearth wrote.
constexpr qint64 kMaxImportBytes = qint64{1} << 30;

// QSaveFile writes beside the target and renames over it on commit, so an existing
// file is never truncated and a failed write leaves it as it was.
Status write_replacing(const QString& path, const std::string& bytes) {
  QSaveFile out(path);
  if (!out.open(QIODevice::WriteOnly)) {
    return make_error(ErrorCode::Io, "cannot write '" + path.toStdString() + "': " + out.errorString().toStdString());
  }
  if (out.write(bytes.data(), static_cast<qint64>(bytes.size())) != static_cast<qint64>(bytes.size())) {
    const std::string why = out.errorString().toStdString();
    out.cancelWriting();
    return make_error(ErrorCode::Io, "cannot write '" + path.toStdString() + "': " + why);
  }
  if (!out.commit()) {
    return make_error(ErrorCode::Io, "cannot finish '" + path.toStdString() + "': " + out.errorString().toStdString());
  }
  return {};
}

Result<std::string> read_whole(const QString& path) {
  const QFileInfo info(path);
  if (!info.exists()) return make_error(ErrorCode::NotFound, "'" + path.toStdString() + "' does not exist");
  // Only regular files: reading a pipe or device could wait forever.
  if (!info.isFile()) return make_error(ErrorCode::InvalidArgument, "'" + path.toStdString() + "' is not a file");
  if (info.size() > kMaxImportBytes) {
    return make_error(ErrorCode::LimitExceeded, "'" + path.toStdString() + "' is " + std::to_string(info.size()) +
                                                    " bytes, more than an import reads (" +
                                                    std::to_string(kMaxImportBytes) + ")");
  }
  QFile in(path);
  if (!in.open(QIODevice::ReadOnly)) {
    return make_error(ErrorCode::Io, "cannot read '" + path.toStdString() + "': " + in.errorString().toStdString());
  }
  const QByteArray bytes = in.readAll();
  if (in.error() != QFileDevice::NoError) {
    return make_error(ErrorCode::Io, "cannot read '" + path.toStdString() + "': " + in.errorString().toStdString());
  }
  return bytes.toStdString();
}

// Prefixes a storage error with the file it came from ("import of 'x.json': ...").
Error about(const char* what, const QString& path, const Error& error) {
  return Error{error.code, std::string(what) + " of '" + path.toStdString() + "': " + error.message};
}

}  // namespace

ArchiveController::ArchiveController(StorageExecutor* storage, QObject* parent)
    : QObject(parent), storage_(storage) {}

bool ArchiveController::start() {
  if (busy_) return false;
  busy_ = true;
  emit busyChanged();
  return true;
}

void ArchiveController::finish_ok(const QString& message) {
  busy_ = false;
  last_message_ = message;
  last_failed_ = false;
  emit lastMessageChanged();
  emit busyChanged();
}

void ArchiveController::finish_failed(const QString& message) {
  busy_ = false;
  last_message_ = message;
  last_failed_ = true;
  emit lastMessageChanged();
  emit busyChanged();
  emit failed(message);
}

void ArchiveController::clear_preview() {
  if (!preview_ready_ && preview_file_.isEmpty()) return;
  preview_ready_ = false;
  preview_file_.clear();
  counts_ = ImportCounts{};
  emit previewChanged();
}

void ArchiveController::exportTo(const QUrl& file, const QString& format, qint64 conversation) {
  const QString path = file.isLocalFile() ? file.toLocalFile() : QString();
  ArchiveFormat chosen = ArchiveFormat::Json;
  if (format == QLatin1String("markdown")) {
    chosen = ArchiveFormat::Markdown;
  } else if (format != QLatin1String("json")) {
    finish_failed(tr("Unknown export format \"%1\"").arg(format));
    return;
  }
  if (path.isEmpty()) {
    finish_failed(tr("Export needs a local file, not \"%1\"").arg(file.toString()));
    return;
  }
  if (!start()) return;
  std::vector<ConversationKey> which;
  if (conversation >= 0) which.push_back(ConversationKey{conversation});
  storage_->run(
      [path, chosen, which](ConversationStore& s) -> Status {
        auto document = s.export_conversations(chosen, which);
        if (!document.ok()) return about("export", path, document.error());
        return write_replacing(path, document.value());
      },
      this, [this, path](Status status) {
        if (!status.ok()) {
          finish_failed(tr("Export failed: %1").arg(QString::fromStdString(status.error().message)));
          return;
        }
        finish_ok(tr("Exported to %1").arg(QFileInfo(path).fileName()));
        emit exported(path);
      });
}

void ArchiveController::previewImport(const QUrl& file) {
  const QString path = file.isLocalFile() ? file.toLocalFile() : QString();
  if (path.isEmpty()) {
    finish_failed(tr("Import needs a local file, not \"%1\"").arg(file.toString()));
    return;
  }
  if (!start()) return;
  clear_preview();
  storage_->run(
      [path](ConversationStore& s) -> Result<ImportCounts> {
        HEARTH_TRY(std::string json, read_whole(path));
        auto counts = s.preview_import(json);
        if (!counts.ok()) return about("import", path, counts.error());
        return counts;
      },
      this, [this, path](Result<ImportCounts> counts) {
        if (!counts.ok()) {
          finish_failed(tr("Cannot import: %1").arg(QString::fromStdString(counts.error().message)));
          return;
        }
        counts_ = counts.value();
        preview_file_ = path;
        preview_ready_ = true;
        emit previewChanged();
        finish_ok(QString());
      });
}

void ArchiveController::importPreviewed(const QString& duplicates) {
  DuplicateChoice choice = DuplicateChoice::Skip;
  if (duplicates == QLatin1String("copies")) {
    choice = DuplicateChoice::ImportAsCopies;
  } else if (duplicates != QLatin1String("skip")) {
    finish_failed(tr("Unknown duplicate choice \"%1\"").arg(duplicates));
    return;
  }
  if (!preview_ready_ || !start()) return;
  const QString path = preview_file_;
  clear_preview();
  // The file is read again: the import validates it in full inside its transaction,
  // so a file changed since the preview is still imported whole or not at all.
  storage_->run(
      [path, choice](ConversationStore& s) -> Result<ImportOutcome> {
        HEARTH_TRY(std::string json, read_whole(path));
        auto outcome = s.import_conversations(json, choice);
        if (!outcome.ok()) return about("import", path, outcome.error());
        return outcome;
      },
      this, [this](Result<ImportOutcome> outcome) {
        if (!outcome.ok()) {
          finish_failed(tr("Import failed: %1").arg(QString::fromStdString(outcome.error().message)));
          return;
        }
        const ImportOutcome o = outcome.value();
        QString message = tr("Imported %n conversation(s)", nullptr, static_cast<int>(o.conversations));
        if (o.skipped > 0) {
          message += QStringLiteral(", ") + tr("skipped %n already present", nullptr, static_cast<int>(o.skipped));
        }
        finish_ok(message);
        emit imported(o.conversations, o.messages, o.skipped);
      });
}

void ArchiveController::cancelImport() {
  if (busy_) return;
  clear_preview();
}

void ArchiveController::dismissMessage() {
  if (last_message_.isEmpty()) return;
  last_message_.clear();
  last_failed_ = false;
  emit lastMessageChanged();
}

}  // namespace hearth::ui
