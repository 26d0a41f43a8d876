// The per-conversation overflow policy: optional (unset follows the app's global
// setting), kept across reopening a database file, and read back from rows and
// export documents written by earlier versions, which always stored an "overflow" key.
#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include "hearth/storage/archive.h"
#include "hearth/storage/conversations.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::TempDir;

const std::filesystem::path kFixtures = std::filesystem::path(HEARTH_TEST_DATA_DIR) / "storage";

// Runs SQL on a file with a plain connection, bypassing the library; returns the
// first column of the last row.
std::string raw_sql(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::string out;
  char* error = nullptr;
  const int rc = sqlite3_exec(
      db, sql.c_str(),
      [](void* sink, int, char** values, char**) {
        *static_cast<std::string*>(sink) = values[0] != nullptr ? values[0] : "NULL";
        return 0;
      },
      &out, &error);
  EXPECT_EQ(rc, SQLITE_OK) << (error != nullptr ? error : "") << " in " << sql;
  sqlite3_free(error);
  sqlite3_close(db);
  return out;
}

// Rows as the first released schema (version 1) wrote them: every conversation had
// an "overflow" key, "stop" being the value of those nobody had chosen a policy for.
TEST(OverflowSetting, OldFormatRowsLoadAfterMigration) {
  TempDir dir;
  const auto path = dir.file("v1.db");
  std::filesystem::copy_file(kFixtures / "v1.db", path);
  raw_sql(path,
          "INSERT INTO conversations (id, created_ms, updated_ms, settings_json) VALUES "
          "(10, 1, 1, '{\"overflow\":\"stop\"}'), "
          "(11, 1, 1, '{\"temperature\":0.5,\"overflow\":\"summarize\"}'), "
          "(12, 1, 1, '{\"top_k\":7}')");
  HEARTH_ASSERT_VALUE(Database db, Database::open(path));
  ASSERT_EQ(db.open_report().schema_version_found, 1);
  Conversations conversations(db);

  // The fixture's own row (tests/data/storage/v1.sql) chose evict_oldest.
  HEARTH_ASSERT_VALUE(Conversation fixture, conversations.get(ConversationId{1}));
  EXPECT_EQ(fixture.settings.overflow, std::optional(OverflowPolicy::EvictOldest));
  HEARTH_ASSERT_VALUE(Conversation empty, conversations.get(ConversationId{2}));
  EXPECT_EQ(empty.settings.overflow, std::nullopt);  // '{}'

  HEARTH_ASSERT_VALUE(Conversation old_stop, conversations.get(ConversationId{10}));
  EXPECT_EQ(old_stop.settings.overflow, std::nullopt);
  HEARTH_ASSERT_VALUE(Conversation old_summary, conversations.get(ConversationId{11}));
  EXPECT_EQ(old_summary.settings.overflow, std::optional(OverflowPolicy::Summarize));
  EXPECT_EQ(old_summary.settings.temperature, 0.5);
  HEARTH_ASSERT_VALUE(Conversation missing, conversations.get(ConversationId{12}));
  EXPECT_EQ(missing.settings.overflow, std::nullopt);
  EXPECT_EQ(missing.settings.top_k, 7);
}

TEST(OverflowSetting, EveryChoiceSurvivesReopeningTheFile) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  const std::optional<OverflowPolicy> choices[] = {std::nullopt, OverflowPolicy::StopAtLimit,
                                                   OverflowPolicy::EvictOldest, OverflowPolicy::Summarize};
  std::vector<ConversationId> ids;
  {
    HEARTH_ASSERT_VALUE(Database db, Database::open(path));
    Conversations conversations(db);
    for (const auto& choice : choices) {
      HEARTH_ASSERT_VALUE(ConversationId id, conversations.create({}));
      ConversationSettings settings;
      settings.overflow = choice;
      HEARTH_ASSERT_OK(conversations.set_settings(id, settings));
      ids.push_back(id);
    }
  }
  HEARTH_ASSERT_VALUE(Database db, Database::open(path));
  for (std::size_t i = 0; i < ids.size(); ++i) {
    HEARTH_ASSERT_VALUE(Conversation c, Conversations(db).get(ids[i]));
    EXPECT_EQ(c.settings.overflow, choices[i]) << "conversation " << i;
  }
}

TEST(OverflowSetting, StoredJsonNamesTheChoiceAndOmitsUnset) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  ConversationId stop_id;
  ConversationId unset_id;
  {
    HEARTH_ASSERT_VALUE(Database db, Database::open(path));
    Conversations conversations(db);
    NewConversation stop;
    stop.settings.overflow = OverflowPolicy::StopAtLimit;
    HEARTH_ASSERT_VALUE(stop_id, conversations.create(stop));
    HEARTH_ASSERT_VALUE(unset_id, conversations.create({}));
  }
  const auto json_of = [&](ConversationId id) {
    return nlohmann::json::parse(
        raw_sql(path, "SELECT settings_json FROM conversations WHERE id = " + std::to_string(id.value())));
  };
  // An explicit "stop" must not look like a row of an earlier version.
  const auto stop = json_of(stop_id);
  EXPECT_EQ(stop.value("overflow_policy", ""), "stop");
  EXPECT_FALSE(stop.contains("overflow"));
  const auto unset = json_of(unset_id);
  EXPECT_FALSE(unset.contains("overflow_policy"));
  EXPECT_FALSE(unset.contains("overflow"));
}

TEST(OverflowSetting, TheCurrentKeyWinsOverTheLegacyOne) {
  HEARTH_ASSERT_VALUE(ConversationSettings s,
                      settings_from_json(R"({"overflow":"summarize","overflow_policy":"stop"})"));
  EXPECT_EQ(s.overflow, std::optional(OverflowPolicy::StopAtLimit));
}

TEST(OverflowSetting, BadValuesNameTheKey) {
  for (const char* json : {R"({"overflow_policy":"sometimes"})", R"({"overflow_policy":3})",
                           R"({"overflow":"sometimes"})"}) {
    auto s = settings_from_json(json);
    ASSERT_FALSE(s.ok()) << json;
    EXPECT_EQ(s.error().code, ErrorCode::InvalidFormat);
    EXPECT_NE(s.error().message.find("settings.overflow"), std::string::npos) << s.error().message;
  }
}

// An export written by an earlier version carries "overflow" in every conversation.
TEST(OverflowSetting, ImportReadsOldExportsAndExportKeepsTheChoice) {
  HEARTH_ASSERT_VALUE(Database db, Database::open_in_memory());
  const std::string old_export = R"({"format":"hearth-conversations","version":1,"exported_ms":0,
    "conversations":[
      {"id":1,"title":"a","created_ms":1,"updated_ms":1,"model_file":"","model_quant":"",
       "system_prompt":"","settings":{"overflow":"stop"},"pinned":false,"archived":false,
       "active_leaf":null,"messages":[],"context_events":[]},
      {"id":2,"title":"b","created_ms":1,"updated_ms":1,"model_file":"","model_quant":"",
       "system_prompt":"","settings":{"overflow":"evict_oldest"},"pinned":false,"archived":false,
       "active_leaf":null,"messages":[],"context_events":[]}]})";
  HEARTH_ASSERT_VALUE(ImportReport report, import_json(db, old_export));
  ASSERT_EQ(report.conversations.size(), 2u);
  HEARTH_ASSERT_VALUE(Conversation a, Conversations(db).get(report.conversations[0]));
  HEARTH_ASSERT_VALUE(Conversation b, Conversations(db).get(report.conversations[1]));
  EXPECT_EQ(a.settings.overflow, std::nullopt);
  EXPECT_EQ(b.settings.overflow, std::optional(OverflowPolicy::EvictOldest));

  HEARTH_ASSERT_VALUE(std::string exported, export_json(db));
  const auto doc = nlohmann::json::parse(exported);
  ASSERT_EQ(doc["conversations"].size(), 2u);
  EXPECT_FALSE(doc["conversations"][0]["settings"].contains("overflow_policy"));
  EXPECT_EQ(doc["conversations"][1]["settings"].value("overflow_policy", ""), "evict_oldest");
}

}  // namespace
}  // namespace hearth::storage
