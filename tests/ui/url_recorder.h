// Takes the place of the desktop's browser and mail client in tests: set as a
// QDesktopServices URL handler, it records every URL QDesktopServices::openUrl
// would have handed to the desktop.
#pragma once

#include <QList>
#include <QObject>
#include <QUrl>

namespace hearth::ui {

class UrlRecorder : public QObject {
  Q_OBJECT

 public:
  QList<QUrl> urls;

 public slots:
  void open(const QUrl& url) { urls.push_back(url); }
};

}  // namespace hearth::ui
