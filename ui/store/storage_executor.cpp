#include "store/storage_executor.h"

#include <QSemaphore>

namespace hearth::ui {

StorageExecutor::StorageExecutor(std::unique_ptr<ConversationStore> store, QObject* parent)
    : QObject(parent), store_(std::move(store)) {
  thread_.setObjectName(QStringLiteral("hearth-storage"));
  worker_ = new QObject;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.start();
}

StorageExecutor::~StorageExecutor() {
  drain();
  // The store is destroyed on the storage thread: SQLite connections must be
  // closed by the thread that used them last.
  post([this](ConversationStore&) { store_.reset(); });
  thread_.quit();
  thread_.wait();
}

void StorageExecutor::post(std::function<void(ConversationStore&)> job) {
  QMetaObject::invokeMethod(
      worker_,
      [this, job = std::move(job)]() {
        if (store_) job(*store_);
      },
      Qt::QueuedConnection);
}

void StorageExecutor::write(std::function<Status(ConversationStore&)> job) {
  QPointer<StorageExecutor> self(this);
  post([job = std::move(job), self](ConversationStore& store) {
    Status status = job(store);
    if (!status.ok() && self) {
      const QString message = QString::fromStdString(status.error().message);
      QMetaObject::invokeMethod(self.data(), [self, message] {
        if (self) emit self->writeFailed(message);
      }, Qt::QueuedConnection);
    }
  });
}

void StorageExecutor::drain() {
  if (!thread_.isRunning()) return;
  QSemaphore done;
  QMetaObject::invokeMethod(worker_, [&done] { done.release(); }, Qt::QueuedConnection);
  done.acquire();
}

}  // namespace hearth::ui
