#include "downloads/download_queue.h"

#include <QNetworkAccessManager>
#include <QNetworkProxyFactory>

namespace hearth::models {
namespace {

class SystemProxyFactory : public QNetworkProxyFactory {
 public:
  QList<QNetworkProxy> queryProxy(const QNetworkProxyQuery& query) override {
    return QNetworkProxyFactory::systemProxyForQuery(query);
  }
};

}  // namespace

void use_system_proxy(QNetworkAccessManager* network) {
  network->setProxyFactory(new SystemProxyFactory);  // the manager takes ownership
}

DownloadQueue::DownloadQueue(int max_parallel, QObject* parent)
    : QObject(parent), network_(new QNetworkAccessManager(this)), max_parallel_(std::max(1, max_parallel)) {
  use_system_proxy(network_);
}

DownloadQueue::~DownloadQueue() = default;

Download* DownloadQueue::enqueue(DownloadRequest request) {
  auto* download = new Download(network_, std::move(request), this);
  downloads_.append(download);
  waiting_.append(download);
  connect(download, &Download::stateChanged, this, [this](DownloadState) { pump(); });
  emit downloadAdded(download);
  pump();
  return download;
}

void DownloadQueue::remove(Download* download) {
  downloads_.removeAll(download);
  waiting_.removeAll(download);
  download->deleteLater();
}

int DownloadQueue::running() const {
  int n = 0;
  for (const Download* d : downloads_) {
    const auto s = d->state();
    if (s == DownloadState::Downloading || s == DownloadState::Hashing || s == DownloadState::Verifying) ++n;
  }
  return n;
}

void DownloadQueue::pump() {
  while (!waiting_.isEmpty() && running() < max_parallel_) {
    Download* next = waiting_.takeFirst();
    if (next->state() == DownloadState::Idle) next->start();
  }
  if (waiting_.isEmpty() && running() == 0) {
    bool any_active = false;
    for (const Download* d : downloads_) any_active = any_active || d->state() == DownloadState::Idle;
    if (!any_active) emit allDone();
  }
}

}  // namespace hearth::models
