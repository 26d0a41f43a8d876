// A reply's reasoning ("thinking"), its duration and the conversation's reasoning
// switch, through the repositories, the reply writer and search.
#include <sqlite3.h>

#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "hearth/storage/reply_writer.h"
#include "hearth/storage/search.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::error_code;
using testing::StorageKind;
using testing::StorageTest;
using testing::TempDir;

TEST(ReasoningSetting, NamesAreTheStoredStrings) {
  const std::pair<ReasoningSetting, const char*> names[] = {
      {ReasoningSetting::Default, "default"}, {ReasoningSetting::Off, "off"},       {ReasoningSetting::On, "on"},
      {ReasoningSetting::Low, "low"},         {ReasoningSetting::Medium, "medium"}, {ReasoningSetting::High, "high"}};
  for (const auto& [setting, name] : names) {
    EXPECT_STREQ(to_string(setting), name);
    HEARTH_ASSERT_VALUE(ReasoningSetting parsed, parse_reasoning_setting(name));
    EXPECT_EQ(parsed, setting);
  }
  auto bad = parse_reasoning_setting("Medium");  // names are case-sensitive, as stored
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::InvalidFormat);
  EXPECT_NE(bad.error().message.find("reasoning setting 'Medium'"), std::string::npos) << bad.error().message;
}

class ReasoningTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    NewConversation c;
    c.title = "Primes";
    HEARTH_ASSERT_VALUE(conversation_, Conversations(db()).create(c));
    HEARTH_ASSERT_VALUE(question_, Messages(db()).append(conversation_, MessageId{}, {Role::User, "Is 91 prime?", 4}));
  }
  ReplyWriterOptions writer_options() {
    ReplyWriterOptions o;
    o.flush_interval = std::chrono::milliseconds(300);
    o.clock = [this] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(*steady_)); };
    return o;
  }
  Message stored(MessageId id) { return Messages(db()).get(id).value(); }

  ConversationId conversation_;
  MessageId question_;
  std::shared_ptr<std::int64_t> steady_ = std::make_shared<std::int64_t>(5000);
};

TEST_P(ReasoningTest, ConversationSwitchIsStoredAndListed) {
  HEARTH_ASSERT_VALUE(Conversation fresh, Conversations(db()).get(conversation_));
  EXPECT_EQ(fresh.reasoning, ReasoningSetting::Default);
  NewConversation high;
  high.title = "Effort";
  high.reasoning = ReasoningSetting::High;
  HEARTH_ASSERT_VALUE(ConversationId effort, Conversations(db()).create(high));
  EXPECT_EQ(Conversations(db()).get(effort).value().reasoning, ReasoningSetting::High);

  clock_.advance(1000);
  HEARTH_ASSERT_OK(Conversations(db()).set_reasoning(conversation_, ReasoningSetting::Off));
  HEARTH_ASSERT_VALUE(Conversation off, Conversations(db()).get(conversation_));
  EXPECT_EQ(off.reasoning, ReasoningSetting::Off);
  EXPECT_EQ(off.updated_ms, kStart + 1000);  // an edit, like a settings change
  HEARTH_ASSERT_VALUE(auto listed, Conversations(db()).list({}));
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].id, conversation_);
  EXPECT_EQ(listed[0].reasoning, ReasoningSetting::Off);
  EXPECT_EQ(listed[1].reasoning, ReasoningSetting::High);
  EXPECT_EQ(error_code(Conversations(db()).set_reasoning(ConversationId{999}, ReasoningSetting::On)),
            ErrorCode::NotFound);
}

TEST_P(ReasoningTest, MessagesKeepReasoningApartFromContent) {
  Messages messages(db());
  NewMessage answer{Role::Assistant, "No: 91 = 7 x 13.", 9, "Try 7: 7 x 13 = 91, so it has divisors.", 2250.5};
  HEARTH_ASSERT_VALUE(MessageId a, messages.append(conversation_, question_, answer));
  const Message m = stored(a);
  EXPECT_EQ(m.content, "No: 91 = 7 x 13.");
  EXPECT_EQ(m.reasoning, "Try 7: 7 x 13 = 91, so it has divisors.");
  EXPECT_EQ(m.reasoning_ms, 2250.5);
  EXPECT_EQ(m.token_count, 9);
  EXPECT_EQ(stored(question_).reasoning, "");
  EXPECT_FALSE(stored(question_).reasoning_ms.has_value());
  HEARTH_ASSERT_VALUE(auto path, messages.active_path(conversation_));
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[1], m);

  // An edit is the user's text: it carries no reasoning.
  HEARTH_ASSERT_VALUE(MessageId edited, messages.edit(a, "No."));
  EXPECT_EQ(stored(edited).reasoning, "");
  EXPECT_FALSE(stored(edited).reasoning_ms.has_value());

  // Streaming through the repository: the plain update leaves reasoning alone, the
  // progress update and the end replace it.
  HEARTH_ASSERT_VALUE(MessageId r, messages.begin_reply(conversation_, question_));
  HEARTH_ASSERT_OK(messages.update_reply(r, ReplyProgress{"", 3, "Check 2, 3, 5", std::nullopt}));
  EXPECT_EQ(stored(r).reasoning, "Check 2, 3, 5");
  HEARTH_ASSERT_OK(messages.update_reply(r, "No", 4));
  EXPECT_EQ(stored(r).reasoning, "Check 2, 3, 5");
  EXPECT_EQ(stored(r).content, "No");
  EXPECT_FALSE(stored(r).reasoning_ms.has_value());
  HEARTH_ASSERT_OK(messages.update_reply(r, ReplyProgress{"No,", 8, "Check 2, 3, 5, 7: yes, 7.", 800.0}));
  EXPECT_EQ(stored(r).reasoning_ms, 800.0);
  ReplyEnd end;
  end.content = "No, 7 divides it.";
  end.token_count = 12;
  end.reasoning = "Check 2, 3, 5, 7: yes, 7.";
  end.reasoning_ms = 812.25;
  HEARTH_ASSERT_OK(messages.finish_reply(r, end));
  const Message done = stored(r);
  EXPECT_EQ(done.state, MessageState::Complete);
  EXPECT_EQ(done.content, "No, 7 divides it.");
  EXPECT_EQ(done.reasoning, "Check 2, 3, 5, 7: yes, 7.");
  EXPECT_EQ(done.reasoning_ms, 812.25);
  EXPECT_EQ(error_code(messages.update_reply(r, ReplyProgress{"x", 1, "y", std::nullopt})),
            ErrorCode::InvalidArgument);  // no longer streaming
}

TEST_P(ReasoningTest, WriterBatchesReasoningLikeTextAndMeasuresTheThinking) {
  HEARTH_ASSERT_VALUE(ReplyWriter writer, ReplyWriter::begin(db(), conversation_, question_, writer_options()));
  *steady_ += 40;  // prompt processing: not thinking time
  HEARTH_ASSERT_OK(writer.append_reasoning("Divide by"));
  *steady_ += 100;
  HEARTH_ASSERT_OK(writer.append_reasoning(" 7"));
  EXPECT_EQ(stored(writer.id()).reasoning, "");  // 140 ms since the start: nothing committed yet
  EXPECT_TRUE(writer.dirty());
  *steady_ += 160;
  HEARTH_ASSERT_OK(writer.append_reasoning(": 13."));  // 300 ms: commits
  EXPECT_EQ(stored(writer.id()).reasoning, "Divide by 7: 13.");
  EXPECT_FALSE(stored(writer.id()).reasoning_ms.has_value());  // still thinking
  EXPECT_FALSE(writer.reasoning_ms().has_value());
  EXPECT_FALSE(writer.dirty());
  *steady_ += 1940;
  HEARTH_ASSERT_OK(writer.append("Not prime", 2));  // thinking ended 2,200 ms after it began; commits
  EXPECT_EQ(writer.reasoning_ms(), 2200.0);
  Message mid = stored(writer.id());
  EXPECT_EQ(mid.content, "Not prime");
  EXPECT_EQ(mid.reasoning, "Divide by 7: 13.");
  EXPECT_EQ(mid.reasoning_ms, 2200.0);
  EXPECT_EQ(mid.token_count, 5);
  EXPECT_EQ(mid.state, MessageState::Streaming);
  *steady_ += 10;
  HEARTH_ASSERT_OK(writer.append("."));
  *steady_ += 5000;
  HEARTH_ASSERT_OK(writer.finish(MessageState::Complete, {30.0, 12.5, "cpu"}));
  const Message done = stored(writer.id());
  EXPECT_EQ(done.state, MessageState::Complete);
  EXPECT_EQ(done.content, "Not prime.");
  EXPECT_EQ(done.reasoning, "Divide by 7: 13.");
  EXPECT_EQ(done.reasoning_ms, 2200.0);  // the answer's time does not count
  EXPECT_EQ(done.token_count, 6);
  EXPECT_EQ(done.stats.backend, "cpu");
  EXPECT_EQ(error_code(writer.append_reasoning("late")), ErrorCode::InvalidArgument);
}

TEST_P(ReasoningTest, WriterEndingWhileThinkingTimesUntilTheEndAndTakesTheEnginesFigure) {
  HEARTH_ASSERT_VALUE(ReplyWriter cut, ReplyWriter::begin(db(), conversation_, question_, writer_options()));
  HEARTH_ASSERT_OK(cut.append_reasoning("Hmm"));
  *steady_ += 750;
  HEARTH_ASSERT_OK(cut.finish(MessageState::Interrupted));
  const Message interrupted = stored(cut.id());
  EXPECT_EQ(interrupted.state, MessageState::Interrupted);
  EXPECT_EQ(interrupted.content, "");
  EXPECT_EQ(interrupted.reasoning, "Hmm");
  EXPECT_EQ(interrupted.reasoning_ms, 750.0);

  HEARTH_ASSERT_VALUE(ReplyWriter told, ReplyWriter::begin(db(), conversation_, question_, writer_options()));
  HEARTH_ASSERT_OK(told.append_reasoning("Think"));
  *steady_ += 100;
  HEARTH_ASSERT_OK(told.append("Answer"));
  told.set_reasoning_ms(1234.5);
  HEARTH_ASSERT_OK(told.finish(MessageState::Complete));
  EXPECT_EQ(stored(told.id()).reasoning_ms, 1234.5);

  // A model that does not think leaves both empty.
  HEARTH_ASSERT_VALUE(ReplyWriter plain, ReplyWriter::begin(db(), conversation_, question_, writer_options()));
  HEARTH_ASSERT_OK(plain.append("Plain answer"));
  HEARTH_ASSERT_OK(plain.finish(MessageState::Complete));
  EXPECT_EQ(stored(plain.id()).reasoning, "");
  EXPECT_FALSE(stored(plain.id()).reasoning_ms.has_value());
}

TEST_P(ReasoningTest, SearchLeavesReasoningOutUnlessAsked) {
  Messages messages(db());
  HEARTH_ASSERT_VALUE(MessageId a,
                      messages.append(conversation_, question_,
                                      {Role::Assistant, "It is not prime.", 5, "Sieve: seven divides ninety-one.", 900.0}));
  NewConversation other;
  other.title = "Sieves";
  HEARTH_ASSERT_VALUE(ConversationId c2, Conversations(db()).create(other));
  HEARTH_ASSERT_VALUE(MessageId q2, messages.append(c2, MessageId{}, {Role::User, "Explain the sieve", 3}));
  HEARTH_ASSERT_VALUE(MessageId a2, messages.append(c2, q2, {Role::Assistant, "Cross out multiples.", 4,
                                                             "The sieve of Eratosthenes; start at two.", 300.0}));

  // Default: content and titles only.
  HEARTH_ASSERT_VALUE(auto seven, Search(db()).query("seven"));
  EXPECT_TRUE(seven.empty());
  HEARTH_ASSERT_VALUE(auto sieve, Search(db()).query("sieve"));
  ASSERT_EQ(sieve.size(), 2u);  // the title "Sieves" and the question, not the two thoughts
  for (const SearchHit& h : sieve) EXPECT_NE(h.field, SearchField::Reasoning);
  EXPECT_EQ(sieve[0].field == SearchField::Title ? sieve[1].message : sieve[0].message, q2);

  SearchOptions with;
  with.include_reasoning = true;
  HEARTH_ASSERT_VALUE(auto seven_in, Search(db()).query("seven", with));
  ASSERT_EQ(seven_in.size(), 1u);
  EXPECT_EQ(seven_in[0].message, a);
  EXPECT_EQ(seven_in[0].conversation, conversation_);
  EXPECT_EQ(seven_in[0].field, SearchField::Reasoning);
  EXPECT_EQ(seven_in[0].snippet, "Sieve: [seven] divides ninety-one.");
  HEARTH_ASSERT_VALUE(auto sieve_in, Search(db()).query("sieve", with));
  ASSERT_EQ(sieve_in.size(), 4u);
  std::vector<std::pair<std::int64_t, SearchField>> found;
  for (const SearchHit& h : sieve_in) found.emplace_back(h.message.value(), h.field);
  std::sort(found.begin(), found.end());
  EXPECT_EQ(found, (std::vector<std::pair<std::int64_t, SearchField>>{{0, SearchField::Title},
                                                                      {a.value(), SearchField::Reasoning},
                                                                      {q2.value(), SearchField::Content},
                                                                      {a2.value(), SearchField::Reasoning}}));
  with.conversation = conversation_;
  HEARTH_ASSERT_VALUE(auto only_first, Search(db()).query("sieve", with));
  ASSERT_EQ(only_first.size(), 1u);
  EXPECT_EQ(only_first[0].message, a);

  // The index follows edits and deletes of the reasoning.
  HEARTH_ASSERT_VALUE(MessageId r, messages.begin_reply(c2, q2));
  HEARTH_ASSERT_OK(messages.update_reply(r, ReplyProgress{"", 1, "first draft mentions zebras", std::nullopt}));
  SearchOptions all;
  all.include_reasoning = true;
  EXPECT_EQ(Search(db()).query("zebras", all).value().size(), 1u);
  HEARTH_ASSERT_OK(messages.update_reply(r, ReplyProgress{"ok", 2, "second draft mentions lions", 50.0}));
  EXPECT_TRUE(Search(db()).query("zebras", all).value().empty());
  EXPECT_EQ(Search(db()).query("lions", all).value().size(), 1u);
  HEARTH_ASSERT_OK(messages.delete_branch(r));
  EXPECT_TRUE(Search(db()).query("lions", all).value().empty());
  // Malformed FTS5 syntax stays the caller's error with reasoning included.
  SearchOptions fts;
  fts.syntax = QuerySyntax::Fts5;
  fts.include_reasoning = true;
  EXPECT_EQ(error_code(Search(db()).query("\"unclosed", fts)), ErrorCode::InvalidArgument);
}

// What an interrupted stream wrote survives: the process stops (the database is
// closed without finish) and the next open marks the reply interrupted with its
// committed reasoning and answer.
TEST(ReasoningWriter, InterruptedStreamKeepsWhatWasCommitted) {
  TempDir dir;
  const auto path = dir.file("hearth.db");
  std::int64_t steady = 0;
  MessageId reply;
  {
    HEARTH_ASSERT_VALUE(Database db, Database::open(path));
    HEARTH_ASSERT_VALUE(ConversationId c, Conversations(db).create({}));
    HEARTH_ASSERT_VALUE(MessageId q, Messages(db).append(c, MessageId{}, {Role::User, "q", 1}));
    ReplyWriterOptions options;
    options.clock = [&steady] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(steady)); };
    HEARTH_ASSERT_VALUE(ReplyWriter writer, ReplyWriter::begin(db, c, q, options));
    reply = writer.id();
    HEARTH_ASSERT_OK(writer.append_reasoning("thinking hard"));
    steady += 1000;
    HEARTH_ASSERT_OK(writer.append("The answer"));  // commits both, thinking took 1 s
    steady += 10;
    HEARTH_ASSERT_OK(writer.append(" is lost"));  // within the interval: never committed
    EXPECT_TRUE(writer.dirty());
  }
  // A plain connection first: the reply is still `streaming` on disk.
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT state, content, reasoning, reasoning_ms FROM messages WHERE id = ?1", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  sqlite3_bind_int64(stmt, 1, reply.value());
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "streaming");
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)), "The answer");
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 2)), "thinking hard");
  EXPECT_EQ(sqlite3_column_double(stmt, 3), 1000.0);
  sqlite3_finalize(stmt);
  sqlite3_close(raw);

  HEARTH_ASSERT_VALUE(Database db, Database::open(path));
  EXPECT_EQ(db.open_report().interrupted_replies, 1);
  HEARTH_ASSERT_VALUE(Message m, Messages(db).get(reply));
  EXPECT_EQ(m.state, MessageState::Interrupted);
  EXPECT_EQ(m.content, "The answer");
  EXPECT_EQ(m.reasoning, "thinking hard");
  EXPECT_EQ(m.reasoning_ms, 1000.0);
}

INSTANTIATE_TEST_SUITE_P(Storage, ReasoningTest, ::testing::Values(StorageKind::File, StorageKind::Memory),
                         testing::kind_name);

}  // namespace
}  // namespace hearth::storage
