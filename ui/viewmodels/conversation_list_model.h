// The sidebar's list of conversations: pinned first, then most recently updated.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include <optional>
#include <vector>

#include "store/conversation_store.h"

namespace hearth::ui {

class ConversationListModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by ChatController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Role {
    IdRole = Qt::UserRole + 1,
    TitleRole,
    PinnedRole,
    ArchivedRole,
    UpdatedMsRole,
    SectionRole,  // "pinned" or "recent", for ListView sections
  };
  Q_ENUM(Role)

  explicit ConversationListModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  void reset(std::vector<ConversationRecord> records);
  // Inserts or updates one conversation and moves it to its sorted place.
  void upsert(const ConversationRecord& record);
  std::optional<ConversationRecord> take(ConversationKey id);
  std::optional<ConversationRecord> get(ConversationKey id) const;
  Q_INVOKABLE int rowOf(qint64 id) const;

 signals:
  void countChanged();

 private:
  int sorted_position(const ConversationRecord& record) const;

  std::vector<ConversationRecord> rows_;
};

}  // namespace hearth::ui
