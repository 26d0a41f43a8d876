#include "gui/store_factory.h"

#include <QCoreApplication>

#include "store/memory_conversation_store.h"

namespace hearth::app {

OpenedStore open_conversation_store(const QString& data_dir) {
  (void)data_dir;
  OpenedStore out;
  out.store = std::make_unique<ui::MemoryConversationStore>();
  out.persistent = false;
  out.problem = QCoreApplication::translate(
      "StoreFactory", "This build has no storage library: conversations are not saved.");
  return out;
}

}  // namespace hearth::app
