#include "hearth/storage/archive.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <unordered_map>

#include "hearth/storage/catalog.h"
#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::error_code;
using testing::ManualClock;
using testing::StorageKind;
using testing::StorageTest;

// Texts that tend to break serialisers: quotes, backslashes, newlines, non-ASCII,
// emoji, an embedded NUL, JSON- and Markdown-looking text.
const std::vector<std::string> kTexts = {
    "plain text",
    "line one\nline two\r\n\ttabbed",
    "quotes \" and \\ backslashes \\\" mixed",
    "Zażółć gęślą jaźń — ünïcödé",
    "emoji \xF0\x9F\x94\xA5\xF0\x9F\x91\x8D and CJK \xE6\xBC\xA2\xE5\xAD\x97",
    std::string("embedded\0nul", 12),
    "{\"looks\": [\"like\", \"json\"]}",
    "# heading\n\n```cpp\nint main() {}\n```",
    "",
};

// Builds a varied database through the public API and remembers what it wrote.
class Generator {
 public:
  Generator(Database& db, ManualClock& clock, std::uint32_t seed) : db_(db), clock_(clock), rng_(seed) {}

  std::string text() {
    std::string t = kTexts[pick(kTexts.size())];
    return t + " #" + std::to_string(rng_() % 100000);
  }

  // Every conversation gets a branchy tree, streamed replies ending in each state,
  // and optional settings, pins, archives and context events.
  void conversation(std::vector<std::string>& contents_written) {
    clock_.advance(1 + pick(5000));
    NewConversation c;
    c.title = pick(10) == 0 ? "" : text();
    c.model_file = pick(3) == 0 ? "" : "model-" + std::to_string(pick(5)) + ".gguf";
    c.model_quant = pick(2) ? "Q4_K_M" : "Q8_0";
    c.system_prompt = pick(2) ? text() : "";
    if (pick(2)) c.settings.temperature = 1.0 / (1 + pick(9));  // not exactly representable in decimal
    if (pick(2)) c.settings.top_k = static_cast<std::int64_t>(pick(100));
    if (pick(2)) c.settings.top_p = 0.9 + 1e-9 * static_cast<double>(pick(1000));
    if (pick(2)) c.settings.min_p = 0.05;
    if (pick(2)) c.settings.repeat_penalty = 1.1;
    if (pick(2)) c.settings.seed = (static_cast<std::uint64_t>(rng_()) << 32) | rng_();
    if (pick(2)) c.settings.context_length = 512 * static_cast<std::int64_t>(1 + pick(64));
    // 3 of 4 pick a policy; the fourth leaves it unset (follow the app's default).
    if (const auto policy = pick(4); policy < 3) c.settings.overflow = static_cast<OverflowPolicy>(policy);
    c.reasoning = static_cast<ReasoningSetting>(pick(6));
    auto id = Conversations(db_).create(c);
    ASSERT_TRUE(id.ok());
    Messages messages(db_);

    std::vector<MessageId> all;
    MessageId parent;
    const std::size_t turns = 1 + pick(4);
    for (std::size_t t = 0; t < turns; ++t) {
      clock_.advance(1 + pick(100));
      const std::string question = text();
      auto q = messages.append(*id, parent, {Role::User, question, static_cast<std::int64_t>(pick(50))});
      ASSERT_TRUE(q.ok());
      contents_written.push_back(question);
      all.push_back(*q);
      auto r = messages.begin_reply(*id, *q);
      ASSERT_TRUE(r.ok());
      clock_.advance(1 + pick(100));
      ASSERT_TRUE(messages.update_reply(*r, "partial", 1).ok());
      ReplyEnd end;
      end.state = pick(4) == 0 ? (pick(2) ? MessageState::Interrupted : MessageState::Error) : MessageState::Complete;
      end.content = text();
      end.token_count = static_cast<std::int64_t>(pick(500));
      if (pick(3)) end.stats = {0.1 * static_cast<double>(pick(10000)), 100.0 / (1 + pick(7)), "cpu"};
      if (end.state == MessageState::Error) end.error_message = "failure " + text();
      if (pick(2)) {  // a reasoning model's reply: thinking, with or without its duration
        end.reasoning = text();
        if (pick(3)) end.reasoning_ms = 0.1 * static_cast<double>(pick(100000)) + 1.0 / (1 + pick(7));
      }
      clock_.advance(1 + pick(100));
      ASSERT_TRUE(messages.finish_reply(*r, end).ok());
      contents_written.push_back(end.content);
      all.push_back(*r);
      parent = *r;
      if (pick(4) == 0) {  // an edit: a new branch off an earlier user message
        auto edited = messages.edit(*q, text());
        ASSERT_TRUE(edited.ok());
        contents_written.push_back(messages.get(*edited).value().content);
        all.push_back(*edited);
        parent = *edited;
      }
    }
    if (pick(5) == 0) {
      ASSERT_TRUE(messages.switch_to(all.front()).ok());
    }
    if (pick(5) == 0) {
      ASSERT_TRUE(Conversations(db_).set_pinned(*id, Pinned::Yes).ok());
    }
    if (pick(7) == 0) {
      ASSERT_TRUE(Conversations(db_).set_archived(*id, Archived::Yes).ok());
    }
    if (pick(3) == 0 && all.size() >= 2) {
      ASSERT_TRUE(ContextEvents(db_)
                      .add(*id, {pick(2) ? ContextEventKind::Dropped : ContextEventKind::Summarized, all[0], all[1],
                                 static_cast<std::int64_t>(pick(1000)), pick(2) ? text() : ""})
                      .ok());
    }
  }

 private:
  std::size_t pick(std::size_t n) { return rng_() % n; }

  Database& db_;
  ManualClock& clock_;
  std::mt19937 rng_;
};

// Compares two databases conversation by conversation, in id order. Ids differ
// (the import assigns new ones), so references are compared by position.
void expect_same_content(Database& a, Database& b) {
  auto list_a = Conversations(a).list({ArchiveFilter::All, 1'000'000, 0});
  auto list_b = Conversations(b).list({ArchiveFilter::All, 1'000'000, 0});
  ASSERT_TRUE(list_a.ok() && list_b.ok());
  ASSERT_EQ(list_a->size(), list_b->size());
  std::vector<Conversation> ca = *list_a, cb = *list_b;
  auto by_id = [](const Conversation& x, const Conversation& y) { return x.id < y.id; };
  std::sort(ca.begin(), ca.end(), by_id);
  std::sort(cb.begin(), cb.end(), by_id);
  for (std::size_t i = 0; i < ca.size(); ++i) {
    SCOPED_TRACE("conversation #" + std::to_string(i));
    auto ma = Messages(a).all(ca[i].id).value();
    auto mb = Messages(b).all(cb[i].id).value();
    ASSERT_EQ(ma.size(), mb.size());
    std::unordered_map<std::int64_t, std::size_t> index_a, index_b;  // id -> position
    for (std::size_t k = 0; k < ma.size(); ++k) {
      index_a[ma[k].id.value()] = k;
      index_b[mb[k].id.value()] = k;
    }
    auto position = [](const std::unordered_map<std::int64_t, std::size_t>& index, MessageId id) -> std::int64_t {
      return id.valid() ? static_cast<std::int64_t>(index.at(id.value())) : -1;
    };
    EXPECT_EQ(position(index_a, ca[i].active_leaf), position(index_b, cb[i].active_leaf));
    Conversation expected = ca[i];
    expected.id = cb[i].id;
    expected.active_leaf = cb[i].active_leaf;
    EXPECT_EQ(expected, cb[i]);
    for (std::size_t k = 0; k < ma.size(); ++k) {
      EXPECT_EQ(position(index_a, ma[k].parent), position(index_b, mb[k].parent));
      Message m = ma[k];
      m.id = mb[k].id;
      m.conversation = mb[k].conversation;
      m.parent = mb[k].parent;
      EXPECT_EQ(m, mb[k]);
    }
    auto ea = ContextEvents(a).list(ca[i].id).value();
    auto eb = ContextEvents(b).list(cb[i].id).value();
    ASSERT_EQ(ea.size(), eb.size());
    for (std::size_t k = 0; k < ea.size(); ++k) {
      EXPECT_EQ(position(index_a, ea[k].first_message), position(index_b, eb[k].first_message));
      EXPECT_EQ(position(index_a, ea[k].last_message), position(index_b, eb[k].last_message));
      ContextEvent e = ea[k];
      e.id = eb[k].id;
      e.conversation = eb[k].conversation;
      e.first_message = eb[k].first_message;
      e.last_message = eb[k].last_message;
      EXPECT_EQ(e, eb[k]);
    }
  }
}

class ArchiveTest : public StorageTest {};

TEST_P(ArchiveTest, ExportImportOfAThousandConversationsReproducesThem) {
  std::vector<std::string> written;
  {
    // One transaction for speed; the durability of each call is not under test here.
    HEARTH_ASSERT_VALUE(Transaction tx, Transaction::begin(db()));
    Generator generator(db(), clock_, 20240101);
    for (int i = 0; i < 1000; ++i) {
      generator.conversation(written);
      if (::testing::Test::HasFatalFailure()) return;
    }
    HEARTH_ASSERT_OK(tx.commit());
  }
  HEARTH_ASSERT_VALUE(std::string json, export_json(db()));

  ManualClock other_clock(1);
  OpenOptions options;
  options.clock = other_clock.function();
  testing::TempDir dir;
  auto target = GetParam() == StorageKind::File ? Database::open(dir.file("copy.db"), options)
                                                : Database::open_in_memory(options);
  ASSERT_TRUE(target.ok());
  HEARTH_ASSERT_VALUE(ImportReport report, import_json(*target, json));
  EXPECT_EQ(report.conversations.size(), 1000u);
  expect_same_content(db(), *target);

  // Independently of the comparison above: every text the generator wrote is there.
  std::multiset<std::string> imported;
  for (ConversationId id : report.conversations) {
    auto messages = Messages(*target).all(id);
    ASSERT_TRUE(messages.ok());
    for (const Message& m : *messages) imported.insert(m.content);
  }
  EXPECT_EQ(imported.size(), written.size());
  for (const std::string& text : written) EXPECT_EQ(imported.count(text) > 0, true) << text;
  EXPECT_EQ(report.messages, static_cast<std::int64_t>(written.size()));
}

TEST_P(ArchiveTest, ImportAddsToExistingConversationsAndSelectionExportsOnlyThose) {
  HEARTH_ASSERT_VALUE(ConversationId a, Conversations(db()).create({"first", "", "", "", {}}));
  HEARTH_ASSERT_VALUE(ConversationId b, Conversations(db()).create({"second", "", "", "", {}}));
  HEARTH_ASSERT_OK(Messages(db()).append(b, MessageId{}, {Role::User, "hello", 1}));
  HEARTH_ASSERT_VALUE(std::string json, export_json(db(), {{b}}));
  HEARTH_ASSERT_VALUE(ImportReport report, import_json(db(), json));
  ASSERT_EQ(report.conversations.size(), 1u);
  EXPECT_NE(report.conversations[0], b);
  EXPECT_EQ(Conversations(db()).count(ArchiveFilter::All).value_or(-1), 3);
  EXPECT_EQ(Conversations(db()).get(report.conversations[0]).value().title, "second");
  EXPECT_EQ(Messages(db()).active_path(report.conversations[0]).value().at(0).content, "hello");
  EXPECT_EQ(Conversations(db()).get(a).value().title, "first");
}

TEST_P(ArchiveTest, BadDocumentsAreRejectedWholeWithThePathAtFault) {
  HEARTH_ASSERT_VALUE(ConversationId c, Conversations(db()).create({"c", "", "", "", {}}));
  HEARTH_ASSERT_VALUE(MessageId q, Messages(db()).append(c, MessageId{}, {Role::User, "q", 1}));
  HEARTH_ASSERT_OK(Messages(db()).append(c, q, {Role::Assistant, "a", 1}));
  HEARTH_ASSERT_VALUE(std::string good, export_json(db()));

  auto expect_error = [&](const std::string& doc, ErrorCode code, const std::string& fragment) {
    auto r = import_json(db(), doc);
    ASSERT_FALSE(r.ok()) << fragment;
    EXPECT_EQ(r.error().code, code);
    EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
    EXPECT_EQ(Conversations(db()).count(ArchiveFilter::All).value_or(-1), 1);  // nothing half-imported
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string doc = good;
    const auto at = doc.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return doc.replace(at, from.size(), to);
  };
  expect_error("{not json", ErrorCode::InvalidFormat,
               "not valid JSON at byte 2 (line 1, column 3): syntax error while parsing object key - invalid literal");
  expect_error("[]", ErrorCode::InvalidFormat, "not a JSON object");
  expect_error(replaced("\"hearth-conversations\"", "\"other\""), ErrorCode::InvalidFormat, "$.format");
  expect_error(replaced("\"version\": 1", "\"version\": 7"), ErrorCode::Unsupported, "version 7");
  expect_error(replaced("\"role\": \"assistant\"", "\"role\": \"robot\""), ErrorCode::InvalidFormat,
               "$.conversations[0].messages[1].role");
  expect_error(replaced("\"role\": \"assistant\"", "\"role\": 3"), ErrorCode::InvalidFormat,
               "$.conversations[0].messages[1].role has type number");
  expect_error(replaced("\"title\": \"c\",", ""), ErrorCode::InvalidFormat, "$.conversations[0].title is missing");
  expect_error(replaced("\"parent\": " + std::to_string(q.value()), "\"parent\": 999"), ErrorCode::InvalidFormat,
               "$.conversations[0].messages[1].parent refers to message 999");
  // The conversation has no settings of its own, so its settings object is empty.
  expect_error(replaced("\"settings\": {}", "\"settings\": {\"overflow_policy\": \"explode\"}"),
               ErrorCode::InvalidFormat, "$.conversations[0].settings");
  // Two conversations where the second is bad: the first is not kept either.
  auto doc = nlohmann::json::parse(good);
  auto broken = doc["conversations"][0];
  broken.erase("title");
  doc["conversations"].push_back(broken);
  expect_error(doc.dump(), ErrorCode::InvalidFormat, "$.conversations[1].title is missing");
}

TEST_P(ArchiveTest, ImportsTheDocumentedExample) {
  std::ifstream in(std::filesystem::path(HEARTH_TEST_DATA_DIR) / "storage" / "export-example.json");
  const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(json.empty());
  HEARTH_ASSERT_VALUE(ImportReport report, import_json(db(), json));
  ASSERT_EQ(report.conversations.size(), 1u);
  EXPECT_EQ(report.messages, 4);
  HEARTH_ASSERT_VALUE(Conversation c, Conversations(db()).get(report.conversations[0]));
  EXPECT_EQ(c.title, "Trains to Kraków");
  EXPECT_EQ(c.created_ms, 1704067200000);
  EXPECT_EQ(c.updated_ms, 1704067260000);
  EXPECT_EQ(c.settings.temperature, 0.7);
  EXPECT_EQ(c.settings.seed, 42u);
  EXPECT_FALSE(c.settings.top_k.has_value());
  EXPECT_EQ(c.settings.overflow, OverflowPolicy::EvictOldest);
  EXPECT_EQ(c.pinned, Pinned::Yes);
  EXPECT_EQ(c.reasoning, ReasoningSetting::On);
  HEARTH_ASSERT_VALUE(auto path, Messages(db()).active_path(c.id));
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0].content, "Which bus goes to Kraków?");
  EXPECT_EQ(path[1].content, "Several buses leave");
  EXPECT_EQ(path[1].state, MessageState::Interrupted);
  EXPECT_EQ(path[1].stats.backend, "cpu");
  EXPECT_EQ(path[1].reasoning, "");  // the document leaves the optional keys out here
  EXPECT_FALSE(path[1].reasoning_ms.has_value());
  HEARTH_ASSERT_VALUE(auto roots, Messages(db()).roots(c.id));
  ASSERT_EQ(roots.size(), 2u);
  HEARTH_ASSERT_VALUE(auto first_children, Messages(db()).children(roots[0]));
  ASSERT_EQ(first_children.size(), 1u);
  HEARTH_ASSERT_VALUE(Message answer, Messages(db()).get(first_children[0]));
  EXPECT_EQ(answer.stats.ttft_ms, 85.5);
  EXPECT_EQ(answer.stats.tokens_per_second, 31.25);
  EXPECT_EQ(answer.reasoning, "Vienna has a direct EuroCity to Kraków.");
  EXPECT_EQ(answer.reasoning_ms, 640.5);
  HEARTH_ASSERT_VALUE(auto events, ContextEvents(db()).list(c.id));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ContextEventKind::Summarized);
  EXPECT_EQ(events[0].first_message, roots[0]);
  EXPECT_EQ(events[0].last_message, answer.id);
  EXPECT_EQ(events[0].tokens_removed, 13);
  EXPECT_EQ(events[0].summary, "Asked about trains; EuroCity from Vienna.");
}

// Reasoning, its duration and the conversation's switch survive an export and an
// import exactly; an export written before they existed still imports.
TEST_P(ArchiveTest, JsonCarriesReasoning) {
  NewConversation nc;
  nc.title = "Thinking";
  nc.reasoning = ReasoningSetting::Medium;
  HEARTH_ASSERT_VALUE(ConversationId c, Conversations(db()).create(nc));
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId q, messages.append(c, MessageId{}, {Role::User, "Why?", 1}));
  const std::string thought = "First: \"quotes\", \\ and\nnewlines; then </details> and \xF0\x9F\xA4\x94.";
  HEARTH_ASSERT_VALUE(MessageId a, messages.append(c, q, {Role::Assistant, "Because.", 2, thought, 1.0 / 3.0}));
  HEARTH_ASSERT_VALUE(MessageId unknown, messages.append(c, a, {Role::Assistant, "No timing.", 2, "brief", std::nullopt}));
  HEARTH_ASSERT_VALUE(std::string json, export_json(db(), {{c}}));

  // The document holds the values under the documented keys.
  const auto doc = nlohmann::json::parse(json);
  const auto& jc = doc["conversations"][0];
  EXPECT_EQ(jc["reasoning"], "medium");
  EXPECT_EQ(jc["messages"][0]["reasoning"], "");
  EXPECT_TRUE(jc["messages"][0]["reasoning_ms"].is_null());
  EXPECT_EQ(jc["messages"][1]["reasoning"], thought);
  EXPECT_EQ(jc["messages"][1]["reasoning_ms"].get<double>(), 1.0 / 3.0);
  EXPECT_EQ(jc["messages"][2]["reasoning"], "brief");
  EXPECT_TRUE(jc["messages"][2]["reasoning_ms"].is_null());

  HEARTH_ASSERT_VALUE(ImportReport report, import_json(db(), json));
  ASSERT_EQ(report.conversations.size(), 1u);
  HEARTH_ASSERT_VALUE(Conversation copy, Conversations(db()).get(report.conversations[0]));
  EXPECT_EQ(copy.reasoning, ReasoningSetting::Medium);
  HEARTH_ASSERT_VALUE(auto path, messages.active_path(copy.id));
  ASSERT_EQ(path.size(), 3u);
  EXPECT_EQ(path[0].reasoning, "");
  EXPECT_FALSE(path[0].reasoning_ms.has_value());
  EXPECT_EQ(path[1].reasoning, thought);
  EXPECT_EQ(path[1].reasoning_ms, 1.0 / 3.0);  // bit-exact
  EXPECT_EQ(path[2].reasoning, "brief");
  EXPECT_FALSE(path[2].reasoning_ms.has_value());
  (void)unknown;

  // Without the keys (an export made before reasoning existed): the defaults.
  auto old = doc;
  old["conversations"][0].erase("reasoning");
  for (auto& jm : old["conversations"][0]["messages"]) {
    jm.erase("reasoning");
    jm.erase("reasoning_ms");
  }
  HEARTH_ASSERT_VALUE(ImportReport old_report, import_json(db(), old.dump()));
  HEARTH_ASSERT_VALUE(Conversation plain, Conversations(db()).get(old_report.conversations.at(0)));
  EXPECT_EQ(plain.reasoning, ReasoningSetting::Default);
  HEARTH_ASSERT_VALUE(auto plain_path, messages.active_path(plain.id));
  ASSERT_EQ(plain_path.size(), 3u);
  EXPECT_EQ(plain_path[1].content, "Because.");
  EXPECT_EQ(plain_path[1].reasoning, "");
  EXPECT_FALSE(plain_path[1].reasoning_ms.has_value());

  // Present but wrong: refused with the path at fault, nothing imported.
  const std::int64_t before = Conversations(db()).count(ArchiveFilter::All).value_or(-1);
  auto expect_error = [&](nlohmann::json bad, const std::string& fragment) {
    auto r = import_json(db(), bad.dump());
    ASSERT_FALSE(r.ok()) << fragment;
    EXPECT_EQ(r.error().code, ErrorCode::InvalidFormat);
    EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
    EXPECT_EQ(Conversations(db()).count(ArchiveFilter::All).value_or(-1), before);
  };
  auto bad = doc;
  bad["conversations"][0]["reasoning"] = "max";
  expect_error(bad, "$.conversations[0].reasoning is invalid: unknown reasoning setting 'max'");
  bad = doc;
  bad["conversations"][0]["reasoning"] = true;
  expect_error(bad, "$.conversations[0].reasoning has type boolean");
  bad = doc;
  bad["conversations"][0]["messages"][1]["reasoning"] = nullptr;
  expect_error(bad, "$.conversations[0].messages[1].reasoning has type null");
  bad = doc;
  bad["conversations"][0]["messages"][1]["reasoning_ms"] = "2 s";
  expect_error(bad, "$.conversations[0].messages[1].reasoning_ms has type string");
}

TEST_P(ArchiveTest, MarkdownFoldsReasoningBeforeTheAnswer) {
  NewConversation nc;
  nc.title = "Primes";
  HEARTH_ASSERT_VALUE(ConversationId c, Conversations(db()).create(nc));
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId q, messages.append(c, MessageId{}, {Role::User, "Is 91 prime?", 4}));
  HEARTH_ASSERT_VALUE(MessageId a, messages.append(c, q, {Role::Assistant, "No: **7 x 13**.", 6,
                                                          "Try 7.\n\n</DETAILS> is not the end; 7 x 13 = 91.",
                                                          12'400.0}));
  HEARTH_ASSERT_VALUE(MessageId q2, messages.append(c, a, {Role::User, "And 97?", 3}));
  HEARTH_ASSERT_VALUE(MessageId a2, messages.append(c, q2, {Role::Assistant, "Prime.", 1, "No divisor up to 9.", 3'460.0}));
  HEARTH_ASSERT_VALUE(MessageId q3, messages.append(c, a2, {Role::User, "And 101?", 3}));
  HEARTH_ASSERT_VALUE(MessageId a3, messages.append(c, q3, {Role::Assistant, "Prime too.", 2, "Long check.", 125'300.0}));
  HEARTH_ASSERT_VALUE(MessageId q4, messages.append(c, a3, {Role::User, "And 1?", 2}));
  HEARTH_ASSERT_VALUE(MessageId r, messages.begin_reply(c, q4));
  HEARTH_ASSERT_OK(messages.finish_reply(r, {MessageState::Interrupted, "", 1, {}, "", "By definition", std::nullopt}));
  HEARTH_ASSERT_VALUE(std::string md, export_markdown(db(), {{c}}));
  EXPECT_EQ(md,
            "# Primes\n\n"
            "- Created: 2023-11-14 22:13 UTC\n"
            "- Updated: 2023-11-14 22:13 UTC\n\n"
            "## User\n\nIs 91 prime?\n\n"
            "## Assistant\n\n"
            "<details><summary>Thinking (12 s)</summary>\n\n"
            "Try 7.\n\n&lt;/DETAILS> is not the end; 7 x 13 = 91.\n\n"
            "</details>\n\n"
            "No: **7 x 13**.\n\n"
            "## User\n\nAnd 97?\n\n"
            "## Assistant\n\n"
            "<details><summary>Thinking (3.5 s)</summary>\n\n"
            "No divisor up to 9.\n\n"
            "</details>\n\n"
            "Prime.\n\n"
            "## User\n\nAnd 101?\n\n"
            "## Assistant\n\n"
            "<details><summary>Thinking (2 min 5 s)</summary>\n\n"
            "Long check.\n\n"
            "</details>\n\n"
            "Prime too.\n\n"
            "## User\n\nAnd 1?\n\n"
            "## Assistant\n\n"
            "<details><summary>Thinking</summary>\n\n"
            "By definition\n\n"
            "</details>\n\n"
            "\n\n"
            "*(reply interrupted)*\n\n");
}

TEST_P(ArchiveTest, MarkdownShowsTheActiveBranch) {
  NewConversation nc;
  nc.title = "Trains";
  nc.model_file = "tiny.gguf";
  nc.model_quant = "Q8_0";
  nc.system_prompt = "Be brief.\nUse metric units.";
  HEARTH_ASSERT_VALUE(ConversationId c, Conversations(db()).create(nc));
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId q, messages.append(c, MessageId{}, {Role::User, "Fastest train?", 2}));
  HEARTH_ASSERT_OK(messages.append(c, q, {Role::Assistant, "Old answer", 2}));
  HEARTH_ASSERT_VALUE(MessageId r, messages.begin_reply(c, q));
  clock_.advance(60'000);
  HEARTH_ASSERT_OK(messages.finish_reply(r, {MessageState::Interrupted, "The **Shinkansen**", 3, {}, ""}));
  HEARTH_ASSERT_VALUE(std::string md, export_markdown(db(), {{c}}));
  // kStart is 2023-11-14 22:13:20 UTC; the reply finished a minute later.
  EXPECT_EQ(md,
            "# Trains\n\n"
            "- Created: 2023-11-14 22:13 UTC\n"
            "- Updated: 2023-11-14 22:14 UTC\n"
            "- Model: tiny.gguf (Q8_0)\n\n"
            "**System prompt**\n\n"
            "> Be brief.\n> Use metric units.\n\n"
            "## User\n\nFastest train?\n\n"
            "## Assistant\n\nThe **Shinkansen**\n\n"
            "*(reply interrupted)*\n\n");
  HEARTH_ASSERT_VALUE(ConversationId empty, Conversations(db()).create({}));
  HEARTH_ASSERT_VALUE(std::string both, export_markdown(db()));
  EXPECT_EQ(both, md + "---\n\n# Untitled conversation\n\n- Created: 2023-11-14 22:14 UTC\n"
                       "- Updated: 2023-11-14 22:14 UTC\n\n");
  EXPECT_EQ(error_code(export_markdown(db(), {{ConversationId{999}}})), ErrorCode::NotFound);
  (void)empty;
}

INSTANTIATE_TEST_SUITE_P(Storage, ArchiveTest, ::testing::Values(StorageKind::File, StorageKind::Memory),
                         testing::kind_name);

}  // namespace
}  // namespace hearth::storage
