// The Documents panel: libraries of files and folders the user added, their
// indexing (progress, pause, cancel), which libraries the open conversation
// reads from, and the grounder that puts retrieved passages into its prompts.
//
// Indexing runs one file per storage job and never while a reply is being
// written (chat first): a step waits until the reply has finished. Folders are
// watched; a change re-plans the library, which re-reads only files whose size
// or time changed and re-indexes only those whose content hash changed.
#pragma once

#include <QFileSystemWatcher>
#include <QObject>
#include <QTimer>
#include <QUrl>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <functional>
#include <memory>
#include <optional>

#include "documents/document_grounder.h"
#include "store/storage_executor.h"

namespace hearth::documents {
class Extractors;
}

namespace hearth::ui {

class OpenConversationController;
class ReplyController;
class SettingsController;

// Loads an embedding model file for the libraries (the app's engine); runs on
// the storage thread.
using EmbeddingLoader = std::function<Result<std::shared_ptr<PassageEmbedding>>(const QString& path)>;

class DocumentsController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  // Libraries need the conversation database; false with an in-memory store.
  Q_PROPERTY(bool available READ available NOTIFY librariesChanged)
  // [{id, name, documents, failed, chunks, roots, keywordOnly}]
  Q_PROPERTY(QVariantList libraries READ libraries NOTIFY librariesChanged)
  Q_PROPERTY(bool indexing READ indexing NOTIFY progressChanged)
  Q_PROPERTY(bool paused READ paused NOTIFY progressChanged)
  Q_PROPERTY(int filesDone READ filesDone NOTIFY progressChanged)
  Q_PROPERTY(int filesTotal READ filesTotal NOTIFY progressChanged)
  Q_PROPERTY(QString currentFile READ currentFile NOTIFY progressChanged)
  Q_PROPERTY(QString lastError READ lastError NOTIFY progressChanged)
  // Library ids attached to the open conversation.
  Q_PROPERTY(QVariantList attached READ attached NOTIFY attachedChanged)
  // The embedding model (file name; empty: none, keyword search only), whether
  // it is loading, and why it could not be loaded.
  Q_PROPERTY(QString embeddingModel READ embeddingModel NOTIFY embeddingChanged)
  Q_PROPERTY(bool embeddingLoading READ embeddingLoading NOTIFY embeddingChanged)
  Q_PROPERTY(QString embeddingError READ embeddingError NOTIFY embeddingChanged)

 public:
  // `add_formats` registers the extractors the app provides (PDF) next to the
  // built-in ones; `load_embedding` (may be empty: keyword search only) loads
  // the embedding model the settings name, now and when the user picks another.
  DocumentsController(StorageExecutor* storage, OpenConversationController* open, ReplyController* reply,
                      SettingsController* settings, std::function<void(documents::Extractors&)> add_formats,
                      EmbeddingLoader load_embedding, QObject* parent = nullptr);
  ~DocumentsController() override;

  bool available() const { return available_; }
  QVariantList libraries() const { return libraries_; }
  bool indexing() const { return indexing_; }
  bool paused() const { return paused_; }
  int filesDone() const { return files_done_; }
  int filesTotal() const { return files_total_; }
  QString currentFile() const { return current_file_; }
  QString lastError() const { return last_error_; }
  QVariantList attached() const { return attached_; }
  QString embeddingModel() const { return embedding_name_; }
  bool embeddingLoading() const { return embedding_loading_; }
  QString embeddingError() const { return embedding_error_; }
  std::shared_ptr<DocumentGrounder> grounder() const { return grounder_; }

  Q_INVOKABLE void refresh();
  // Creates a library holding `path` (a file or folder, local URL or path) and indexes it.
  Q_INVOKABLE void createLibrary(const QString& name, const QUrl& path);
  Q_INVOKABLE void addPath(qint64 library, const QUrl& path);
  Q_INVOKABLE void removeLibrary(qint64 library);
  Q_INVOKABLE void reindex(qint64 library);
  Q_INVOKABLE void pause();
  Q_INVOKABLE void resume();
  Q_INVOKABLE void cancel();
  Q_INVOKABLE void attach(qint64 library);
  Q_INVOKABLE void detach(qint64 library);
  // Uses the embedding model file at `path` (saved in the settings); an empty
  // URL goes back to keyword search only.
  Q_INVOKABLE void setEmbeddingModel(const QUrl& path);
  // Re-indexes a library with the loaded embedding model (its vectors came from
  // another model or none).
  Q_INVOKABLE void rebuildWithEmbeddingModel(qint64 library);

 signals:
  void librariesChanged();
  void progressChanged();
  void attachedChanged();
  void embeddingChanged();
  // An indexing run finished (not cancelled): tests and the panel listen.
  void indexed(qint64 library);
  void errorOccurred(const QString& message);

 private:
  struct Worker;  // the storage thread's side: libraries, the current run
  void start_index(qint64 library);
  // Indexes the next file, unless paused, cancelled, one is in flight, or a
  // reply is being written (then it retries shortly).
  void step();
  void set_attached(qint64 library, bool attached);
  void load_attached();
  void watch(const QStringList& roots);
  void use_embedding_model(const QString& path);

  StorageExecutor* storage_;
  OpenConversationController* open_;
  ReplyController* reply_;
  SettingsController* settings_;
  EmbeddingLoader load_embedding_;
  std::shared_ptr<Worker> worker_;
  std::shared_ptr<DocumentGrounder> grounder_;
  QFileSystemWatcher watcher_;
  QTimer rescan_;  // debounces file-system changes
  QTimer retry_;   // a step waiting for a reply to finish
  std::vector<qint64> queue_;  // libraries waiting to be indexed
  bool available_ = false;
  QVariantList libraries_;
  bool indexing_ = false;
  bool paused_ = false;
  bool stepping_ = false;
  qint64 running_library_ = 0;
  int files_done_ = 0;
  int files_total_ = 0;
  QString current_file_;
  QString last_error_;
  QVariantList attached_;
  QString embedding_name_;
  bool embedding_loading_ = false;
  QString embedding_error_;
};

}  // namespace hearth::ui
