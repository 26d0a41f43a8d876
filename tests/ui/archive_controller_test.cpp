// ArchiveController against real SQLite files on the real storage thread: 100 varied
// conversations exported to JSON and imported into a fresh database field for field,
// re-imports with each duplicate choice, the import preview, a Markdown export
// checked against text written by hand, and errors that name the file.
#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <hearth/storage/catalog.h>
#include <hearth/storage/conversations.h>
#include <hearth/storage/messages.h>

#include <atomic>
#include <memory>
#include <random>

#include "controllers/archive_controller.h"
#include "store/sqlite_conversation_store.h"

namespace hearth::ui {
namespace {

namespace st = hearth::storage;

constexpr int kConversations = 100;

// 2023-11-14 22:13:20 UTC.
constexpr st::UnixMs kStart = 1'700'000'000'000;

const std::vector<std::string> kTexts = {
    "plain question",
    "Zażółć gęślą jaźń — ünïcödé ✓",
    "emoji \xF0\x9F\x94\xA5 and CJK \xE6\xBC\xA2\xE5\xAD\x97 and RTL \xD7\xA9\xD7\x9C\xD7\x95\xD7\x9D",
    "# Heading\n\n- a list\n- **bold** and `code`\n\n```cpp\nint main() { return 0; }\n```\n| a | b |\n|---|---|",
    "quotes \" and \\ backslashes, a tab\tand\r\nwindows line ends",
    "{\"looks\": [\"like\", \"json\"]}",
    "",
};

// At most `bytes` bytes of `text`, cut at a character boundary (a cut inside a
// character would be invalid UTF-8, which an export replaces by U+FFFD).
std::string utf8_prefix(const std::string& text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  while (bytes > 0 && (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) --bytes;
  return text.substr(0, bytes);
}

// Fills a database through the storage library with a seeded mix of everything a
// conversation can hold.
class Filler {
 public:
  Filler(st::Database& db, std::atomic<st::UnixMs>& clock) : db_(db), clock_(clock) {}

  std::string text() {
    std::string t = kTexts[pick(kTexts.size())];
    if (pick(8) == 0) {
      // Long text: many kilobytes with multi-byte characters throughout.
      std::string long_text;
      for (int i = 0; i < 2000; ++i) long_text += "paragraph " + std::to_string(i) + " — ñ\n";
      t += long_text;
    }
    return t + " #" + std::to_string(rng_() % 100000);
  }

  void conversation() {
    clock_ += 1 + static_cast<st::UnixMs>(pick(5000));
    st::NewConversation c;
    c.title = pick(10) == 0 ? "" : utf8_prefix(text(), 60);
    c.model_file = pick(3) == 0 ? "" : "model-" + std::to_string(pick(5)) + ".gguf";
    c.model_quant = pick(2) ? "Q4_K_M" : "Q8_0";
    c.system_prompt = pick(2) ? text() : "";
    if (pick(2)) c.settings.temperature = 1.0 / (1 + static_cast<double>(pick(9)));
    if (pick(2)) c.settings.top_k = static_cast<std::int64_t>(pick(100));
    if (pick(2)) c.settings.seed = (static_cast<std::uint64_t>(rng_()) << 32) | rng_();
    if (const auto policy = pick(4); policy < 3) c.settings.overflow = static_cast<st::OverflowPolicy>(policy);
    auto id = st::Conversations(db_).create(c);
    ASSERT_TRUE(id.ok()) << id.error().message;
    st::Messages messages(db_);
    std::vector<st::MessageId> all;
    st::MessageId parent;
    const std::size_t turns = 1 + pick(4);
    for (std::size_t t = 0; t < turns; ++t) {
      clock_ += 1 + static_cast<st::UnixMs>(pick(100));
      auto q = messages.append(*id, parent, {st::Role::User, text(), static_cast<std::int64_t>(pick(50))});
      ASSERT_TRUE(q.ok()) << q.error().message;
      all.push_back(*q);
      auto r = messages.begin_reply(*id, *q);
      ASSERT_TRUE(r.ok()) << r.error().message;
      st::ReplyEnd end;
      end.content = text();
      end.token_count = static_cast<std::int64_t>(pick(500));
      const auto outcome = pick(6);
      end.state = outcome == 0 ? st::MessageState::Interrupted
                  : outcome == 1 ? st::MessageState::Error
                                 : st::MessageState::Complete;
      if (end.state == st::MessageState::Error) end.error_message = "device lost";
      if (pick(2)) end.stats.ttft_ms = 12.5 + static_cast<double>(pick(100));
      if (pick(2)) end.stats.tokens_per_second = 1.0 / 3.0 * static_cast<double>(1 + pick(90));
      end.stats.backend = pick(2) ? "vulkan:lavapipe" : "cpu";
      ASSERT_TRUE(messages.finish_reply(*r, end).ok());
      all.push_back(*r);
      parent = *r;
      if (pick(3) == 0) {  // an edit: a sibling branch of the question
        auto edited = messages.edit(*q, text());
        ASSERT_TRUE(edited.ok()) << edited.error().message;
        all.push_back(*edited);
        parent = *edited;
      }
    }
    if (pick(3) == 0) {
      ASSERT_TRUE(messages.switch_to(all[pick(all.size())]).ok());
    }
    if (pick(4) == 0) {
      ASSERT_TRUE(st::Conversations(db_).set_pinned(*id, st::Pinned::Yes).ok());
    }
    if (pick(5) == 0) {
      ASSERT_TRUE(st::Conversations(db_).set_archived(*id, st::Archived::Yes).ok());
    }
    if (all.size() >= 2 && pick(2)) {
      st::NewContextEvent e;
      e.kind = pick(2) ? st::ContextEventKind::Summarized : st::ContextEventKind::Dropped;
      e.first_message = all[0];
      e.last_message = all[1];
      e.tokens_removed = static_cast<std::int64_t>(pick(900));
      if (e.kind == st::ContextEventKind::Summarized) e.summary = text();
      ASSERT_TRUE(st::ContextEvents(db_).add(*id, e).ok());
    }
  }

 private:
  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }

  st::Database& db_;
  std::atomic<st::UnixMs>& clock_;
  std::mt19937 rng_{20240611};
};

st::OpenOptions clocked(std::atomic<st::UnixMs>& clock) {
  st::OpenOptions options;
  options.clock = [&clock] { return clock.load(); };
  return options;
}

// One database file with its storage thread and controller, as the app has them.
struct Side {
  explicit Side(const QString& file) {
    auto opened = SqliteConversationStore::open(file.toStdString());
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    if (!opened.ok()) return;
    storage = std::make_unique<StorageExecutor>(std::move(opened).value());
    archive = std::make_unique<ArchiveController>(storage.get());
  }
  ~Side() {
    archive.reset();
    storage.reset();
  }
  std::unique_ptr<StorageExecutor> storage;
  std::unique_ptr<ArchiveController> archive;
};

class ArchiveControllerTest : public ::testing::Test {
 protected:
  QString path(const char* name) const { return dir.filePath(QString::fromLatin1(name)); }

  void export_ok(ArchiveController& archive, const QString& file, const QString& format, qint64 which) {
    QSignalSpy done(&archive, &ArchiveController::exported);
    QSignalSpy failed(&archive, &ArchiveController::failed);
    archive.exportTo(QUrl::fromLocalFile(file), format, which);
    ASSERT_TRUE(QTest::qWaitFor([&] { return done.count() + failed.count() > 0; }, 60000));
    ASSERT_EQ(failed.count(), 0) << failed.at(0).at(0).toString().toStdString();
    EXPECT_EQ(done.at(0).at(0).toString(), file);
    EXPECT_FALSE(archive.busy());
  }

  void preview_ok(ArchiveController& archive, const QString& file) {
    QSignalSpy failed(&archive, &ArchiveController::failed);
    archive.previewImport(QUrl::fromLocalFile(file));
    ASSERT_TRUE(QTest::qWaitFor([&] { return archive.previewReady() || failed.count() > 0; }, 60000));
    ASSERT_EQ(failed.count(), 0) << failed.at(0).at(0).toString().toStdString();
    EXPECT_EQ(archive.previewFile(), file);
  }

  // Returns {conversations, messages, skipped} as the `imported` signal reports them.
  std::array<qint64, 3> import_ok(ArchiveController& archive, const QString& duplicates) {
    QSignalSpy done(&archive, &ArchiveController::imported);
    QSignalSpy failed(&archive, &ArchiveController::failed);
    archive.importPreviewed(duplicates);
    EXPECT_TRUE(QTest::qWaitFor([&] { return done.count() + failed.count() > 0; }, 60000));
    EXPECT_EQ(failed.count(), 0);
    if (done.count() != 1) return {-1, -1, -1};
    return {done.at(0).at(0).toLongLong(), done.at(0).at(1).toLongLong(), done.at(0).at(2).toLongLong()};
  }

  QTemporaryDir dir;
};

struct Snapshot {
  std::vector<st::Conversation> conversations;
  std::vector<std::vector<st::Message>> messages;
  std::vector<std::vector<st::ContextEvent>> events;
};

Snapshot read_all(const QString& file) {
  Snapshot out;
  auto db = st::Database::open(file.toStdString());
  EXPECT_TRUE(db.ok()) << db.error().message;
  if (!db.ok()) return out;
  st::ConversationPage page;
  page.filter = st::ArchiveFilter::All;
  page.limit = 1000;
  auto list = st::Conversations(*db).list(page);
  EXPECT_TRUE(list.ok());
  if (!list.ok()) return out;
  out.conversations = std::move(list).value();
  std::sort(out.conversations.begin(), out.conversations.end(),
            [](const st::Conversation& a, const st::Conversation& b) { return a.id.value() < b.id.value(); });
  for (const st::Conversation& c : out.conversations) {
    auto messages = st::Messages(*db).all(c.id);
    auto events = st::ContextEvents(*db).list(c.id);
    EXPECT_TRUE(messages.ok() && events.ok());
    out.messages.push_back(messages.ok() ? std::move(messages).value() : std::vector<st::Message>{});
    out.events.push_back(events.ok() ? std::move(events).value() : std::vector<st::ContextEvent>{});
  }
  return out;
}

// Position of `id` among `messages` (-1 for an invalid id), so trees are compared
// by shape rather than by ids, which an import renumbers.
int index_of(const std::vector<st::Message>& messages, st::MessageId id) {
  if (!id.valid()) return -1;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].id == id) return static_cast<int>(i);
  }
  return -2;  // dangling
}

// Compares conversations [offset, offset + original.size()) of `copy` with `original`.
void expect_same(const Snapshot& original, const Snapshot& copy, std::size_t offset) {
  ASSERT_GE(copy.conversations.size(), offset + original.conversations.size());
  for (std::size_t i = 0; i < original.conversations.size(); ++i) {
    SCOPED_TRACE("conversation " + std::to_string(i));
    const st::Conversation& a = original.conversations[i];
    const st::Conversation& b = copy.conversations[offset + i];
    EXPECT_EQ(a.title, b.title);
    EXPECT_EQ(a.created_ms, b.created_ms);
    EXPECT_EQ(a.updated_ms, b.updated_ms);
    EXPECT_EQ(a.model_file, b.model_file);
    EXPECT_EQ(a.model_quant, b.model_quant);
    EXPECT_EQ(a.system_prompt, b.system_prompt);
    EXPECT_TRUE(a.settings == b.settings);
    EXPECT_EQ(a.pinned, b.pinned);
    EXPECT_EQ(a.archived, b.archived);
    const auto& am = original.messages[i];
    const auto& bm = copy.messages[offset + i];
    EXPECT_EQ(index_of(am, a.active_leaf), index_of(bm, b.active_leaf));
    ASSERT_EQ(am.size(), bm.size());
    for (std::size_t m = 0; m < am.size(); ++m) {
      SCOPED_TRACE("message " + std::to_string(m));
      EXPECT_EQ(b.id, bm[m].conversation);
      EXPECT_EQ(index_of(am, am[m].parent), index_of(bm, bm[m].parent));
      EXPECT_EQ(am[m].role, bm[m].role);
      EXPECT_EQ(am[m].content, bm[m].content);
      EXPECT_EQ(am[m].created_ms, bm[m].created_ms);
      EXPECT_EQ(am[m].updated_ms, bm[m].updated_ms);
      EXPECT_EQ(am[m].state, bm[m].state);
      EXPECT_EQ(am[m].error_message, bm[m].error_message);
      EXPECT_EQ(am[m].token_count, bm[m].token_count);
      EXPECT_TRUE(am[m].stats == bm[m].stats);
    }
    const auto& ae = original.events[i];
    const auto& be = copy.events[offset + i];
    ASSERT_EQ(ae.size(), be.size());
    for (std::size_t e = 0; e < ae.size(); ++e) {
      EXPECT_EQ(ae[e].kind, be[e].kind);
      EXPECT_EQ(ae[e].created_ms, be[e].created_ms);
      EXPECT_EQ(index_of(am, ae[e].first_message), index_of(bm, be[e].first_message));
      EXPECT_EQ(index_of(am, ae[e].last_message), index_of(bm, be[e].last_message));
      EXPECT_EQ(ae[e].tokens_removed, be[e].tokens_removed);
      EXPECT_EQ(ae[e].summary, be[e].summary);
    }
  }
}

TEST_F(ArchiveControllerTest, HundredConversationsRoundTripThroughAJsonFile) {
  ASSERT_TRUE(dir.isValid());
  std::atomic<st::UnixMs> clock{kStart};
  {
    auto db = st::Database::open(path("source.sqlite3").toStdString(), clocked(clock));
    ASSERT_TRUE(db.ok()) << db.error().message;
    Filler filler(*db, clock);
    for (int i = 0; i < kConversations; ++i) {
      filler.conversation();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  const Snapshot original = read_all(path("source.sqlite3"));
  ASSERT_EQ(original.conversations.size(), std::size_t{kConversations});
  qint64 total_messages = 0;
  for (const auto& list : original.messages) total_messages += static_cast<qint64>(list.size());
  // The generator made edits (sibling branches): some message shares its parent with another.
  int siblings = 0;
  for (const auto& list : original.messages) {
    for (std::size_t a = 0; a < list.size(); ++a) {
      for (std::size_t b = a + 1; b < list.size(); ++b) {
        if (list[a].parent == list[b].parent && list[a].role == list[b].role) ++siblings;
      }
    }
  }
  EXPECT_GT(siblings, 10);

  const QString exported = path("all.json");
  {
    Side source(path("source.sqlite3"));
    ASSERT_TRUE(source.archive);
    export_ok(*source.archive, exported, QStringLiteral("json"), -1);
  }
  Side fresh(path("fresh.sqlite3"));
  ASSERT_TRUE(fresh.archive);
  preview_ok(*fresh.archive, exported);
  EXPECT_EQ(fresh.archive->previewConversations(), kConversations);
  EXPECT_EQ(fresh.archive->previewMessages(), total_messages);
  EXPECT_EQ(fresh.archive->previewExisting(), 0);
  EXPECT_EQ(import_ok(*fresh.archive, QStringLiteral("skip")), (std::array<qint64, 3>{kConversations, total_messages, 0}));
  fresh.storage->drain();
  expect_same(original, read_all(path("fresh.sqlite3")), 0);

  // The same file again: every conversation is already there.
  preview_ok(*fresh.archive, exported);
  EXPECT_EQ(fresh.archive->previewExisting(), kConversations);
  EXPECT_EQ(import_ok(*fresh.archive, QStringLiteral("skip")), (std::array<qint64, 3>{0, 0, kConversations}));
  fresh.storage->drain();
  EXPECT_EQ(read_all(path("fresh.sqlite3")).conversations.size(), std::size_t{kConversations});

  preview_ok(*fresh.archive, exported);
  EXPECT_EQ(import_ok(*fresh.archive, QStringLiteral("copies")),
            (std::array<qint64, 3>{kConversations, total_messages, 0}));
  fresh.storage->drain();
  const Snapshot doubled = read_all(path("fresh.sqlite3"));
  ASSERT_EQ(doubled.conversations.size(), std::size_t{2 * kConversations});
  expect_same(original, doubled, kConversations);
}

TEST_F(ArchiveControllerTest, MarkdownOfTheOpenConversationMatchesTheHandWrittenText) {
  ASSERT_TRUE(dir.isValid());
  std::atomic<st::UnixMs> clock{kStart};
  st::ConversationId wanted;
  {
    auto db = st::Database::open(path("md.sqlite3").toStdString(), clocked(clock));
    ASSERT_TRUE(db.ok()) << db.error().message;
    st::NewConversation other;
    other.title = "Not exported";
    ASSERT_TRUE(st::Conversations(*db).create(other).ok());
    st::NewConversation c;
    c.title = "Fox dens";
    c.model_file = "tiny.gguf";
    c.model_quant = "Q8_0";
    c.system_prompt = "Be brief.\nUse Markdown.";
    auto id = st::Conversations(*db).create(c);
    ASSERT_TRUE(id.ok());
    wanted = *id;
    st::Messages messages(*db);
    auto q = messages.append(*id, {}, {st::Role::User, "Where do *foxes* live? 🦊", 0});
    ASSERT_TRUE(q.ok());
    auto r = messages.begin_reply(*id, *q);
    ASSERT_TRUE(r.ok());
    st::ReplyEnd end;
    end.content = "In **dens**:\n\n- burrows\n- hollow logs";
    ASSERT_TRUE(messages.finish_reply(*r, end).ok());
    auto q2 = messages.append(*id, *r, {st::Role::User, "And owls?", 0});
    ASSERT_TRUE(q2.ok());
    auto r2 = messages.begin_reply(*id, *q2);
    ASSERT_TRUE(r2.ok());
    st::ReplyEnd cut;
    cut.state = st::MessageState::Interrupted;
    cut.content = "In tree";
    ASSERT_TRUE(messages.finish_reply(*r2, cut).ok());
  }
  const QString file = path("fox.md");
  {
    // An earlier file at the target is replaced whole, not appended to.
    QFile old(file);
    ASSERT_TRUE(old.open(QIODevice::WriteOnly));
    old.write(QByteArray(100000, 'x'));
  }
  Side side(path("md.sqlite3"));
  ASSERT_TRUE(side.archive);
  export_ok(*side.archive, file, QStringLiteral("markdown"), wanted.value());

  const char* expected =
      "# Fox dens\n"
      "\n"
      "- Created: 2023-11-14 22:13 UTC\n"
      "- Updated: 2023-11-14 22:13 UTC\n"
      "- Model: tiny.gguf (Q8_0)\n"
      "\n"
      "**System prompt**\n"
      "\n"
      "> Be brief.\n"
      "> Use Markdown.\n"
      "\n"
      "## User\n"
      "\n"
      "Where do *foxes* live? 🦊\n"
      "\n"
      "## Assistant\n"
      "\n"
      "In **dens**:\n"
      "\n"
      "- burrows\n"
      "- hollow logs\n"
      "\n"
      "## User\n"
      "\n"
      "And owls?\n"
      "\n"
      "## Assistant\n"
      "\n"
      "In tree\n"
      "\n"
      "*(reply interrupted)*\n"
      "\n";
  QFile written(file);
  ASSERT_TRUE(written.open(QIODevice::ReadOnly));
  EXPECT_EQ(written.readAll().toStdString(), std::string(expected));
  // Nothing left beside it: the temporary file was renamed into place.
  EXPECT_EQ(QDir(dir.path()).entryList({QStringLiteral("fox.md*")}, QDir::Files), QStringList{QStringLiteral("fox.md")});
}

TEST_F(ArchiveControllerTest, ErrorsNameTheFileAndLeaveTheDatabaseAlone) {
  ASSERT_TRUE(dir.isValid());
  Side side(path("errors.sqlite3"));
  ASSERT_TRUE(side.archive);

  QSignalSpy failed(side.archive.get(), &ArchiveController::failed);
  const QString missing_dir = path("no-such-dir/out.json");
  side.archive->exportTo(QUrl::fromLocalFile(missing_dir), QStringLiteral("json"), -1);
  ASSERT_TRUE(failed.wait(60000));
  EXPECT_TRUE(failed.at(0).at(0).toString().contains(missing_dir)) << failed.at(0).at(0).toString().toStdString();
  EXPECT_TRUE(side.archive->lastFailed());

  const QString broken = path("broken.json");
  {
    QFile f(broken);
    ASSERT_TRUE(f.open(QIODevice::WriteOnly));
    // Valid envelope; the second message names a parent that does not come before it.
    f.write(R"({"format":"hearth-conversations","version":1,"exported_ms":0,"conversations":[
      {"title":"t","created_ms":1,"updated_ms":1,"model_file":"","model_quant":"","system_prompt":"",
       "settings":{},"pinned":false,"archived":false,"active_leaf":null,"context_events":[],
       "messages":[{"id":1,"parent":null,"role":"user","content":"a","created_ms":1,"updated_ms":1,
                    "state":"complete","error_message":"","token_count":0,"ttft_ms":null,
                    "tokens_per_second":null,"backend":""},
                   {"id":2,"parent":7,"role":"assistant","content":"b","created_ms":1,"updated_ms":1,
                    "state":"complete","error_message":"","token_count":0,"ttft_ms":null,
                    "tokens_per_second":null,"backend":""}]}]})");
  }
  side.archive->previewImport(QUrl::fromLocalFile(broken));
  ASSERT_TRUE(failed.wait(60000));
  const QString message = failed.at(1).at(0).toString();
  EXPECT_TRUE(message.contains(broken)) << message.toStdString();
  EXPECT_TRUE(message.contains(QStringLiteral("$.conversations[0].messages[1].parent"))) << message.toStdString();
  EXPECT_FALSE(side.archive->previewReady());
  side.storage->drain();
  EXPECT_TRUE(read_all(path("errors.sqlite3")).conversations.empty());
}

}  // namespace
}  // namespace hearth::ui
