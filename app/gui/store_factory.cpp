#include "gui/store_factory.h"

#include <QCoreApplication>
#include <QDir>

#include "store/memory_conversation_store.h"
#include "store/sqlite_conversation_store.h"

namespace hearth::app {

OpenedStore open_conversation_store(const QString& data_dir) {
  OpenedStore out;
  const QString file = QDir(data_dir).filePath(QStringLiteral("hearth.sqlite3"));
  auto opened = ui::SqliteConversationStore::open(file.toStdString());
  if (opened.ok()) {
    out.store = std::move(opened).value();
    out.persistent = true;
    return out;
  }
  // The storage library never truncates a database it cannot open (it moves a
  // corrupt one aside), so the app keeps running in memory and says why.
  out.store = std::make_unique<ui::MemoryConversationStore>();
  out.persistent = false;
  out.problem = QCoreApplication::translate("StoreFactory",
                                            "Conversations cannot be saved: %1")
                    .arg(QString::fromStdString(opened.error().message));
  return out;
}

}  // namespace hearth::app
