#include "hearth/storage/reply_writer.h"

#include "hearth/storage/conversations.h"
#include "storage_test_util.h"

namespace hearth::storage {
namespace {

using testing::error_code;
using testing::StorageKind;
using testing::StorageTest;

class ReplyWriterTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    auto c = Conversations(db()).create({});
    ASSERT_TRUE(c.ok());
    conversation_ = *c;
    auto q = Messages(db()).append(conversation_, MessageId{}, {Role::User, "q", 1});
    ASSERT_TRUE(q.ok());
    question_ = *q;
  }
  ReplyWriterOptions options() {
    ReplyWriterOptions o;
    o.flush_interval = std::chrono::milliseconds(300);
    o.clock = [this] { return std::chrono::steady_clock::time_point(std::chrono::milliseconds(*now_)); };
    return o;
  }
  std::string stored(MessageId id) { return Messages(db()).get(id).value().content; }

  ConversationId conversation_;
  MessageId question_;
  std::shared_ptr<std::int64_t> now_ = std::make_shared<std::int64_t>(1000);
};

TEST_P(ReplyWriterTest, CommitsAtMostOncePerIntervalAndFinishesWithAllText) {
  HEARTH_ASSERT_VALUE(ReplyWriter writer, ReplyWriter::begin(db(), conversation_, question_, options()));
  HEARTH_ASSERT_VALUE(Message started, Messages(db()).get(writer.id()));
  EXPECT_EQ(started.state, MessageState::Streaming);
  EXPECT_EQ(started.parent, question_);

  HEARTH_ASSERT_OK(writer.append("Hel"));
  *now_ += 100;
  HEARTH_ASSERT_OK(writer.append("lo"));
  EXPECT_EQ(stored(writer.id()), "");  // 100 ms since the start: nothing committed yet
  EXPECT_TRUE(writer.dirty());
  *now_ += 200;
  HEARTH_ASSERT_OK(writer.append(","));  // 300 ms: commits everything so far
  EXPECT_EQ(stored(writer.id()), "Hello,");
  EXPECT_FALSE(writer.dirty());
  *now_ += 299;
  HEARTH_ASSERT_OK(writer.append(" world"));
  EXPECT_EQ(stored(writer.id()), "Hello,");
  HEARTH_ASSERT_OK(writer.flush());
  EXPECT_EQ(stored(writer.id()), "Hello, world");
  HEARTH_ASSERT_OK(writer.append("!", 2));
  HEARTH_ASSERT_OK(writer.finish(MessageState::Complete, {10.0, 20.0, "cpu"}));
  HEARTH_ASSERT_VALUE(Message done, Messages(db()).get(writer.id()));
  EXPECT_EQ(done.content, "Hello, world!");
  EXPECT_EQ(done.token_count, 6);
  EXPECT_EQ(done.state, MessageState::Complete);
  EXPECT_EQ(done.stats.backend, "cpu");
  EXPECT_EQ(error_code(writer.append("late")), ErrorCode::InvalidArgument);  // finished replies are closed
  EXPECT_EQ(error_code(writer.finish(MessageState::Complete)), ErrorCode::InvalidArgument);
  EXPECT_EQ(stored(writer.id()), "Hello, world!");
}

TEST_P(ReplyWriterTest, EndsWithErrorState) {
  HEARTH_ASSERT_VALUE(ReplyWriter writer, ReplyWriter::begin(db(), conversation_, question_, options()));
  HEARTH_ASSERT_OK(writer.append("partial"));
  HEARTH_ASSERT_OK(writer.finish(MessageState::Error, {}, "device lost"));
  HEARTH_ASSERT_VALUE(Message m, Messages(db()).get(writer.id()));
  EXPECT_EQ(m.state, MessageState::Error);
  EXPECT_EQ(m.content, "partial");
  EXPECT_EQ(m.error_message, "device lost");
  EXPECT_EQ(error_code(ReplyWriter::begin(db(), ConversationId{99}, MessageId{}, options())), ErrorCode::NotFound);
}

INSTANTIATE_TEST_SUITE_P(Storage, ReplyWriterTest, ::testing::Values(StorageKind::File, StorageKind::Memory),
                         testing::kind_name);

}  // namespace
}  // namespace hearth::storage
