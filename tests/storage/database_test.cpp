#include "hearth/storage/database.h"

#include <sqlite3.h>

#include <fstream>
#include <iterator>

#include "hearth/storage/catalog.h"
#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "hearth/storage/search.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::error_code;
using testing::TempDir;

const std::filesystem::path kFixtures = std::filesystem::path(HEARTH_TEST_DATA_DIR) / "storage";

// Runs SQL on a file with a plain connection, bypassing the library.
std::string raw_query(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string out;
  sqlite3_exec(
      db, sql.c_str(),
      [](void* sink, int columns, char** values, char**) {
        auto* text = static_cast<std::string*>(sink);
        for (int i = 0; i < columns; ++i) {
          if (!text->empty()) *text += '|';
          *text += values[i] != nullptr ? values[i] : "NULL";
        }
        return 0;
      },
      &out, nullptr);
  sqlite3_close(db);
  return out;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Database, CreatesTheLatestSchemaInWalMode) {
  TempDir dir;
  {
    HEARTH_ASSERT_VALUE(Database db, Database::open(dir.file("new.db")));
    EXPECT_EQ(db.open_report().schema_version_found, 0);
    EXPECT_EQ(db.open_report().schema_version, Database::kSchemaVersion);
    EXPECT_EQ(db.access(), Access::ReadWrite);
  }
  EXPECT_EQ(raw_query(dir.file("new.db"), "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_query(dir.file("new.db"), "PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
}

TEST(Database, MigratesAnEmptyVersion0File) {
  TempDir dir;
  std::filesystem::copy_file(kFixtures / "v0.db", dir.file("v0.db"));
  ASSERT_EQ(std::filesystem::file_size(dir.file("v0.db")), 0u);
  HEARTH_ASSERT_VALUE(Database db, Database::open(dir.file("v0.db")));
  EXPECT_EQ(db.open_report().schema_version_found, 0);
  EXPECT_EQ(db.open_report().schema_version, Database::kSchemaVersion);
  HEARTH_ASSERT_OK(Conversations(db).create({}));
}

TEST(Database, MigratesTheVersion1FixtureKeepingEveryValue) {
  TempDir dir;
  std::filesystem::copy_file(kFixtures / "v1.db", dir.file("v1.db"));
  HEARTH_ASSERT_VALUE(Database db, Database::open(dir.file("v1.db")));
  EXPECT_EQ(db.open_report().schema_version_found, 1);
  EXPECT_EQ(db.open_report().schema_version, Database::kSchemaVersion);
  EXPECT_EQ(db.open_report().interrupted_replies, 1);  // message 4 was streaming
  HEARTH_ASSERT_OK(db.integrity_check());

  // Values as written in tests/data/storage/v1.sql.
  HEARTH_ASSERT_VALUE(Conversation c, Conversations(db).get(ConversationId{1}));
  EXPECT_EQ(c.title, "Trip to Kraków");
  EXPECT_EQ(c.created_ms, 1704067200000);
  EXPECT_EQ(c.updated_ms, 1704067260000);
  EXPECT_EQ(c.model_file, "tiny-llama-Q4_K_M.gguf");
  EXPECT_EQ(c.model_quant, "Q4_K_M");
  EXPECT_EQ(c.system_prompt, "You are a travel agent.");
  EXPECT_EQ(c.settings.temperature, 0.7);
  EXPECT_EQ(c.settings.top_k, 40);
  EXPECT_EQ(c.settings.seed, 42u);
  EXPECT_FALSE(c.settings.top_p.has_value());
  EXPECT_EQ(c.settings.overflow, OverflowPolicy::EvictOldest);
  EXPECT_EQ(c.pinned, Pinned::Yes);
  EXPECT_EQ(c.archived, Archived::No);
  EXPECT_EQ(c.active_leaf, MessageId{4});

  Messages messages(db);
  HEARTH_ASSERT_VALUE(auto path, messages.active_path(ConversationId{1}));
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].content, "Which bus goes to Kraków?");
  EXPECT_EQ(path[1].content, "Several buses leave");
  EXPECT_EQ(path[1].state, MessageState::Interrupted);
  HEARTH_ASSERT_VALUE(Message answer, messages.get(MessageId{2}));
  EXPECT_EQ(answer.stats.ttft_ms, 85.5);
  EXPECT_EQ(answer.stats.tokens_per_second, 31.25);
  EXPECT_EQ(answer.stats.backend, "vulkan:lavapipe");
  EXPECT_EQ(answer.token_count, 11);
  EXPECT_EQ(answer.updated_ms, 1704067210000);
  HEARTH_ASSERT_VALUE(Message failed, messages.get(MessageId{6}));
  EXPECT_EQ(failed.state, MessageState::Error);
  EXPECT_EQ(failed.error_message, "model file missing");
  HEARTH_ASSERT_VALUE(auto roots, messages.roots(ConversationId{1}));
  EXPECT_EQ(roots, (std::vector<MessageId>{MessageId{1}, MessageId{3}}));

  HEARTH_ASSERT_VALUE(Conversation archived, Conversations(db).get(ConversationId{2}));
  EXPECT_EQ(archived.archived, Archived::Yes);
  EXPECT_EQ(archived.settings, ConversationSettings{});

  HEARTH_ASSERT_VALUE(PromptPreset preset, PromptPresets(db).get(PresetId{1}));
  EXPECT_EQ(preset.name, "Travel agent");
  HEARTH_ASSERT_VALUE(ModelEntry model, ModelRegistry(db).get(ModelId{1}));
  EXPECT_EQ(model.size_bytes, 1234567);
  EXPECT_EQ(model.last_used_ms, 1704067260000);

  // The version 1 full-text index carried over.
  HEARTH_ASSERT_VALUE(auto hits, Search(db).query("krakow"));
  EXPECT_EQ(hits.size(), 3u);  // two questions and the title

  // Version 2 tables work on the migrated file.
  HEARTH_ASSERT_OK(ContextEvents(db).add(ConversationId{1}, {ContextEventKind::Dropped, MessageId{1}, MessageId{2}, 18, ""}));
  HEARTH_ASSERT_OK(PrefixCacheIndex(db).upsert({"ab", "p", 3, "/c.kv", 10}));
}

TEST(Database, RefusesANewerSchemaAndLeavesItAlone) {
  TempDir dir;
  const auto path = dir.file("future.db");
  raw_query(path, "CREATE TABLE t(x); PRAGMA user_version = 99");
  const std::string before = read_bytes(path);
  auto db = Database::open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::Unsupported);
  EXPECT_NE(db.error().message.find("schema version 99"), std::string::npos) << db.error().message;
  EXPECT_TRUE(read_bytes(path) == before);
}

TEST(Database, RefusesAnUnrelatedSqliteDatabase) {
  TempDir dir;
  const auto path = dir.file("other.db");
  raw_query(path, "CREATE TABLE invoices(id INTEGER PRIMARY KEY)");
  auto db = Database::open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::InvalidFormat);
  EXPECT_EQ(raw_query(path, "SELECT name FROM sqlite_schema"), "invoices");
}

TEST(Database, GarbageFileIsMovedAsideNeverOverwritten) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  std::string garbage;
  for (int i = 0; i < 512; ++i) garbage += "this is not an SQLite file ";
  write_bytes(path, garbage);
  OpenOptions options;
  options.clock = [] { return UnixMs{1234}; };
  auto db = Database::open(path, options);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::Corrupt);
  const auto moved = dir.file("hearth.db.corrupt-1234");
  EXPECT_NE(db.error().message.find(moved.string()), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("not a database"), std::string::npos) << db.error().message;
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(read_bytes(moved) == garbage);

  // The next open starts a new database; the moved file is untouched.
  HEARTH_ASSERT_VALUE(Database fresh, Database::open(path, options));
  EXPECT_EQ(fresh.open_report().schema_version_found, 0);
  EXPECT_TRUE(read_bytes(moved) == garbage);
}

TEST(Database, OnCorruptFailLeavesTheFileInPlace) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  write_bytes(path, std::string(4096, 'x'));
  OpenOptions options;
  options.on_corrupt = OnCorrupt::Fail;
  auto db = Database::open(path, options);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::Corrupt);
  EXPECT_NE(db.error().message.find("left in place"), std::string::npos);
  EXPECT_TRUE(read_bytes(path) == std::string(4096, 'x'));
}

TEST(Database, DamagedPagesAreFoundByTheQuickCheck) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  {
    HEARTH_ASSERT_VALUE(Database db, Database::open(path));
    HEARTH_ASSERT_VALUE(ConversationId c, Conversations(db).create({"t", "", "", "", {}}));
    HEARTH_ASSERT_VALUE(Transaction tx, Transaction::begin(db));
    MessageId parent;
    for (int i = 0; i < 200; ++i) {
      HEARTH_ASSERT_VALUE(parent, Messages(db).append(c, parent, {Role::User, std::string(300, 'a' + i % 26), 0}));
    }
    HEARTH_ASSERT_OK(tx.commit());
    HEARTH_ASSERT_OK(db.checkpoint());
  }
  // Scribble over the middle of the file, leaving the header (page 1) intact.
  std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 40000u);
  for (std::size_t i = 20000; i < 36000; ++i) bytes[i] = static_cast<char>(0xA5);
  write_bytes(path, bytes);

  OpenOptions options;
  options.integrity = IntegrityCheck::Quick;
  options.clock = [] { return UnixMs{77}; };
  auto db = Database::open(path, options);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::Corrupt);
  EXPECT_TRUE(read_bytes(dir.file("hearth.db.corrupt-77")) == bytes);
}

TEST(Database, IntegrityCheckPassesOnAHealthyDatabase) {
  TempDir dir;
  HEARTH_ASSERT_VALUE(Database db, Database::open(dir.file("ok.db")));
  HEARTH_ASSERT_OK(Conversations(db).create({}));
  HEARTH_ASSERT_OK(db.integrity_check());
}

TEST(Database, UnopenablePathIsAClearIoError) {
  TempDir dir;
  auto db = Database::open(dir.file("missing-folder/hearth.db"));
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::Io);
  EXPECT_NE(db.error().message.find("missing-folder/hearth.db"), std::string::npos) << db.error().message;
  EXPECT_NE(db.error().message.find("cannot be opened"), std::string::npos) << db.error().message;
}

TEST(Database, ReadOnlyConnectionsReadButCannotWrite) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  HEARTH_ASSERT_VALUE(Database writer, Database::open(path));
  HEARTH_ASSERT_VALUE(ConversationId id, Conversations(writer).create({"hello", "", "", "", {}}));
  OpenOptions options;
  options.access = Access::ReadOnly;
  HEARTH_ASSERT_VALUE(Database reader, Database::open(path, options));
  HEARTH_ASSERT_VALUE(Conversation c, Conversations(reader).get(id));
  EXPECT_EQ(c.title, "hello");
  auto write = Conversations(reader).create({});
  ASSERT_FALSE(write.ok());
  EXPECT_EQ(write.error().code, ErrorCode::Io);
  EXPECT_NE(write.error().message.find("read-only"), std::string::npos) << write.error().message;
  // A reader sees later commits of the writer.
  HEARTH_ASSERT_OK(Conversations(writer).rename(id, "renamed"));
  EXPECT_EQ(Conversations(reader).get(id).value().title, "renamed");
}

TEST(Database, MigratesTheVersion2FixtureKeepingEveryValueAndAddingReasoning) {
  TempDir dir;
  const auto path = dir.file("v2.db");
  std::filesystem::copy_file(kFixtures / "v2.db", path);
  {
    HEARTH_ASSERT_VALUE(Database db, Database::open(path));
    EXPECT_EQ(db.open_report().schema_version_found, 2);
    EXPECT_EQ(db.open_report().schema_version, Database::kSchemaVersion);
    EXPECT_EQ(db.open_report().interrupted_replies, 1);  // message 7 was streaming
    HEARTH_ASSERT_OK(db.integrity_check());

    // Values as written in tests/data/storage/v2.sql; the new columns have their defaults.
    HEARTH_ASSERT_VALUE(Conversation c, Conversations(db).get(ConversationId{1}));
    EXPECT_EQ(c.title, "Primes below twenty");
    EXPECT_EQ(c.created_ms, 1748736000000);
    EXPECT_EQ(c.updated_ms, 1748736090000);
    EXPECT_EQ(c.model_file, "qwen3-0.6b-Q8_0.gguf");
    EXPECT_EQ(c.model_quant, "Q8_0");
    EXPECT_EQ(c.system_prompt, "Answer briefly.");
    EXPECT_EQ(c.settings.temperature, 0.6);
    EXPECT_EQ(c.settings.top_p, 0.95);
    EXPECT_EQ(c.settings.overflow, OverflowPolicy::Summarize);
    EXPECT_EQ(c.pinned, Pinned::Yes);
    EXPECT_EQ(c.archived, Archived::No);
    EXPECT_EQ(c.active_leaf, MessageId{5});
    EXPECT_EQ(c.reasoning, ReasoningSetting::Default);
    HEARTH_ASSERT_VALUE(Conversation german, Conversations(db).get(ConversationId{2}));
    EXPECT_EQ(german.title, "Wetter in Zürich");
    EXPECT_EQ(german.archived, Archived::Yes);
    EXPECT_EQ(german.reasoning, ReasoningSetting::Default);
    HEARTH_ASSERT_VALUE(Conversation empty, Conversations(db).get(ConversationId{3}));
    EXPECT_FALSE(empty.active_leaf.valid());

    Messages messages(db);
    struct Expected {
      std::int64_t id, conversation, parent;
      Role role;
      const char* content;
      MessageState state;
      std::int64_t tokens;
    };
    const Expected expected[] = {
        {1, 1, 0, Role::User, "Which primes are below twenty?", MessageState::Complete, 8},
        {2, 1, 1, Role::Assistant, "2, 3, 5, 7, 11, 13, 17 and 19.", MessageState::Complete, 21},
        {3, 1, 1, Role::Assistant, "Eight of them: 2, 3, 5, 7, 11, 13, 17, 19.", MessageState::Complete, 25},
        {4, 1, 3, Role::User, "And below thirty?", MessageState::Complete, 5},
        {5, 1, 4, Role::Assistant, "Add 23 and 29.", MessageState::Complete, 7},
        {6, 2, 0, Role::User, "Wie wird das Wetter morgen?", MessageState::Complete, 7},
        {7, 2, 6, Role::Assistant, "Morgen wird es sonnig", MessageState::Interrupted, 5},
    };
    for (const Expected& e : expected) {
      SCOPED_TRACE("message " + std::to_string(e.id));
      HEARTH_ASSERT_VALUE(Message m, messages.get(MessageId{e.id}));
      EXPECT_EQ(m.conversation, ConversationId{e.conversation});
      EXPECT_EQ(m.parent, MessageId{e.parent});
      EXPECT_EQ(m.role, e.role);
      EXPECT_EQ(m.content, e.content);
      EXPECT_EQ(m.state, e.state);
      EXPECT_EQ(m.token_count, e.tokens);
      EXPECT_EQ(m.reasoning, "");
      EXPECT_FALSE(m.reasoning_ms.has_value());
    }
    HEARTH_ASSERT_VALUE(Message regenerated, messages.get(MessageId{3}));
    EXPECT_EQ(regenerated.created_ms, 1748736030000);
    EXPECT_EQ(regenerated.updated_ms, 1748736041000);
    EXPECT_EQ(regenerated.stats.ttft_ms, 95.75);
    EXPECT_EQ(regenerated.stats.tokens_per_second, 22.125);
    EXPECT_EQ(regenerated.stats.backend, "vulkan:lavapipe");
    HEARTH_ASSERT_VALUE(auto path_1, messages.active_path(ConversationId{1}));
    ASSERT_EQ(path_1.size(), 4u);
    EXPECT_EQ(path_1[1].id, MessageId{3});
    EXPECT_EQ(path_1[3].content, "Add 23 and 29.");

    HEARTH_ASSERT_VALUE(auto events, ContextEvents(db).list(ConversationId{1}));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kind, ContextEventKind::Summarized);
    EXPECT_EQ(events[0].first_message, MessageId{1});
    EXPECT_EQ(events[0].last_message, MessageId{3});
    EXPECT_EQ(events[0].tokens_removed, 54);
    EXPECT_EQ(events[0].summary, "Listed the primes below twenty.");
    HEARTH_ASSERT_VALUE(auto prefix, PrefixCacheIndex(db).find("c0ffee", "f00d"));
    ASSERT_TRUE(prefix.has_value());
    EXPECT_EQ(prefix->token_count, 96);
    EXPECT_EQ(prefix->file_path, "prefix-cache/c0ffee-f00d.kv");
    HEARTH_ASSERT_VALUE(PromptPreset preset, PromptPresets(db).get(PresetId{1}));
    EXPECT_EQ(preset.content, "Answer briefly.");
    HEARTH_ASSERT_VALUE(ModelEntry model, ModelRegistry(db).get(ModelId{1}));
    EXPECT_EQ(model.size_bytes, 639446688);

    // The content index carried over; the new reasoning index covers the old rows
    // (empty) and takes new reasoning.
    HEARTH_ASSERT_VALUE(auto hits, Search(db).query("zurich"));
    ASSERT_EQ(hits.size(), 1u);
    EXPECT_EQ(hits[0].field, SearchField::Title);
    HEARTH_ASSERT_VALUE(auto primes, Search(db).query("primes"));
    EXPECT_EQ(primes.size(), 2u);  // the question and the title
    HEARTH_ASSERT_VALUE(MessageId thought,
                        messages.append(ConversationId{1}, MessageId{5},
                                        {Role::Assistant, "31 too.", 3, "Thirty-one is prime: no divisor up to five.",
                                         1500.0}));
    SearchOptions with_reasoning;
    with_reasoning.include_reasoning = true;
    HEARTH_ASSERT_VALUE(auto divisor, Search(db).query("divisor", with_reasoning));
    ASSERT_EQ(divisor.size(), 1u);
    EXPECT_EQ(divisor[0].message, thought);
    HEARTH_ASSERT_OK(Conversations(db).set_reasoning(ConversationId{2}, ReasoningSetting::Off));
  }
  // Plain SQLite sees the new columns with their defaults, and both FTS indexes agree
  // with their content (FTS5 integrity-check fails the statement otherwise).
  EXPECT_EQ(raw_query(path, "PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
  EXPECT_EQ(raw_query(path, "SELECT count(*) FROM messages WHERE reasoning = '' AND reasoning_ms IS NULL"), "7");
  EXPECT_EQ(raw_query(path, "SELECT id, reasoning FROM conversations ORDER BY id"), "1|default|2|off|3|default");
  EXPECT_EQ(raw_query(path, "INSERT INTO message_fts(message_fts) VALUES ('integrity-check'); "
                            "INSERT INTO message_reasoning_fts(message_reasoning_fts) VALUES ('integrity-check'); "
                            "SELECT 'ok'"),
            "ok");
  // The CHECK constraint keeps out names ReasoningSetting does not have.
  EXPECT_EQ(raw_query(path, "UPDATE conversations SET reasoning = 'max' WHERE id = 1; "
                            "SELECT reasoning FROM conversations WHERE id = 1"),
            "");
  EXPECT_EQ(raw_query(path, "SELECT reasoning FROM conversations WHERE id = 1"), "default");
}

TEST(Database, MigratesTheVersion4FixtureKeepingEveryValueAndAddingTheSemanticCache) {
  TempDir dir;
  const auto path = dir.file("v4.db");
  std::filesystem::copy_file(kFixtures / "v4.db", path);
  {
    HEARTH_ASSERT_VALUE(Database db, Database::open(path));
    EXPECT_EQ(db.open_report().schema_version_found, 4);
    EXPECT_EQ(db.open_report().schema_version, Database::kSchemaVersion);
  }
  // The values v4.sql wrote by hand, read back with plain SQLite.
  EXPECT_EQ(raw_query(path, "PRAGMA user_version"), std::to_string(Database::kSchemaVersion));
  EXPECT_EQ(raw_query(path, "SELECT name, embedding_model, embedding_dim FROM libraries"),
            "Manuals|nomic-embed-text-v1.5.Q8_0.gguf|4");
  EXPECT_EQ(raw_query(path, "SELECT path, state FROM documents ORDER BY id"),
            "/home/user/Manuals/kettle.md|indexed|/home/user/Manuals/broken.pdf|failed");
  EXPECT_EQ(raw_query(path, "SELECT hex(data), scale FROM chunk_vectors"), "7F00810A|0.0078125");
  EXPECT_EQ(raw_query(path, "SELECT document_path, line_first, line_last FROM message_sources"),
            "/home/user/Manuals/kettle.md|3|4");
  EXPECT_EQ(raw_query(path, "SELECT reply, token_count FROM response_cache WHERE key_sha256 = 'cc33'"), "Paris.|2");
  EXPECT_EQ(raw_query(path, "SELECT rowid FROM chunk_fts WHERE chunk_fts MATCH 'vinegar'"), "1");
  EXPECT_EQ(raw_query(path, "SELECT count(*) FROM messages"), "7");
  // The new table is there, empty, and takes rows.
  EXPECT_EQ(raw_query(path, "INSERT INTO semantic_cache (model_identity, context_sha256, question, embedding, reply, "
                            "size_bytes, created_ms, last_used_ms) VALUES ('m', 'c', 'q', X'0000803F', 'r', 1, 1, 1); "
                            "SELECT count(*) FROM semantic_cache"),
            "1");
}

TEST(Database, ReadOnlyConnectionRefusesAnUnmigratedFile) {
  TempDir dir;
  for (const char* fixture : {"v1.db", "v2.db", "v3.db", "v4.db"}) {
    std::filesystem::copy_file(kFixtures / fixture, dir.file(fixture));
    OpenOptions options;
    options.access = Access::ReadOnly;
    auto db = Database::open(dir.file(fixture), options);
    ASSERT_FALSE(db.ok()) << fixture;
    EXPECT_EQ(db.error().code, ErrorCode::Unsupported);
    EXPECT_NE(db.error().message.find("needs migrating to 5"), std::string::npos) << db.error().message;
  }
  EXPECT_EQ(raw_query(dir.file("v1.db"), "PRAGMA user_version"), "1");
  EXPECT_EQ(raw_query(dir.file("v2.db"), "PRAGMA user_version"), "2");
  EXPECT_EQ(raw_query(dir.file("v3.db"), "PRAGMA user_version"), "3");
  EXPECT_EQ(raw_query(dir.file("v4.db"), "PRAGMA user_version"), "4");
  OpenOptions options;
  options.access = Access::ReadOnly;
  EXPECT_EQ(error_code(Database::open_in_memory(options)), ErrorCode::InvalidArgument);
}

TEST(Database, StreamingRepliesBecomeInterruptedOnOpen) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  MessageId reply;
  {
    HEARTH_ASSERT_VALUE(Database db, Database::open(path));
    HEARTH_ASSERT_VALUE(ConversationId c, Conversations(db).create({}));
    HEARTH_ASSERT_VALUE(MessageId q, Messages(db).append(c, MessageId{}, {Role::User, "q", 1}));
    HEARTH_ASSERT_VALUE(reply, Messages(db).begin_reply(c, q));
    HEARTH_ASSERT_OK(Messages(db).update_reply(reply, "partial answer", 2));
    // Closed without finish_reply, as after a crash.
  }
  HEARTH_ASSERT_VALUE(Database db, Database::open(path));
  EXPECT_EQ(db.open_report().interrupted_replies, 1);
  HEARTH_ASSERT_VALUE(Message m, Messages(db).get(reply));
  EXPECT_EQ(m.state, MessageState::Interrupted);
  EXPECT_EQ(m.content, "partial answer");
  EXPECT_EQ(m.token_count, 2);
}

TEST(Transaction, OuterRollbackDiscardsInnerWritesAndInnerFailureKeepsOuter) {
  HEARTH_ASSERT_VALUE(Database db, Database::open_in_memory());
  Conversations conversations(db);
  {
    HEARTH_ASSERT_VALUE(Transaction tx, Transaction::begin(db));
    HEARTH_ASSERT_OK(conversations.create({"discarded", "", "", "", {}}));
  }  // not committed
  EXPECT_EQ(conversations.count(ArchiveFilter::All).value_or(-1), 0);
  {
    HEARTH_ASSERT_VALUE(Transaction tx, Transaction::begin(db, Durability::Full));
    HEARTH_ASSERT_OK(conversations.create({"a", "", "", "", {}}));
    // A failing call inside rolls back only its own savepoint.
    EXPECT_FALSE(Messages(db).append(ConversationId{999}, MessageId{}, {Role::User, "x", 0}).ok());
    HEARTH_ASSERT_OK(conversations.create({"b", "", "", "", {}}));
    HEARTH_ASSERT_OK(tx.commit());
    EXPECT_FALSE(tx.commit().ok());
  }
  EXPECT_EQ(conversations.count(ArchiveFilter::All).value_or(-1), 2);
}

}  // namespace
}  // namespace hearth::storage
