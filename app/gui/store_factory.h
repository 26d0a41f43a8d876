// Opens the conversation store for a data directory.
#pragma once

#include <QString>

#include <memory>

#include "store/conversation_store.h"

namespace hearth::app {

struct OpenedStore {
  std::unique_ptr<ui::ConversationStore> store;
  // False when conversations live only in memory; the window says so.
  bool persistent = false;
  QString problem;  // why the store is not persistent, for the window
};

OpenedStore open_conversation_store(const QString& data_dir);

}  // namespace hearth::app
