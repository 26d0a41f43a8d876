#include "controllers/chat_controller.h"

#include <QClipboard>
#include <QGuiApplication>

#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"

namespace hearth::ui {

ChatController::ChatController(StorageExecutor* storage, EngineClient* engine, ModelController* model,
                               SettingsController* settings, QObject* parent)
    : QObject(parent),
      list_(new ConversationListController(storage, this)),
      open_(new OpenConversationController(storage, list_, settings, this)),
      reply_(new ReplyController(storage, engine, model, settings, list_, open_, this)) {
  open_->set_reply_hooks([this](ConversationKey id) { return reply_->streaming_into(id); },
                         [this] { return !reply_->generating(); });

  connect(list_, &ConversationListController::showArchivedChanged, this, &ChatController::showArchivedChanged);
  connect(list_, &ConversationListController::searchQueryChanged, this, &ChatController::searchQueryChanged);
  connect(list_, &ConversationListController::pendingDeleteChanged, this, &ChatController::pendingDeleteChanged);
  connect(open_, &OpenConversationController::currentChanged, this, &ChatController::currentChanged);
  connect(open_, &OpenConversationController::overflowChanged, this, &ChatController::overflowChanged);
  connect(open_, &OpenConversationController::reasoningChanged, this, &ChatController::reasoningChanged);
  connect(reply_, &ReplyController::generatingChanged, this, &ChatController::generatingChanged);
  connect(reply_, &ReplyController::composerChanged, this, &ChatController::composerChanged);
  connect(reply_, &ReplyController::statsChanged, this, &ChatController::statsChanged);
  connect(reply_, &ReplyController::replyFinished, this, &ChatController::replyFinished);
  connect(list_, &ConversationListController::errorOccurred, this, &ChatController::set_error);
  connect(open_, &OpenConversationController::errorOccurred, this, &ChatController::set_error);
  connect(reply_, &ReplyController::errorOccurred, this, &ChatController::set_error);
  // A conversation held with a remote model continues with it.
  connect(open_, &OpenConversationController::remoteModelRemembered, this, [model](const QString& path) {
    if (model->modelPath() != path) model->load(path);
  });
  connect(storage, &StorageExecutor::writeFailed, this, [this](const QString& message) {
    set_error(tr("Could not save: %1").arg(message));
  });
}

// The reply goes first (it saves what streamed and cancels the request), then
// the list (it performs a delete still waiting for undo).
ChatController::~ChatController() {
  delete reply_;
  delete open_;
  delete list_;
}

void ChatController::copyText(const QString& text) {
  if (auto* clipboard = QGuiApplication::clipboard()) clipboard->setText(text);
}

void ChatController::set_error(const QString& message) {
  last_error_ = message;
  emit lastErrorChanged();
}

}  // namespace hearth::ui
