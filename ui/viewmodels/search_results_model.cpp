#include "viewmodels/search_results_model.h"

namespace hearth::ui {

SearchResultsModel::SearchResultsModel(QObject* parent) : QAbstractListModel(parent) {}

int SearchResultsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(hits_.size());
}

QVariant SearchResultsModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const SearchHit& h = hits_[static_cast<size_t>(index.row())];
  switch (role) {
    case ConversationIdRole: return QVariant::fromValue<qint64>(h.conversation.value);
    case MessageIdRole: return QVariant::fromValue<qint64>(h.message ? h.message->value : -1);
    case Qt::DisplayRole:
    case TitleRole: return QString::fromStdString(h.title);
    case SnippetRole: return snippet_to_html(h.snippet);
    default: return {};
  }
}

QHash<int, QByteArray> SearchResultsModel::roleNames() const {
  return {{ConversationIdRole, "conversationId"},
          {MessageIdRole, "messageId"},
          {TitleRole, "title"},
          {SnippetRole, "snippet"}};
}

void SearchResultsModel::reset(std::vector<SearchHit> hits) {
  beginResetModel();
  hits_ = std::move(hits);
  endResetModel();
  emit countChanged();
}

QString SearchResultsModel::snippet_to_html(const std::string& snippet) {
  QString out;
  QString run;
  auto flush = [&] {
    out += run.toHtmlEscaped();
    run.clear();
  };
  for (QChar c : QString::fromStdString(snippet)) {
    if (c == QLatin1Char(kHighlightOpen)) {
      flush();
      out += QStringLiteral("<b>");
    } else if (c == QLatin1Char(kHighlightClose)) {
      flush();
      out += QStringLiteral("</b>");
    } else {
      run += c;
    }
  }
  flush();
  return out;
}

}  // namespace hearth::ui
