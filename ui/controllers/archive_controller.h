// Export and import of conversations for the window: export the open conversation
// or all of them as JSON or Markdown, preview a JSON file (how many conversations
// and messages it holds, how many are already stored), then import it skipping
// duplicates or as copies. Reading, writing and the database work run on the
// storage thread; files are written to a temporary file and renamed into place.
#pragma once

#include <QObject>
#include <QString>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include "store/storage_executor.h"

namespace hearth::ui {

class ArchiveController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  // A job is on the storage thread; further requests are ignored until it answers.
  Q_PROPERTY(bool busy READ busy NOTIFY busyChanged)
  // A previewed file waits for the user's duplicate choice.
  Q_PROPERTY(bool previewReady READ previewReady NOTIFY previewChanged)
  Q_PROPERTY(QString previewFile READ previewFile NOTIFY previewChanged)
  Q_PROPERTY(qint64 previewConversations READ previewConversations NOTIFY previewChanged)
  Q_PROPERTY(qint64 previewMessages READ previewMessages NOTIFY previewChanged)
  Q_PROPERTY(qint64 previewExisting READ previewExisting NOTIFY previewChanged)
  // The outcome of the last export or import, for the window to show.
  Q_PROPERTY(QString lastMessage READ lastMessage NOTIFY lastMessageChanged)
  Q_PROPERTY(bool lastFailed READ lastFailed NOTIFY lastMessageChanged)

 public:
  explicit ArchiveController(StorageExecutor* storage, QObject* parent = nullptr);

  bool busy() const { return busy_; }
  bool previewReady() const { return preview_ready_; }
  QString previewFile() const { return preview_file_; }
  qint64 previewConversations() const { return counts_.conversations; }
  qint64 previewMessages() const { return counts_.messages; }
  qint64 previewExisting() const { return counts_.existing; }
  QString lastMessage() const { return last_message_; }
  bool lastFailed() const { return last_failed_; }

  // format: "json" or "markdown"; conversation: the one to export, or -1 for all.
  Q_INVOKABLE void exportTo(const QUrl& file, const QString& format, qint64 conversation);
  // Reads and checks a JSON export; previewReady and the counts follow.
  Q_INVOKABLE void previewImport(const QUrl& file);
  // Imports the previewed file; duplicates: "skip" or "copies".
  Q_INVOKABLE void importPreviewed(const QString& duplicates);
  Q_INVOKABLE void cancelImport();
  Q_INVOKABLE void dismissMessage();

 signals:
  void busyChanged();
  void previewChanged();
  void lastMessageChanged();
  void exported(const QString& file);
  void imported(qint64 conversations, qint64 messages, qint64 skipped);
  void failed(const QString& message);

 private:
  bool start();
  void finish_ok(const QString& message);
  void finish_failed(const QString& message);
  void clear_preview();

  StorageExecutor* storage_;
  bool busy_ = false;
  bool preview_ready_ = false;
  QString preview_file_;
  ImportCounts counts_;
  QString last_message_;
  bool last_failed_ = false;
};

}  // namespace hearth::ui
