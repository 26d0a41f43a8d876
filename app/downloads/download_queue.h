// Several downloads, run a few at a time in the order they were queued. One
// QNetworkAccessManager for all of them, using the system proxy settings.
#pragma once

#include "downloads/download.h"

#include <QObject>
#include <QList>

class QNetworkAccessManager;

namespace hearth::models {

class DownloadQueue : public QObject {
  Q_OBJECT
 public:
  explicit DownloadQueue(int max_parallel = 1, QObject* parent = nullptr);
  ~DownloadQueue() override;

  QNetworkAccessManager* network() const { return network_; }
  // Queues a download; it starts when a slot is free. The queue owns it.
  Download* enqueue(DownloadRequest request);
  const QList<Download*>& downloads() const { return downloads_; }
  // Removes a finished, failed or cancelled download from the list.
  void remove(Download* download);

 signals:
  void downloadAdded(hearth::models::Download* download);
  void allDone();

 private:
  void pump();
  int running() const;

  QNetworkAccessManager* network_;
  QList<Download*> downloads_;
  QList<Download*> waiting_;
  int max_parallel_;
};

// Makes `network` use the operating system's proxy settings (environment
// variables on Linux), without changing the process-wide default.
void use_system_proxy(QNetworkAccessManager* network);

}  // namespace hearth::models
