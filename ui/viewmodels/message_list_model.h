// The chat view's messages: the path from the first message to the active
// leaf of the conversation's tree, with each message's branch position.
#pragma once

#include <QAbstractListModel>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <optional>
#include <vector>

#include "viewmodels/message_tree_index.h"

namespace hearth::ui {

class MessageListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by ChatController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Role {
    IdRole = Qt::UserRole + 1,
    RoleNameRole,   // "user", "assistant", "system"
    TextRole,
    SegmentsRole,   // list of {kind: "prose"|"code", text, language, closed}
    StateRole,      // "complete", "streaming", "interrupted", "error"
    BranchIndexRole,  // 1-based position among siblings
    BranchCountRole,
    TtftMsRole,
    TokensPerSecondRole,
    ReasoningRole,    // a reasoning model's thinking before the answer; "" for none
    ReasoningMsRole,  // how long it thought, in ms; -1 while unknown (still thinking)
    // A reply: the document passages its question was given, [{number, label,
    // library, path, page, lineFirst, lineLast, text, cited}] ("cited": the reply
    // names it as [n]); [] when the question had none.
    SourcesRole,
    // Where a reply came from: the backend, "response cache", or the Auto
    // model's choice ("<model> (Auto: large model, <why>)"); "" for none.
    OriginRole,
  };
  Q_ENUM(Role)

  explicit MessageListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  // Replaces the whole tree (a conversation was opened).
  void reset(MessageTree tree);
  void clear();
  // Adds a message to the tree and shows the path ending at it.
  void add_and_show(const MessageRecord& message);
  // Shows the path ending at `leaf` (a branch switch).
  void show_leaf(MessageKey leaf);
  // Streaming: appends text to a message on the visible path.
  void append_text(MessageKey id, const QString& text);
  // Streaming: appends reasoning (thinking) to a message on the visible path.
  void append_reasoning(MessageKey id, const QString& text);
  // The thinking ended (the answer started): how long it took.
  void set_reasoning_ms(MessageKey id, double ms);
  void set_state(MessageKey id, MessageState state, const ReplyFigures* figures = nullptr);

  const MessageTreeIndex& tree() const { return tree_; }
  std::optional<MessageKey> leaf() const;
  const std::vector<MessageKey>& path() const { return path_; }
  int row_of(MessageKey id) const;

 signals:
  void countChanged();

 private:
  void set_path(std::vector<MessageKey> path);
  void refresh_branch_roles();

  MessageTreeIndex tree_;
  std::vector<MessageKey> path_;
};

const char* role_name(StoredRole role);
const char* state_name(MessageState state);

}  // namespace hearth::ui
