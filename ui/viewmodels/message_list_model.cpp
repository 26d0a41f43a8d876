#include "viewmodels/message_list_model.h"

#include <QFileInfo>
#include <QVariantMap>

#include <hearth/engine/chat/grounding.h>

#include <algorithm>

#include "viewmodels/markdown_html.h"
#include "viewmodels/markdown_segments.h"

namespace hearth::ui {

const char* role_name(StoredRole role) {
  switch (role) {
    case StoredRole::System: return "system";
    case StoredRole::User: return "user";
    case StoredRole::Assistant: return "assistant";
  }
  return "user";
}

const char* state_name(MessageState state) {
  switch (state) {
    case MessageState::Complete: return "complete";
    case MessageState::Streaming: return "streaming";
    case MessageState::Interrupted: return "interrupted";
    case MessageState::Error: return "error";
  }
  return "complete";
}

namespace {

QVariantList segments_of(const std::string& content) {
  QVariantList out;
  for (const MarkdownSegment& s : split_markdown(QString::fromStdString(content))) {
    QVariantMap m;
    m[QStringLiteral("kind")] =
        s.kind == MarkdownSegment::Kind::Code ? QStringLiteral("code") : QStringLiteral("prose");
    m[QStringLiteral("text")] = s.text;
    if (s.kind == MarkdownSegment::Kind::Prose) m[QStringLiteral("html")] = markdown_to_html(s.text);
    m[QStringLiteral("language")] = s.language;
    m[QStringLiteral("closed")] = s.closed;
    out.append(m);
  }
  return out;
}

}  // namespace

MessageListModel::MessageListModel(QObject* parent) : QAbstractListModel(parent) {}

int MessageListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(path_.size());
}

static QVariantList sources_of(const std::vector<SourceRecord>& sources, const std::string& reply) {
  const std::vector<int> cited = chat::cited_sources(reply, static_cast<int>(sources.size()));
  QVariantList out;
  for (const SourceRecord& s : sources) {
    QString label = QFileInfo(QString::fromStdString(s.path)).fileName();
    if (s.page) label += QObject::tr(", page %1").arg(*s.page);
    label += s.line_first == s.line_last ? QObject::tr(", line %1").arg(s.line_first)
                                         : QObject::tr(", lines %1–%2").arg(s.line_first).arg(s.line_last);
    out.append(QVariantMap{{QStringLiteral("number"), s.number},
                           {QStringLiteral("label"), label},
                           {QStringLiteral("library"), QString::fromStdString(s.library)},
                           {QStringLiteral("path"), QString::fromStdString(s.path)},
                           {QStringLiteral("page"), s.page ? QVariant(static_cast<qint64>(*s.page)) : QVariant()},
                           {QStringLiteral("lineFirst"), static_cast<qint64>(s.line_first)},
                           {QStringLiteral("lineLast"), static_cast<qint64>(s.line_last)},
                           {QStringLiteral("text"), QString::fromStdString(s.text)},
                           {QStringLiteral("cited"), std::find(cited.begin(), cited.end(), s.number) != cited.end()}});
  }
  return out;
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
    return {};
  }
  const MessageKey key = path_[static_cast<size_t>(index.row())];
  const MessageRecord* m = tree_.find(key);
  if (!m) return {};
  switch (role) {
    case IdRole: return QVariant::fromValue<qint64>(m->id.value);
    case RoleNameRole: return QString::fromLatin1(role_name(m->role));
    case Qt::DisplayRole:
    case TextRole: return QString::fromStdString(m->content);
    case SegmentsRole: return segments_of(m->content);
    case StateRole: return QString::fromLatin1(state_name(m->state));
    case BranchIndexRole: {
      const auto sib = tree_.siblings(key);
      const auto it = std::find(sib.begin(), sib.end(), key);
      return static_cast<int>(it - sib.begin()) + 1;
    }
    case BranchCountRole: return static_cast<int>(tree_.siblings(key).size());
    case TtftMsRole: return m->figures.ttft_ms;
    case TokensPerSecondRole: return m->figures.tokens_per_second;
    case ReasoningRole: return QString::fromStdString(m->reasoning);
    case ReasoningMsRole: return m->figures.reasoning_ms.value_or(-1.0);
    case OriginRole: return QString::fromStdString(m->figures.backend);
    case SourcesRole: {
      if (m->role != StoredRole::Assistant || !m->parent) return QVariantList{};
      const MessageRecord* question = tree_.find(*m->parent);
      if (!question || question->sources.empty()) return QVariantList{};
      return sources_of(question->sources, m->content);
    }
    default: return {};
  }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
  return {{IdRole, "messageId"},
          {RoleNameRole, "role"},
          {TextRole, "text"},
          {SegmentsRole, "segments"},
          {StateRole, "state"},
          {BranchIndexRole, "branchIndex"},
          {BranchCountRole, "branchCount"},
          {TtftMsRole, "ttftMs"},
          {TokensPerSecondRole, "tokensPerSecond"},
          {ReasoningRole, "reasoning"},
          {ReasoningMsRole, "reasoningMs"},
          {SourcesRole, "sources"},
          {OriginRole, "origin"}};
}

void MessageListModel::reset(MessageTree tree) {
  beginResetModel();
  tree_ = MessageTreeIndex(std::move(tree.messages));
  const std::optional<MessageKey> leaf = tree_.opening_leaf(tree.active_leaf);
  path_ = leaf ? tree_.path_to(*leaf) : std::vector<MessageKey>{};
  endResetModel();
  emit countChanged();
}

void MessageListModel::clear() { reset(MessageTree{}); }

void MessageListModel::add_and_show(const MessageRecord& message) {
  tree_.add(message);
  set_path(tree_.path_to(message.id));
}

void MessageListModel::show_leaf(MessageKey leaf) {
  if (!tree_.find(leaf)) return;
  set_path(tree_.path_to(leaf));
}

// Keeps the common prefix of the old and new path in place (so the view does
// not jump) and replaces only the rows after it.
void MessageListModel::set_path(std::vector<MessageKey> path) {
  size_t common = 0;
  while (common < path_.size() && common < path.size() && path_[common] == path[common]) ++common;
  const int old_count = static_cast<int>(path_.size());
  if (static_cast<size_t>(old_count) > common) {
    beginRemoveRows(QModelIndex(), static_cast<int>(common), old_count - 1);
    path_.resize(common);
    endRemoveRows();
  }
  if (path.size() > common) {
    beginInsertRows(QModelIndex(), static_cast<int>(common), static_cast<int>(path.size()) - 1);
    path_ = std::move(path);
    endInsertRows();
  }
  if (static_cast<int>(path_.size()) != old_count) emit countChanged();
  refresh_branch_roles();
}

void MessageListModel::refresh_branch_roles() {
  if (path_.empty()) return;
  emit dataChanged(index(0), index(static_cast<int>(path_.size()) - 1),
                   {BranchIndexRole, BranchCountRole});
}

void MessageListModel::append_text(MessageKey id, const QString& text) {
  MessageRecord* m = tree_.find(id);
  if (!m || text.isEmpty()) return;
  m->content += text.toStdString();
  const int row = row_of(id);
  // Sources: a citation the reply just wrote marks its source as cited.
  if (row >= 0) emit dataChanged(index(row), index(row), {TextRole, SegmentsRole, SourcesRole});
}

void MessageListModel::append_reasoning(MessageKey id, const QString& text) {
  MessageRecord* m = tree_.find(id);
  if (!m || text.isEmpty()) return;
  m->reasoning += text.toStdString();
  const int row = row_of(id);
  if (row >= 0) emit dataChanged(index(row), index(row), {ReasoningRole});
}

void MessageListModel::set_reasoning_ms(MessageKey id, double ms) {
  MessageRecord* m = tree_.find(id);
  if (!m) return;
  m->figures.reasoning_ms = ms;
  const int row = row_of(id);
  if (row >= 0) emit dataChanged(index(row), index(row), {ReasoningMsRole});
}

void MessageListModel::set_state(MessageKey id, MessageState state, const ReplyFigures* figures) {
  MessageRecord* m = tree_.find(id);
  if (!m) return;
  m->state = state;
  if (figures) m->figures = *figures;
  const int row = row_of(id);
  if (row >= 0) {
    emit dataChanged(index(row), index(row), {StateRole, TtftMsRole, TokensPerSecondRole, ReasoningMsRole, OriginRole});
  }
}

std::optional<MessageKey> MessageListModel::leaf() const {
  if (path_.empty()) return std::nullopt;
  return path_.back();
}

int MessageListModel::row_of(MessageKey id) const {
  for (size_t i = 0; i < path_.size(); ++i) {
    if (path_[i] == id) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace hearth::ui
