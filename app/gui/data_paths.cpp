#include "gui/data_paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace hearth::app {

QString default_data_dir() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation))
      .filePath(QStringLiteral("hearth"));
}

QString find_demo_model() {
  const QString file = QStringLiteral("stories260K.gguf");
  const QString app_dir = QCoreApplication::applicationDirPath();
  const QStringList candidates = {
      QDir(app_dir).filePath(QStringLiteral("../share/hearth/models/") + file),
      QDir(QStringLiteral(HEARTH_INSTALL_DATADIR)).filePath(QStringLiteral("hearth/models/") + file),
      QStringLiteral(HEARTH_SOURCE_DEMO_MODEL),
  };
  for (const QString& c : candidates) {
    if (QFileInfo::exists(c)) return QFileInfo(c).canonicalFilePath();
  }
  return {};
}

}  // namespace hearth::app
