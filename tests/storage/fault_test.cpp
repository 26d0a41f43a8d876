// Fault injection: a scripted session runs against a VFS that fails the Nth write
// (I/O error or full disk) or the Nth fsync, for every N the session reaches. Each
// run must fail with a clear error and, reopened without faults, the database must
// be intact and hold exactly the state after the last step that succeeded (or,
// since a failed fsync may still have written its data, after the failing step).
#include <sqlite3.h>

#include <fstream>
#include <functional>
#include <iterator>

#include "fault_vfs.h"
#include "hearth/storage/catalog.h"
#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::Fault;
using testing::ManualClock;
using testing::TempDir;

// Everything the user could lose, read with a plain connection. Recovery turns
// streaming replies into interrupted ones (with a new updated_ms), so those are
// folded together.
std::string dump(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::string out;
  auto collect = [](void* sink, int columns, char** values, char**) {
    auto* text = static_cast<std::string*>(sink);
    for (int i = 0; i < columns; ++i) *text += (values[i] != nullptr ? values[i] : "NULL") + std::string("|");
    *text += '\n';
    return 0;
  };
  const char* queries[] = {
      "SELECT * FROM conversations ORDER BY id",
      "SELECT id, conversation_id, parent_id, role, content, created_ms, "
      "  CASE WHEN state IN ('streaming', 'interrupted') THEN 'interrupted' ELSE state END, "
      "  CASE WHEN state IN ('streaming', 'interrupted') THEN NULL ELSE updated_ms END, "
      "  error_message, token_count, ttft_ms, tokens_per_second, backend FROM messages ORDER BY id",
      "SELECT * FROM prompt_presets ORDER BY id",
      "SELECT * FROM models ORDER BY id",
      "SELECT * FROM context_events ORDER BY id",
      "SELECT * FROM prefix_cache ORDER BY id",
      "SELECT rowid FROM message_fts WHERE message_fts MATCH 'alpha OR beta OR gamma' ORDER BY rowid",
  };
  for (const char* sql : queries) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql, collect, &out, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    out += "--\n";
  }
  sqlite3_close(db);
  return out;
}

// FTS5's own consistency check of the index against the messages table.
bool fts_consistent(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  const int a = sqlite3_exec(db, "INSERT INTO message_fts(message_fts) VALUES ('integrity-check')", nullptr, nullptr, nullptr);
  const int b = sqlite3_exec(db, "INSERT INTO conversation_fts(conversation_fts) VALUES ('integrity-check')", nullptr,
                             nullptr, nullptr);
  sqlite3_close(db);
  return a == SQLITE_OK && b == SQLITE_OK;
}

struct Ids {
  ConversationId conversation;
  MessageId question, reply, edited, reply2;
  PresetId preset;
};

using Step = std::function<Status(Database&, Ids&)>;

template <typename T>
Status assign(Result<T> result, T& out) {
  if (!result.ok()) return result.take_error();
  out = *result;
  return {};
}

// A session touching every kind of write the app makes.
std::vector<Step> script() {
  return {
      [](Database& db, Ids& ids) { return assign(Conversations(db).create({"alpha trip", "m.gguf", "Q8_0", "sys", {}}), ids.conversation); },
      [](Database& db, Ids& ids) {
        return assign(Messages(db).append(ids.conversation, MessageId{}, {Role::User, "alpha question", 2}), ids.question);
      },
      [](Database& db, Ids& ids) { return assign(Messages(db).begin_reply(ids.conversation, ids.question), ids.reply); },
      [](Database& db, Ids& ids) { return Messages(db).update_reply(ids.reply, "beta", 1); },
      [](Database& db, Ids& ids) { return Messages(db).update_reply(ids.reply, "beta beta", 2); },
      [](Database& db, Ids& ids) {
        return Messages(db).finish_reply(ids.reply, {MessageState::Complete, "beta beta gamma", 3, {12.5, 30.0, "cpu"}, ""});
      },
      [](Database& db, Ids& ids) { return assign(Messages(db).edit(ids.question, "gamma question"), ids.edited); },
      [](Database& db, Ids& ids) { return assign(Messages(db).begin_reply(ids.conversation, ids.edited), ids.reply2); },
      [](Database& db, Ids& ids) { return Messages(db).update_reply(ids.reply2, std::string(3000, 'x') + " alpha", 900); },
      [](Database& db, Ids& ids) {
        return Messages(db).finish_reply(ids.reply2, {MessageState::Interrupted, "alpha cut", 2, {}, ""});
      },
      [](Database& db, Ids& ids) { return Conversations(db).rename(ids.conversation, "gamma trip"); },
      [](Database& db, Ids& ids) {
        ConversationSettings s;
        s.temperature = 0.5;
        return Conversations(db).set_settings(ids.conversation, s);
      },
      [](Database& db, Ids& ids) { return Messages(db).switch_to(ids.question); },
      [](Database& db, Ids& ids) {
        auto r = ContextEvents(db).add(ids.conversation, {ContextEventKind::Summarized, ids.question, ids.reply, 5, "beta"});
        return r.ok() ? Status{} : Status{r.take_error()};
      },
      [](Database& db, Ids& ids) { return assign(PromptPresets(db).create("p", "alpha"), ids.preset); },
      [](Database& db, Ids&) {
        auto r = ModelRegistry(db).upsert({"/m.gguf", 10, "ab", "", "Q8_0"});
        return r.ok() ? Status{} : Status{r.take_error()};
      },
      [](Database& db, Ids&) {
        auto r = PrefixCacheIndex(db).upsert({"ab", "h", 4, "/p.kv", 100});
        return r.ok() ? Status{} : Status{r.take_error()};
      },
      [](Database& db, Ids& ids) { return Messages(db).delete_branch(ids.edited); },
      [](Database& db, Ids& ids) { return Conversations(db).set_pinned(ids.conversation, Pinned::Yes); },
  };
}

class FaultTest : public ::testing::Test {
 protected:
  static constexpr UnixMs kStart = 1'700'000'000'000;

  void SetUp() override {
    testing::install_fault_vfs();
    baseline_ = dir_.file("baseline.db");
    ManualClock clock(kStart);
    OpenOptions options;
    options.clock = clock.function();
    auto db = Database::open(baseline_, options);
    ASSERT_TRUE(db.ok());
    // Committed before the faults start: must survive every fault.
    auto c = Conversations(*db).create({"baseline alpha", "", "", "", {}});
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(Messages(*db).append(*c, MessageId{}, {Role::User, "baseline beta", 1}).ok());
    ASSERT_TRUE(db->checkpoint().ok());
  }

  // Runs the script on a fresh copy of the baseline; returns how many steps
  // succeeded and the first error.
  struct Outcome {
    std::size_t completed = 0;
    std::optional<Error> error;
  };
  Outcome run(const std::filesystem::path& path, Fault fault, std::int64_t at,
              std::vector<std::string>* snapshots = nullptr) {
    std::filesystem::copy_file(baseline_, path, std::filesystem::copy_options::overwrite_existing);
    ManualClock clock(kStart + 1000);
    OpenOptions options;
    options.vfs = testing::kFaultVfsName;
    options.clock = clock.function();
    Outcome outcome;
    testing::arm_fault(fault, at);
    {
      auto db = Database::open(path, options);
      if (!db.ok()) {
        outcome.error = db.error();
      } else {
        Ids ids;
        for (const Step& step : script()) {
          clock.advance(10);
          Status status = step(*db, ids);
          if (!status.ok()) {
            outcome.error = status.error();
            break;
          }
          ++outcome.completed;
          if (snapshots != nullptr) snapshots->push_back(dump(path));
        }
      }
    }  // closed with the fault still armed, as with a disk that stays full
    testing::disarm_fault();
    return outcome;
  }

  void sweep(Fault fault, const char* expected_words) {
    std::vector<std::string> snapshots;
    const auto clean_path = dir_.file("clean.db");
    snapshots.push_back(dump(baseline_));
    Outcome clean = run(clean_path, Fault::None, 0, &snapshots);
    ASSERT_FALSE(clean.error.has_value()) << clean.error->message;
    ASSERT_EQ(clean.completed, script().size());
    const std::int64_t total = fault == Fault::SyncIoError ? testing::fault_vfs_syncs() : testing::fault_vfs_writes();
    ASSERT_GT(total, 5);

    int failures = 0;
    for (std::int64_t at = 1; at <= total; ++at) {
      SCOPED_TRACE("fault at operation " + std::to_string(at) + " of " + std::to_string(total));
      const auto path = dir_.file("faulty.db");
      Outcome outcome = run(path, fault, at);
      if (outcome.error) {
        ++failures;
        EXPECT_NE(outcome.error->message.find(expected_words), std::string::npos) << outcome.error->message;
        EXPECT_NE(outcome.error->message.find(path.string()), std::string::npos) << outcome.error->message;
        EXPECT_EQ(outcome.error->code, ErrorCode::Io) << outcome.error->message;
      }
      // Reopen on a healthy disk: recovery, integrity, and nothing committed lost.
      {
        auto db = Database::open(path);
        ASSERT_TRUE(db.ok()) << db.error().message;
        ASSERT_TRUE(db->integrity_check().ok());
      }
      EXPECT_TRUE(fts_consistent(path));
      const std::string state = dump(path);
      const std::size_t done = outcome.completed;
      const bool matches = state == snapshots[done] || (done + 1 < snapshots.size() && state == snapshots[done + 1]);
      EXPECT_TRUE(matches) << "after " << done << " completed steps the database holds:\n"
                           << state << "\nexpected:\n"
                           << snapshots[done];
      if (::testing::Test::HasFailure()) return;  // one detailed failure is enough
    }
    // Most faults must surface as errors (a few only hit checkpoints after a commit).
    EXPECT_GT(failures, total / 2);
  }

  // fsync is the slow part of the sweep and is not what is tested (the shim decides
  // whether it fails), so use a memory-backed folder where there is one.
  TempDir dir_{std::filesystem::exists("/dev/shm") ? std::filesystem::path("/dev/shm")
                                                    : std::filesystem::temp_directory_path()};
  std::filesystem::path baseline_;
};

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(FaultTest, ReadOnlyFileIsAClearErrorAndStaysUntouched) {
  const auto path = dir_.file("readonly.db");
  std::filesystem::copy_file(baseline_, path);
  const std::string before = file_bytes(path);
  testing::set_read_only_files(true);
  OpenOptions options;
  options.vfs = testing::kFaultVfsName;
  auto db = Database::open(path, options);
  testing::set_read_only_files(false);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::Io);
  EXPECT_NE(db.error().message.find("cannot be written"), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("read-only"), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find(path.string()), std::string::npos) << db.error().message;
  EXPECT_TRUE(file_bytes(path) == before);
  EXPECT_TRUE(std::filesystem::exists(path));  // not moved aside: it is not damaged
}

// Opening a version 1 database migrates it; a full disk at any write of the
// migration must leave either the old version with its data or the new one.
TEST_F(FaultTest, DiskFullDuringMigrationKeepsTheOldVersion) {
  const auto fixture = std::filesystem::path(HEARTH_TEST_DATA_DIR) / "storage" / "v1.db";
  const auto path = dir_.file("v1.db");
  std::filesystem::copy_file(fixture, path);
  OpenOptions options;
  options.vfs = testing::kFaultVfsName;
  testing::arm_fault(Fault::None, 0);
  { ASSERT_TRUE(Database::open(path, options).ok()); }
  const std::int64_t total = testing::fault_vfs_writes();
  ASSERT_GT(total, 3);
  int failures = 0;
  for (std::int64_t at = 1; at <= total; ++at) {
    SCOPED_TRACE("disk full at write " + std::to_string(at) + " of " + std::to_string(total));
    std::filesystem::remove(path);
    std::filesystem::remove(path.string() + "-wal");
    std::filesystem::remove(path.string() + "-shm");
    std::filesystem::copy_file(fixture, path);
    testing::arm_fault(Fault::DiskFull, at);
    {
      auto db = Database::open(path, options);
      if (!db.ok()) {
        ++failures;
        EXPECT_NE(db.error().message.find("the disk is full"), std::string::npos) << db.error().message;
        EXPECT_TRUE(std::filesystem::exists(path));  // a full disk is not corruption
      }
    }
    testing::disarm_fault();
    auto db = Database::open(path);
    ASSERT_TRUE(db.ok()) << db.error().message;
    ASSERT_TRUE(db->integrity_check().ok());
    EXPECT_EQ(db->open_report().schema_version, Database::kSchemaVersion);
    EXPECT_TRUE(db->open_report().schema_version_found == 1 ||
                db->open_report().schema_version_found == Database::kSchemaVersion);
    auto c = Conversations(*db).get(ConversationId{1});
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->title, "Trip to Kraków");
    auto m = Messages(*db).get(MessageId{2});
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(m->content, "The EuroCity from Vienna, about seven hours.");
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GT(failures, 0);
}

TEST_F(FaultTest, DiskFullAtEveryWrite) { sweep(Fault::DiskFull, "the disk is full"); }
TEST_F(FaultTest, IoErrorAtEveryWrite) { sweep(Fault::WriteIoError, "I/O error"); }
TEST_F(FaultTest, IoErrorAtEveryFsync) { sweep(Fault::SyncIoError, "I/O error"); }

}  // namespace
}  // namespace hearth::storage
