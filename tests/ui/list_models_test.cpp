// Every list model under QAbstractItemModelTester while it is reset, grown,
// shrunk and reordered the way the window does it.
#include <QAbstractItemModelTester>

#include <gtest/gtest.h>

#include "viewmodels/conversation_list_model.h"
#include "viewmodels/message_list_model.h"
#include "viewmodels/search_results_model.h"

namespace hearth::ui {
namespace {

using Tester = QAbstractItemModelTester;
constexpr auto kFatal = QAbstractItemModelTester::FailureReportingMode::Fatal;

ConversationRecord conv(int64_t id, const char* title, int64_t updated, bool pinned = false) {
  ConversationRecord r;
  r.id = ConversationKey{id};
  r.title = title;
  r.updated_ms = updated;
  r.pinned = pinned;
  return r;
}

QStringList titles(const ConversationListModel& m) {
  QStringList out;
  for (int i = 0; i < m.rowCount(); ++i) {
    out << m.data(m.index(i), ConversationListModel::TitleRole).toString();
  }
  return out;
}

TEST(ConversationListModel, PinnedFirstThenNewest) {
  ConversationListModel model;
  Tester tester(&model, kFatal);
  model.reset({conv(1, "old", 100), conv(2, "new", 300), conv(3, "pinned", 50, true)});
  EXPECT_EQ(titles(model), (QStringList{"pinned", "new", "old"}));
  EXPECT_EQ(model.data(model.index(0), ConversationListModel::SectionRole).toString(), "pinned");
  EXPECT_EQ(model.data(model.index(1), ConversationListModel::SectionRole).toString(), "recent");
}

TEST(ConversationListModel, UpsertMovesAndTakeRemoves) {
  ConversationListModel model;
  Tester tester(&model, kFatal);
  model.reset({conv(1, "a", 100), conv(2, "b", 200)});
  model.upsert(conv(1, "a", 500));  // touched: moves to the top
  EXPECT_EQ(titles(model), (QStringList{"a", "b"}));
  model.upsert(conv(3, "c", 50));  // new and old: goes last
  EXPECT_EQ(titles(model), (QStringList{"a", "b", "c"}));
  auto taken = model.take(ConversationKey{2});
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->title, "b");
  EXPECT_EQ(titles(model), (QStringList{"a", "c"}));
  EXPECT_FALSE(model.take(ConversationKey{2}));
  EXPECT_EQ(model.rowOf(3), 1);
}

TEST(SearchResultsModel, SnippetHighlightsAreEscapedRichText) {
  SearchResultsModel model;
  Tester tester(&model, kFatal);
  SearchHit hit;
  hit.conversation = ConversationKey{4};
  hit.title = "Fox";
  hit.snippet = std::string("a <b>&") + kHighlightOpen + "fox" + kHighlightClose + " ran";
  model.reset({hit});
  ASSERT_EQ(model.rowCount(), 1);
  EXPECT_EQ(model.data(model.index(0), SearchResultsModel::SnippetRole).toString(),
            QStringLiteral("a &lt;b&gt;&amp;<b>fox</b> ran"));
  EXPECT_EQ(model.data(model.index(0), SearchResultsModel::MessageIdRole).toLongLong(), -1);
  model.reset({});
  EXPECT_EQ(model.rowCount(), 0);
}

MessageRecord msg(int64_t id, std::optional<int64_t> parent, StoredRole role, const char* text) {
  MessageRecord m;
  m.id = MessageKey{id};
  m.conversation = ConversationKey{1};
  if (parent) m.parent = MessageKey{*parent};
  m.role = role;
  m.content = text;
  return m;
}

TEST(MessageListModel, ShowsActivePathWithBranchPositions) {
  MessageListModel model;
  Tester tester(&model, kFatal);
  MessageTree tree;
  tree.messages = {msg(1, std::nullopt, StoredRole::User, "hi"),
                   msg(2, 1, StoredRole::Assistant, "first"),
                   msg(3, 1, StoredRole::Assistant, "second")};
  tree.active_leaf = MessageKey{2};
  model.reset(tree);
  ASSERT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.data(model.index(1), MessageListModel::TextRole).toString(), "first");
  EXPECT_EQ(model.data(model.index(1), MessageListModel::BranchIndexRole).toInt(), 1);
  EXPECT_EQ(model.data(model.index(1), MessageListModel::BranchCountRole).toInt(), 2);
  EXPECT_EQ(model.data(model.index(0), MessageListModel::RoleNameRole).toString(), "user");

  model.show_leaf(MessageKey{3});
  EXPECT_EQ(model.data(model.index(1), MessageListModel::TextRole).toString(), "second");
  EXPECT_EQ(model.data(model.index(1), MessageListModel::BranchIndexRole).toInt(), 2);
}

TEST(MessageListModel, StreamingAppendsUpdateTextAndSegments) {
  MessageListModel model;
  Tester tester(&model, kFatal);
  model.add_and_show(msg(1, std::nullopt, StoredRole::User, "code please"));
  MessageRecord reply = msg(2, 1, StoredRole::Assistant, "");
  reply.state = MessageState::Streaming;
  model.add_and_show(reply);
  ASSERT_EQ(model.rowCount(), 2);
  model.append_text(MessageKey{2}, QStringLiteral("Here:\n```cpp\nint x;"));
  const QVariantList segments = model.data(model.index(1), MessageListModel::SegmentsRole).toList();
  ASSERT_EQ(segments.size(), 2);
  EXPECT_EQ(segments[1].toMap().value("kind").toString(), "code");
  EXPECT_EQ(segments[1].toMap().value("closed").toBool(), false);
  EXPECT_EQ(model.data(model.index(1), MessageListModel::StateRole).toString(), "streaming");
  ReplyFigures figures;
  figures.tokens_per_second = 42;
  model.set_state(MessageKey{2}, MessageState::Complete, &figures);
  EXPECT_EQ(model.data(model.index(1), MessageListModel::StateRole).toString(), "complete");
  EXPECT_DOUBLE_EQ(model.data(model.index(1), MessageListModel::TokensPerSecondRole).toDouble(), 42);
}

TEST(MessageListModel, SwitchingToAnotherRootReplacesEveryRow) {
  MessageListModel model;
  Tester tester(&model, kFatal);
  MessageTree tree;
  tree.messages = {msg(1, std::nullopt, StoredRole::User, "a"), msg(2, 1, StoredRole::Assistant, "b"),
                   msg(3, std::nullopt, StoredRole::User, "a2")};
  model.reset(tree);  // no active leaf: the newest leaf (3)
  ASSERT_EQ(model.rowCount(), 1);
  EXPECT_EQ(model.data(model.index(0), MessageListModel::TextRole).toString(), "a2");
  model.show_leaf(MessageKey{2});
  EXPECT_EQ(model.rowCount(), 2);
  model.clear();
  EXPECT_EQ(model.rowCount(), 0);
}

}  // namespace
}  // namespace hearth::ui
