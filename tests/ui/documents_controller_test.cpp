// The Documents panel's controller on a real SQLite store and real folders, with
// the chat controller and a scripted engine: a folder indexes with progress, a
// library attached to a conversation grounds the next question (the request
// carries the passage, the sources are stored with the question and come back
// on reopen), a regenerated reply reuses them, and pause/cancel/resume keep what
// was indexed. Retrieval here is keyword-only (no embedding model); the engine's
// embeddings are tested in tests/engine.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <fstream>

#include "controllers/chat_controller.h"
#include "controllers/documents_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "engine/memory_sizer.h"
#include "store/sqlite_conversation_store.h"
#include "support/scripted_engine_client.h"

namespace hearth::ui {
namespace {

using Role = MessageListModel::Role;

void write(const QString& path, const std::string& text) {
  QDir().mkpath(QFileInfo(path).path());
  std::ofstream(path.toStdString(), std::ios::binary) << text;
}

class DocumentsControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder.isValid());
    auto opened = SqliteConversationStore::open_in_memory();
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    storage = std::make_unique<StorageExecutor>(std::move(opened).value());
    engine = std::make_unique<testing::ScriptedEngineClient>();
    settings = std::make_unique<SettingsController>(settings::Settings{}, nullptr, &sizer);
    model = std::make_unique<ModelController>(engine.get(), settings.get(), nullptr, QString());
    chat = std::make_unique<ChatController>(storage.get(), engine.get(), model.get(), settings.get());
    documents = std::make_unique<DocumentsController>(storage.get(), chat->conversation(), chat->reply(),
                                                      settings.get(), nullptr, nullptr);
    model->load(QStringLiteral("scripted.gguf"));
    ASSERT_TRUE(QTest::qWaitFor([&] { return model->ready(); }, 2000));
  }
  void TearDown() override {
    documents.reset();
    chat.reset();
    model.reset();
    settings.reset();
    engine.reset();
    storage.reset();
  }
  QVariant row(int r, int role) { return chat->messages()->data(chat->messages()->index(r), role); }
  QVariantMap library(int i) { return documents->libraries().value(i).toMap(); }

  QTemporaryDir folder;
  EngineMemorySizer sizer;
  std::unique_ptr<StorageExecutor> storage;
  std::unique_ptr<testing::ScriptedEngineClient> engine;
  std::unique_ptr<SettingsController> settings;
  std::unique_ptr<ModelController> model;
  std::unique_ptr<ChatController> chat;
  std::unique_ptr<DocumentsController> documents;
};

TEST_F(DocumentsControllerTest, AnAttachedLibraryGroundsTheQuestionAndTheSourcesAreStored) {
  // Many files so the whole-file rule does not apply; one answers the question.
  for (int i = 0; i < 30; ++i) {
    write(folder.filePath(QStringLiteral("notes/n%1.md").arg(i)),
          "# Note " + std::to_string(i) + "\n\nRoutine text about item " + std::to_string(i) + ".\n");
  }
  write(folder.filePath(QStringLiteral("notes/boiler.md")),
        "# Boiler\n\nIntro line.\n\n## Reset\n\nHold the red button for ten seconds to reset the boiler.\n");
  QSignalSpy indexed(documents.get(), &DocumentsController::indexed);
  documents->createLibrary(QStringLiteral("House"), QUrl::fromLocalFile(folder.filePath(QStringLiteral("notes"))));
  ASSERT_TRUE(indexed.wait(10000));
  EXPECT_EQ(documents->filesDone(), 31);
  EXPECT_EQ(documents->filesTotal(), 31);
  // The list refreshes after the run.
  ASSERT_TRUE(QTest::qWaitFor([&] { return library(0).value("documents").toInt() == 31; }, 2000));
  EXPECT_TRUE(library(0).value("keywordOnly").toBool());
  EXPECT_TRUE(documents->available());
  const qint64 lib = library(0).value("id").toLongLong();

  // A conversation exists after its first message; then the library is attached.
  QSignalSpy finished(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("Hello"));
  ASSERT_TRUE(finished.wait(3000));
  documents->attach(lib);
  ASSERT_TRUE(QTest::qWaitFor([&] { return documents->attached().contains(lib); }, 2000));

  chat->send(QStringLiteral("How do I reset the boiler?"));
  ASSERT_TRUE(finished.wait(3000));
  ASSERT_EQ(engine->requests.size(), 2);
  const QString sent = engine->requests.last().turns.last().text;
  EXPECT_TRUE(sent.contains(QStringLiteral("Hold the red button for ten seconds to reset the boiler."))) << sent.toStdString();
  EXPECT_TRUE(sent.contains(QStringLiteral("[1] boiler.md, line"))) << sent.toStdString();
  EXPECT_TRUE(sent.endsWith(QStringLiteral("Question: How do I reset the boiler?"))) << sent.toStdString();
  EXPECT_GT(chat->sourceTokens(), 0);
  // The earlier question went as written.
  EXPECT_EQ(engine->requests.last().turns[1].text, QStringLiteral("Hello"));

  // The reply shows its sources, the first being the boiler passage.
  ASSERT_EQ(chat->messages()->rowCount(), 4);
  const QVariantList sources = row(3, Role::SourcesRole).toList();
  ASSERT_FALSE(sources.isEmpty());
  const QVariantMap first = sources[0].toMap();
  EXPECT_EQ(first.value("number").toInt(), 1);
  EXPECT_TRUE(first.value("path").toString().endsWith(QStringLiteral("boiler.md")));
  EXPECT_EQ(first.value("lineFirst").toInt(), 7);
  EXPECT_TRUE(first.value("text").toString().contains(QStringLiteral("red button")));
  EXPECT_TRUE(row(2, Role::SourcesRole).toList().isEmpty());  // a question has none in this role

  // Reopened: the sources come back from the database as the model saw them.
  const qint64 conversation = chat->currentConversationId();
  chat->newConversation();
  chat->openConversation(conversation);
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat->messages()->rowCount() == 4; }, 2000));
  EXPECT_EQ(row(3, Role::SourcesRole).toList(), sources);

  // The file changes; a regenerated reply still gets the passage it was given.
  write(folder.filePath(QStringLiteral("notes/boiler.md")), "# Boiler\n\nCall the plumber.\n");
  chat->regenerate(row(3, Role::IdRole).toLongLong());
  ASSERT_TRUE(finished.wait(3000));
  EXPECT_EQ(engine->requests.last().turns.last().text, sent);
}

TEST_F(DocumentsControllerTest, ASingleSmallFileGoesInWhole) {
  write(folder.filePath(QStringLiteral("only.txt")), "Line one.\n\nLine three mentions nothing asked.\n");
  QSignalSpy indexed(documents.get(), &DocumentsController::indexed);
  documents->createLibrary(QString(), QUrl::fromLocalFile(folder.filePath(QStringLiteral("only.txt"))));
  ASSERT_TRUE(indexed.wait(10000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return documents->libraries().size() == 1; }, 2000));
  EXPECT_EQ(library(0).value("name").toString(), QStringLiteral("only.txt"));
  QSignalSpy finished(chat.get(), &ChatController::replyFinished);
  chat->send(QStringLiteral("Hi"));
  ASSERT_TRUE(finished.wait(3000));
  documents->attach(library(0).value("id").toLongLong());
  ASSERT_TRUE(QTest::qWaitFor([&] { return !documents->attached().isEmpty(); }, 2000));
  chat->send(QStringLiteral("Summarize"));  // no word in common with the file
  ASSERT_TRUE(finished.wait(3000));
  const QString sent = engine->requests.last().turns.last().text;
  EXPECT_TRUE(sent.contains(QStringLiteral("[1] only.txt, lines 1-4\nLine one.\n\nLine three mentions nothing asked.")))
      << sent.toStdString();
}

TEST_F(DocumentsControllerTest, PauseAndCancelKeepWhatWasIndexedAndAReindexFinishesIt) {
  for (int i = 0; i < 40; ++i) write(folder.filePath(QStringLiteral("d/f%1.txt").arg(i)), "text " + std::to_string(i));
  documents->createLibrary(QStringLiteral("D"), QUrl::fromLocalFile(folder.filePath(QStringLiteral("d"))));
  ASSERT_TRUE(QTest::qWaitFor([&] { return documents->filesDone() >= 5; }, 10000));
  documents->pause();
  EXPECT_TRUE(documents->paused());
  QTest::qWait(100);
  const int at_pause = documents->filesDone();
  QTest::qWait(300);
  EXPECT_LE(documents->filesDone(), at_pause + 1);  // at most the step in flight
  documents->cancel();
  EXPECT_FALSE(documents->indexing());
  ASSERT_TRUE(QTest::qWaitFor([&] { return library(0).value("documents").toInt() >= 5; }, 2000));
  const int kept = library(0).value("documents").toInt();
  EXPECT_LT(kept, 40);
  QSignalSpy indexed(documents.get(), &DocumentsController::indexed);
  documents->reindex(library(0).value("id").toLongLong());
  ASSERT_TRUE(indexed.wait(10000));
  EXPECT_EQ(documents->filesDone(), 40);
  ASSERT_TRUE(QTest::qWaitFor([&] { return library(0).value("documents").toInt() == 40; }, 2000));
}

}  // namespace
}  // namespace hearth::ui
