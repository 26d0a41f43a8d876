// Results of the sidebar's search box: one row per hit, with the snippet's
// matched words highlighted as rich text.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include <vector>

#include "store/conversation_store.h"

namespace hearth::ui {

class SearchResultsModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Owned by ChatController")
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

 public:
  enum Role { ConversationIdRole = Qt::UserRole + 1, MessageIdRole, TitleRole, SnippetRole };
  Q_ENUM(Role)

  explicit SearchResultsModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QHash<int, QByteArray> roleNames() const override;

  void reset(std::vector<SearchHit> hits);

  // Escapes the snippet for rich text and turns the storage's highlight
  // markers into <b> tags (a snippet must never inject markup).
  static QString snippet_to_html(const std::string& snippet);

 signals:
  void countChanged();

 private:
  std::vector<SearchHit> hits_;
};

}  // namespace hearth::ui
