// The app's conversation database is opened by the storage thread's first job,
// not by the thread that builds the app (the GUI thread), and is a real file.
#include <QFile>
#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "gui/deferred_store.h"
#include "store/sqlite_conversation_store.h"
#include "store/storage_executor.h"

namespace hearth::app {
namespace {

TEST(DeferredStore, OpensTheDatabaseOnTheStorageThread) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString file = dir.filePath(QStringLiteral("hearth.sqlite3"));
  std::optional<std::thread::id> opened_on;
  std::optional<bool> persistent;
  auto store = std::make_unique<DeferredStore>(
      [&] {
        opened_on = std::this_thread::get_id();
        return open_conversation_store(dir.path());
      },
      [&](const OpenedStore& opened) { persistent = opened.persistent; });
  EXPECT_FALSE(QFile::exists(file));  // building it opens nothing

  {
    ui::StorageExecutor storage(std::move(store));
    EXPECT_FALSE(opened_on.has_value());
    storage.write([](ui::ConversationStore& s) -> Status {
      auto created = s.create_conversation("kept on disk");
      if (!created.ok()) return created.take_error();
      return {};
    });
    storage.drain();  // orders the storage thread's writes before the reads below
    ASSERT_TRUE(opened_on.has_value());
    EXPECT_NE(*opened_on, std::this_thread::get_id());
    EXPECT_EQ(persistent, std::optional<bool>(true));
  }

  auto reopened = ui::SqliteConversationStore::open(file.toStdString());
  ASSERT_TRUE(reopened.ok()) << reopened.error().message;
  auto list = (*reopened)->list_conversations(ui::ArchiveFilter::ActiveOnly);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].title, "kept on disk");
}

}  // namespace
}  // namespace hearth::app
