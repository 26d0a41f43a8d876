// StorageExecutor hands a job's result to its receiver on the GUI thread, and
// to nobody once the receiver is gone: a receiver deleted while its job runs
// on the storage thread gets nothing, and nothing touches it (run this under
// the asan preset to see a use after free, were there one). The store is the
// real SQLite store, in memory.
#include <QCoreApplication>
#include <QObject>
#include <QPointer>
#include <QSemaphore>
#include <QTest>
#include <QThread>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "store/sqlite_conversation_store.h"
#include "store/storage_executor.h"

namespace hearth::ui {
namespace {

std::unique_ptr<StorageExecutor> make_executor() {
  auto opened = SqliteConversationStore::open_in_memory();
  EXPECT_TRUE(opened.ok()) << opened.error().message;
  if (!opened.ok()) return nullptr;
  return std::make_unique<StorageExecutor>(std::move(opened).value());
}

TEST(StorageExecutor, DeliversTheResultOnTheReceiversThread) {
  auto storage = make_executor();
  ASSERT_TRUE(storage);
  QObject receiver;
  QThread* job_thread = nullptr;
  QThread* done_thread = nullptr;
  int delivered = 0;
  storage->run(
      [&](ConversationStore& s) {
        job_thread = QThread::currentThread();
        return s.create_conversation("first");
      },
      &receiver,
      [&](Result<ConversationRecord> r) {
        done_thread = QThread::currentThread();
        ++delivered;
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r->title, "first");
      });
  ASSERT_TRUE(QTest::qWaitFor([&] { return delivered == 1; }, 10000));
  EXPECT_NE(job_thread, QCoreApplication::instance()->thread());
  EXPECT_EQ(done_thread, QCoreApplication::instance()->thread());
}

// The job is held on the storage thread until the receiver has been
// deleted; its result must then be dropped.
TEST(StorageExecutor, DropsTheResultOfAReceiverDeletedWhileItsJobRuns) {
  auto storage = make_executor();
  ASSERT_TRUE(storage);
  QSemaphore started, release;
  bool delivered = false;
  auto* receiver = new QObject;
  storage->run(
      [&](ConversationStore& s) {
        started.release();
        release.acquire();
        return s.create_conversation("late");
      },
      receiver, [&](Result<ConversationRecord>) { delivered = true; });
  started.acquire();
  delete receiver;
  release.release();
  storage->drain();
  QCoreApplication::processEvents();
  QTest::qWait(0);
  EXPECT_FALSE(delivered);
  // The write itself happened: only the delivery is dropped.
  bool listed = false;
  QObject alive;
  storage->run([](ConversationStore& s) { return s.list_conversations(ArchiveFilter::ActiveOnly); }, &alive,
               [&](Result<std::vector<ConversationRecord>> list) {
                 listed = true;
                 ASSERT_TRUE(list.ok());
                 ASSERT_EQ(list->size(), 1u);
                 EXPECT_EQ(list->front().title, "late");
               });
  ASSERT_TRUE(QTest::qWaitFor([&] { return listed; }, 10000));
}

// Deletion racing the end of the job, many times over: every result of a
// deleted receiver is dropped, every other one delivered once.
TEST(StorageExecutor, ReceiversDeletedAsTheirJobsFinishNeverGetResults) {
  auto storage = make_executor();
  ASSERT_TRUE(storage);
  constexpr int kRounds = 200;
  std::atomic<int> to_deleted{0};
  int to_alive = 0;
  QObject alive;
  for (int i = 0; i < kRounds; ++i) {
    auto* doomed = new QObject;
    storage->run([](ConversationStore& s) { return s.list_conversations(ArchiveFilter::ActiveOnly); }, doomed,
                 [&](Result<std::vector<ConversationRecord>>) { ++to_deleted; });
    storage->run([](ConversationStore& s) { return s.list_conversations(ArchiveFilter::ActiveOnly); }, &alive,
                 [&](Result<std::vector<ConversationRecord>>) { ++to_alive; });
    if (i % 2 == 0) QThread::yieldCurrentThread();
    delete doomed;
  }
  storage->drain();
  ASSERT_TRUE(QTest::qWaitFor([&] { return to_alive == kRounds; }, 10000));
  EXPECT_EQ(to_deleted.load(), 0);
}

// The executor going first drops results still on their way back.
TEST(StorageExecutor, DestroyingTheExecutorDropsUndeliveredResults) {
  bool delivered = false;
  QObject receiver;
  {
    auto storage = make_executor();
    ASSERT_TRUE(storage);
    storage->run([](ConversationStore& s) { return s.list_conversations(ArchiveFilter::ActiveOnly); }, &receiver,
                 [&](Result<std::vector<ConversationRecord>>) { delivered = true; });
  }  // drained: the job ran; its result was posted to the executor, now gone
  QCoreApplication::processEvents();
  EXPECT_FALSE(delivered);
}

}  // namespace
}  // namespace hearth::ui
