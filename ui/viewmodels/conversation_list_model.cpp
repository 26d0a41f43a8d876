#include "viewmodels/conversation_list_model.h"

#include <algorithm>

namespace hearth::ui {
namespace {

// Pinned conversations first, then newest first; ties by id for a stable order.
bool before(const ConversationRecord& a, const ConversationRecord& b) {
  if (a.pinned != b.pinned) return a.pinned;
  if (a.updated_ms != b.updated_ms) return a.updated_ms > b.updated_ms;
  return a.id.value > b.id.value;
}

}  // namespace

ConversationListModel::ConversationListModel(QObject* parent) : QAbstractListModel(parent) {}

int ConversationListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const ConversationRecord& r = rows_[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
    case TitleRole: return QString::fromStdString(r.title);
    case IdRole: return QVariant::fromValue<qint64>(r.id.value);
    case PinnedRole: return r.pinned;
    case ArchivedRole: return r.archived;
    case UpdatedMsRole: return QVariant::fromValue<qint64>(r.updated_ms);
    case SectionRole: return r.pinned ? QStringLiteral("pinned") : QStringLiteral("recent");
    default: return {};
  }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
  return {{IdRole, "conversationId"}, {TitleRole, "title"},     {PinnedRole, "pinned"},
          {ArchivedRole, "archived"}, {UpdatedMsRole, "updatedMs"}, {SectionRole, "section"}};
}

void ConversationListModel::reset(std::vector<ConversationRecord> records) {
  std::stable_sort(records.begin(), records.end(), before);
  beginResetModel();
  rows_ = std::move(records);
  endResetModel();
  emit countChanged();
}

int ConversationListModel::sorted_position(const ConversationRecord& record) const {
  auto it = std::lower_bound(rows_.begin(), rows_.end(), record, before);
  return static_cast<int>(it - rows_.begin());
}

void ConversationListModel::upsert(const ConversationRecord& record) {
  const int existing = rowOf(record.id.value);
  if (existing >= 0) {
    beginRemoveRows(QModelIndex(), existing, existing);
    rows_.erase(rows_.begin() + existing);
    endRemoveRows();
  }
  const int at = sorted_position(record);
  beginInsertRows(QModelIndex(), at, at);
  rows_.insert(rows_.begin() + at, record);
  endInsertRows();
  if (existing < 0) emit countChanged();
}

std::optional<ConversationRecord> ConversationListModel::take(ConversationKey id) {
  const int row = rowOf(id.value);
  if (row < 0) return std::nullopt;
  beginRemoveRows(QModelIndex(), row, row);
  ConversationRecord record = rows_[static_cast<size_t>(row)];
  rows_.erase(rows_.begin() + row);
  endRemoveRows();
  emit countChanged();
  return record;
}

std::optional<ConversationRecord> ConversationListModel::get(ConversationKey id) const {
  const int row = rowOf(id.value);
  if (row < 0) return std::nullopt;
  return rows_[static_cast<size_t>(row)];
}

int ConversationListModel::rowOf(qint64 id) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].id.value == id) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace hearth::ui
