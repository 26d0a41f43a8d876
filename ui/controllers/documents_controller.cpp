#include "controllers/documents_controller.h"

#include <hearth/documents/extract.h>
#include <hearth/documents/indexer.h>
#include <hearth/storage/libraries.h>
#include <hearth/storage/sources.h>

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QVariantMap>

#include "controllers/open_conversation_controller.h"
#include "controllers/reply_controller.h"
#include "controllers/settings_controller.h"

namespace hearth::ui {
namespace {

constexpr int kRescanDelayMs = 2000;
constexpr int kRetryMs = 250;
constexpr int kMaxWatchedFolders = 2000;

QString local_path(const QUrl& url) { return url.isLocalFile() ? url.toLocalFile() : url.toString(); }

Status need_database(ConversationStore& s) {
  if (s.database() == nullptr) {
    return make_error(ErrorCode::Unsupported, "documents need the conversation database, which is not open");
  }
  return {};
}

struct LibraryRow {
  qint64 id = 0;
  QString name;
  qint64 documents = 0, failed = 0, chunks = 0;
  QStringList roots;
  bool keyword_only = true;
};

struct StepOutcome {
  documents::IndexProgress progress;
  bool done = false;
};

}  // namespace

// What the storage thread holds: the repository and the run in progress. Only
// storage jobs touch it, one at a time.
struct DocumentsController::Worker {
  documents::Extractors extractors = documents::Extractors::builtin();
  std::unique_ptr<storage::Libraries> libraries;
  storage::Database* bound = nullptr;
  std::optional<documents::IndexRun> run;

  Result<storage::Libraries*> libs(ConversationStore& s) {
    HEARTH_CHECK(need_database(s));
    if (bound != s.database()) {
      bound = s.database();
      libraries = std::make_unique<storage::Libraries>(*bound);
    }
    return libraries.get();
  }
};

DocumentsController::DocumentsController(StorageExecutor* storage, OpenConversationController* open,
                                         ReplyController* reply, SettingsController* settings,
                                         std::function<void(documents::Extractors&)> add_formats,
                                         EmbeddingLoader load_embedding, QObject* parent)
    : QObject(parent),
      storage_(storage),
      open_(open),
      reply_(reply),
      settings_(settings),
      load_embedding_(std::move(load_embedding)),
      worker_(std::make_shared<Worker>()),
      grounder_(std::make_shared<DocumentGrounder>()) {
  if (add_formats) add_formats(worker_->extractors);
  grounder_->set_extractors(worker_->extractors);
  rescan_.setSingleShot(true);
  rescan_.setInterval(kRescanDelayMs);
  retry_.setSingleShot(true);
  retry_.setInterval(kRetryMs);
  connect(&retry_, &QTimer::timeout, this, &DocumentsController::step);
  connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { rescan_.start(); });
  connect(&watcher_, &QFileSystemWatcher::fileChanged, this, [this] { rescan_.start(); });
  connect(&rescan_, &QTimer::timeout, this, [this] {
    for (const QVariant& row : libraries_) start_index(row.toMap().value(QStringLiteral("id")).toLongLong());
  });
  if (open_) connect(open_, &OpenConversationController::currentChanged, this, &DocumentsController::load_attached);
  if (reply_) reply_->set_grounder(grounder_);
  if (settings_) use_embedding_model(QString::fromStdString(settings_->settings().documents.embedding_model_path));
}

void DocumentsController::use_embedding_model(const QString& path) {
  embedding_error_.clear();
  if (path.isEmpty() || !load_embedding_) {
    embedding_name_.clear();
    const std::shared_ptr<DocumentGrounder> grounder = grounder_;
    storage_->write([grounder](ConversationStore&) -> Status {
      grounder->set_embedding(nullptr);
      return {};
    });
    emit embeddingChanged();
    refresh();
    return;
  }
  embedding_loading_ = true;
  emit embeddingChanged();
  const std::shared_ptr<DocumentGrounder> grounder = grounder_;
  EmbeddingLoader loader = load_embedding_;
  // Loading reads the model file: on the storage thread, where it is used.
  storage_->run(
      [grounder, loader, path](ConversationStore&) -> Status {
        auto loaded = loader(path);
        if (!loaded.ok()) {
          grounder->set_embedding(nullptr);
          return loaded.take_error();
        }
        grounder->set_embedding(std::move(loaded).value());
        return {};
      },
      this,
      [this, path](Status done) {
        embedding_loading_ = false;
        if (done.ok()) {
          embedding_name_ = QFileInfo(path).fileName();
        } else {
          embedding_name_.clear();
          embedding_error_ = QString::fromStdString(done.error().message);
        }
        emit embeddingChanged();
        refresh();
      });
}

void DocumentsController::setEmbeddingModel(const QUrl& path) {
  const QString file = path.isEmpty() ? QString() : local_path(path);
  if (settings_) settings_->setDocumentsEmbeddingModel(file);
  use_embedding_model(file);
}

void DocumentsController::rebuildWithEmbeddingModel(qint64 library) {
  if (running_library_ == library) cancel();
  auto worker = worker_;
  const std::shared_ptr<DocumentGrounder> grounder = grounder_;
  storage_->run(
      [worker, grounder, library](ConversationStore& s) -> Status {
        HEARTH_TRY(storage::Libraries * libs, worker->libs(s));
        const PassageEmbedding* e = grounder->embedding();
        return libs->reset_for_model(storage::LibraryId(library), e ? e->identity() : std::string(), e ? e->dim() : 0);
      },
      this,
      [this, library](Status done) {
        if (!done.ok()) {
          emit errorOccurred(QString::fromStdString(done.error().message));
          return;
        }
        refresh();
        start_index(library);
      });
}

DocumentsController::~DocumentsController() = default;

void DocumentsController::refresh() {
  auto worker = worker_;
  const std::shared_ptr<DocumentGrounder> grounder = grounder_;
  storage_->run(
      [worker, grounder](ConversationStore& s) -> Result<std::vector<LibraryRow>> {
        HEARTH_TRY(storage::Libraries * libs, worker->libs(s));
        HEARTH_TRY(auto list, libs->list());
        std::vector<LibraryRow> rows;
        const PassageEmbedding* embedding = grounder->embedding();
        for (const storage::Library& l : list) {
          LibraryRow row;
          row.id = l.id.value();
          row.name = QString::fromStdString(l.name);
          for (const auto& r : l.roots) row.roots << QString::fromStdString(r);
          HEARTH_TRY(auto docs, libs->documents(l.id));
          for (const auto& d : docs) {
            (d.state == storage::DocumentState::Failed ? row.failed : row.documents) += 1;
            row.chunks += d.chunk_count;
          }
          row.keyword_only = embedding == nullptr || l.embedding_dim == 0 || l.embedding_model != embedding->identity();
          rows.push_back(std::move(row));
        }
        return rows;
      },
      this,
      [this](Result<std::vector<LibraryRow>> rows) {
        available_ = rows.ok();
        libraries_.clear();
        QStringList roots;
        if (rows.ok()) {
          for (const LibraryRow& r : *rows) {
            libraries_.append(QVariantMap{{QStringLiteral("id"), r.id},
                                          {QStringLiteral("name"), r.name},
                                          {QStringLiteral("documents"), r.documents},
                                          {QStringLiteral("failed"), r.failed},
                                          {QStringLiteral("chunks"), r.chunks},
                                          {QStringLiteral("roots"), r.roots},
                                          {QStringLiteral("keywordOnly"), r.keyword_only}});
            roots << r.roots;
          }
        }
        emit librariesChanged();
        watch(roots);
        load_attached();
      });
}

void DocumentsController::watch(const QStringList& roots) {
  const QStringList old = watcher_.directories() + watcher_.files();
  if (!old.isEmpty()) watcher_.removePaths(old);
  QStringList folders;
  for (const QString& root : roots) {
    const QFileInfo info(root);
    if (info.isFile()) {
      folders << root;
      continue;
    }
    if (!info.isDir()) continue;
    folders << root;
    QDirIterator it(root, QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext() && folders.size() < kMaxWatchedFolders) folders << it.next();
  }
  if (!folders.isEmpty()) watcher_.addPaths(folders);
}

void DocumentsController::createLibrary(const QString& name, const QUrl& path) {
  auto worker = worker_;
  const std::shared_ptr<DocumentGrounder> grounder = grounder_;
  const std::string root = local_path(path).toStdString();
  const std::string title = name.trimmed().isEmpty() ? QFileInfo(local_path(path)).fileName().toStdString()
                                                     : name.trimmed().toStdString();
  storage_->run(
      [worker, grounder, root, title](ConversationStore& s) -> Result<qint64> {
        HEARTH_TRY(storage::Libraries * libs, worker->libs(s));
        const PassageEmbedding* e = grounder->embedding();
        HEARTH_TRY(storage::LibraryId id, libs->create(title, e ? e->identity() : std::string(), e ? e->dim() : 0));
        if (!root.empty()) HEARTH_CHECK(libs->add_root(id, root));
        return id.value();
      },
      this,
      [this](Result<qint64> id) {
        if (!id.ok()) {
          emit errorOccurred(QString::fromStdString(id.error().message));
          return;
        }
        refresh();
        start_index(*id);
      });
}

void DocumentsController::addPath(qint64 library, const QUrl& path) {
  auto worker = worker_;
  const std::string root = local_path(path).toStdString();
  storage_->run(
      [worker, library, root](ConversationStore& s) -> Status {
        HEARTH_TRY(storage::Libraries * libs, worker->libs(s));
        return libs->add_root(storage::LibraryId(library), root);
      },
      this,
      [this, library](Status done) {
        if (!done.ok()) {
          emit errorOccurred(QString::fromStdString(done.error().message));
          return;
        }
        refresh();
        start_index(library);
      });
}

void DocumentsController::removeLibrary(qint64 library) {
  if (running_library_ == library) cancel();
  auto worker = worker_;
  storage_->run(
      [worker, library](ConversationStore& s) -> Status {
        HEARTH_TRY(storage::Libraries * libs, worker->libs(s));
        return libs->remove(storage::LibraryId(library));
      },
      this,
      [this](Status done) {
        if (!done.ok()) emit errorOccurred(QString::fromStdString(done.error().message));
        refresh();
      });
}

void DocumentsController::reindex(qint64 library) { start_index(library); }

void DocumentsController::start_index(qint64 library) {
  if (library <= 0) return;
  if (indexing_) {
    if (running_library_ != library && std::find(queue_.begin(), queue_.end(), library) == queue_.end()) {
      queue_.push_back(library);
    }
    return;
  }
  indexing_ = true;
  running_library_ = library;
  files_done_ = files_total_ = 0;
  current_file_.clear();
  last_error_.clear();
  emit progressChanged();
  auto worker = worker_;
  storage_->run(
      [worker, library](ConversationStore& s) -> Result<StepOutcome> {
        HEARTH_TRY(storage::Libraries * libs, worker->libs(s));
        HEARTH_TRY(auto run, documents::IndexRun::plan(*libs, storage::LibraryId(library), worker->extractors));
        worker->run.emplace(std::move(run));
        return StepOutcome{worker->run->progress(), worker->run->done()};
      },
      this,
      [this](Result<StepOutcome> planned) {
        if (!planned.ok()) {
          last_error_ = QString::fromStdString(planned.error().message);
          indexing_ = false;
          emit progressChanged();
          emit errorOccurred(last_error_);
          return;
        }
        files_total_ = static_cast<int>(planned->progress.files_total);
        files_done_ = static_cast<int>(planned->progress.files_done);
        emit progressChanged();
        step();
      });
}

void DocumentsController::step() {
  if (!indexing_ || paused_ || stepping_) return;
  // Chat first: no indexing while a reply is being written.
  if (reply_ && reply_->generating()) {
    retry_.start();
    return;
  }
  stepping_ = true;
  auto worker = worker_;
  const std::shared_ptr<DocumentGrounder> grounder = grounder_;
  storage_->run(
      [worker, grounder](ConversationStore&) -> Result<StepOutcome> {
        if (!worker->run) return StepOutcome{{}, true};
        PassageEmbedding* embedding = grounder->embedding();
        documents::PassageEmbedder embed;
        if (embedding) embed = [embedding](std::span<const std::string> t) { return embedding->embed_passages(t); };
        HEARTH_CHECK(worker->run->step(embed));
        StepOutcome out{worker->run->progress(), worker->run->done()};
        if (out.done) worker->run.reset();
        return out;
      },
      this,
      [this](Result<StepOutcome> outcome) {
        stepping_ = false;
        if (!indexing_) return;  // cancelled meanwhile
        if (!outcome.ok()) {
          last_error_ = QString::fromStdString(outcome.error().message);
          paused_ = true;  // the user can resume (retry) or cancel
          emit progressChanged();
          emit errorOccurred(last_error_);
          return;
        }
        files_done_ = static_cast<int>(outcome->progress.files_done);
        files_total_ = static_cast<int>(outcome->progress.files_total);
        current_file_ = QString::fromStdString(outcome->progress.current);
        if (!outcome->progress.last_error.empty()) last_error_ = QString::fromStdString(outcome->progress.last_error);
        emit progressChanged();
        if (!outcome->done) {
          step();
          return;
        }
        const qint64 finished = running_library_;
        indexing_ = false;
        running_library_ = 0;
        emit progressChanged();
        refresh();
        emit indexed(finished);
        if (!queue_.empty()) {
          const qint64 next = queue_.front();
          queue_.erase(queue_.begin());
          start_index(next);
        }
      });
}

void DocumentsController::pause() {
  if (!indexing_ || paused_) return;
  paused_ = true;
  emit progressChanged();
}

void DocumentsController::resume() {
  if (!paused_) return;
  paused_ = false;
  emit progressChanged();
  step();
}

void DocumentsController::cancel() {
  if (!indexing_) return;
  indexing_ = false;
  paused_ = false;
  running_library_ = 0;
  queue_.clear();
  retry_.stop();
  auto worker = worker_;
  // What was indexed stays (each file is complete); the next run resumes from there.
  storage_->write([worker](ConversationStore&) -> Status {
    worker->run.reset();
    return {};
  });
  emit progressChanged();
  refresh();
}

void DocumentsController::load_attached() {
  const std::optional<ConversationKey> current = open_ ? open_->current() : std::nullopt;
  if (!current) {
    if (!attached_.isEmpty()) {
      attached_.clear();
      emit attachedChanged();
    }
    return;
  }
  storage_->run(
      [id = *current](ConversationStore& s) -> Result<std::vector<storage::LibraryId>> {
        HEARTH_CHECK(need_database(s));
        return storage::Sources(*s.database()).attached(storage::ConversationId(id.value));
      },
      this,
      [this, id = *current](Result<std::vector<storage::LibraryId>> ids) {
        if (!open_ || !open_->shows(id)) return;  // another conversation opened meanwhile
        attached_.clear();
        if (ids.ok()) {
          for (storage::LibraryId l : *ids) attached_.append(QVariant::fromValue<qint64>(l.value()));
        }
        emit attachedChanged();
      });
}

void DocumentsController::attach(qint64 library) { set_attached(library, true); }

void DocumentsController::detach(qint64 library) { set_attached(library, false); }

void DocumentsController::set_attached(qint64 library, bool attached) {
  const std::optional<ConversationKey> current = open_ ? open_->current() : std::nullopt;
  if (!current) {
    if (attached) emit errorOccurred(tr("Send a first message, then attach documents to the conversation."));
    return;
  }
  storage_->run(
      [id = *current, library, attached](ConversationStore& s) -> Status {
        HEARTH_CHECK(need_database(s));
        storage::Sources sources(*s.database());
        const storage::ConversationId conversation(id.value);
        return attached ? sources.attach(conversation, storage::LibraryId(library))
                        : sources.detach(conversation, storage::LibraryId(library));
      },
      this,
      [this](Status done) {
        if (!done.ok()) emit errorOccurred(QString::fromStdString(done.error().message));
        load_attached();
      });
}

}  // namespace hearth::ui
