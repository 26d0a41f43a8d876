// Runs ConversationStore calls on a dedicated storage thread and hands the
// results back on the caller's thread, so the GUI thread never runs a query.
#pragma once

#include <QObject>
#include <QPointer>
#include <QThread>

#include <functional>
#include <memory>
#include <utility>

#include "store/conversation_store.h"

namespace hearth::ui {

class StorageExecutor : public QObject {
  Q_OBJECT

 public:
  // Takes ownership of the store; it is used (and destroyed) on the storage thread.
  explicit StorageExecutor(std::unique_ptr<ConversationStore> store, QObject* parent = nullptr);
  ~StorageExecutor() override;

  // Queues `job` on the storage thread; `done` runs later on `context`'s thread
  // with the job's result (dropped if `context` was destroyed meanwhile).
  template <typename Job, typename Done>
  void run(Job job, QObject* context, Done done) {
    QPointer<QObject> guard(context);
    post([job = std::move(job), done = std::move(done), guard](ConversationStore& store) mutable {
      auto result = job(store);
      if (!guard) return;
      QMetaObject::invokeMethod(
          guard.data(),
          [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); },
          Qt::QueuedConnection);
    });
  }

  // Queues a write whose outcome only matters when it fails.
  void write(std::function<Status(ConversationStore&)> job);

  // Blocks until every queued job has run. For shutdown and tests only, never
  // from an interactive path.
  void drain();

 signals:
  void writeFailed(const QString& message);

 private:
  void post(std::function<void(ConversationStore&)> job);

  QThread thread_;
  QObject* worker_ = nullptr;  // lives on thread_
  std::unique_ptr<ConversationStore> store_;
};

}  // namespace hearth::ui
