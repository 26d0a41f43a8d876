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

  // Queues `job` on the storage thread; `done` runs later on the GUI thread
  // with the job's result, or not at all if `context` was destroyed
  // meanwhile. `context` must live on this executor's thread.
  //
  // The result travels back through the executor itself (it outlives every
  // job: its destructor drains the queue), and whether `context` still
  // exists is asked there, on the thread that deletes it. Checking it on the
  // storage thread instead would race with the deletion: the receiver could
  // go between the check and the post.
  template <typename Job, typename Done>
  void run(Job job, QObject* context, Done done) {
    Q_ASSERT(context && context->thread() == thread());
    QPointer<QObject> guard(context);
    post([this, job = std::move(job), done = std::move(done), guard](ConversationStore& store) mutable {
      auto result = job(store);
      QMetaObject::invokeMethod(
          this,
          [done = std::move(done), result = std::move(result), guard]() mutable {
            if (guard) done(std::move(result));
          },
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
