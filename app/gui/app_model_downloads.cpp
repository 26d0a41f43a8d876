#include "gui/app_model_downloads.h"

#include <hearth/models/hf_files.h>

#include "downloads/download_queue.h"
#include "downloads/hf_resolver.h"

namespace hearth::app {
namespace {

QString state_text(models::DownloadState state) {
  switch (state) {
    case models::DownloadState::Hashing: return QStringLiteral("checking");
    case models::DownloadState::Downloading: return QStringLiteral("downloading");
    case models::DownloadState::Paused: return QStringLiteral("paused");
    case models::DownloadState::Verifying: return QStringLiteral("verifying");
    case models::DownloadState::Failed: return QStringLiteral("failed");
    case models::DownloadState::Finished:
    case models::DownloadState::Cancelled:
    case models::DownloadState::Idle: return {};
  }
  return {};
}

}  // namespace

AppModelDownloads::AppModelDownloads(QObject* parent)
    : ui::ModelDownloads(parent), queue_(new models::DownloadQueue(2, this)) {}

AppModelDownloads::~AppModelDownloads() = default;

void AppModelDownloads::start(const QString& key, const ui::DownloadOrder& order) {
  if (contains(key)) return;
  const std::string url = order.url.toString().toStdString();
  if (!order.expected_sha256.isEmpty() || !models::parse_hf_url(url)) {
    start_download(key, order);
    return;
  }
  // No SHA-256 in the catalog: Hugging Face publishes it (the file's LFS
  // object id) with the exact size; ask before the first byte.
  resolving_.insert(key);
  auto* resolver = new models::HfResolver(queue_->network(), this);
  connect(resolver, &models::HfResolver::resolved, this, [this, resolver, key, order](const QString& sha, quint64 size) {
    resolver->deleteLater();
    if (!resolving_.remove(key)) return;  // cancelled meanwhile
    ui::DownloadOrder resolved = order;
    resolved.expected_sha256 = sha;
    resolved.expected_size = size;
    start_download(key, resolved);
  });
  connect(resolver, &models::HfResolver::failed, this, [this, resolver, key, order](const QString& message) {
    resolver->deleteLater();
    if (!resolving_.remove(key)) return;
    emit notice(key, tr("No published SHA-256 for %1 (%2); the file will not be verified").arg(key, message));
    start_download(key, order);
  });
  resolver->resolve(order.url);
}

void AppModelDownloads::start_download(const QString& key, const ui::DownloadOrder& order) {
  models::DownloadRequest request;
  request.url = order.url;
  request.destination = order.destination;
  request.expected_sha256 = order.expected_sha256;
  request.expected_size = order.expected_size;
  auto* d = queue_->enqueue(request);
  downloads_.insert(key, d);
  connect(d, &models::Download::progress, this, [this, key] { emit changed(key); });
  connect(d, &models::Download::stateChanged, this, [this, key] { emit changed(key); });
  connect(d, &models::Download::failed, this, [this, key](models::DownloadError, const QString& message) {
    emit failed(key, message);
  });
  connect(d, &models::Download::finished, this, [this, d, key] {
    const QString path = d->request().destination;
    const QString sha = d->sha256_hex();
    downloads_.remove(key);
    queue_->remove(d);
    emit finished(key, path, sha);
  });
  emit changed(key);
}

bool AppModelDownloads::contains(const QString& key) const {
  return downloads_.contains(key) || resolving_.contains(key);
}

std::optional<ui::DownloadStatus> AppModelDownloads::status(const QString& key) const {
  const models::Download* d = downloads_.value(key, nullptr);
  if (!d) return std::nullopt;
  ui::DownloadStatus s;
  s.state = state_text(d->state());
  s.received_bytes = d->received_bytes();
  s.total_bytes = d->total_bytes();
  s.bytes_per_second = d->bytes_per_second();
  s.eta_seconds = d->eta_seconds();
  s.error = d->error_message();
  return s;
}

void AppModelDownloads::pause(const QString& key) {
  if (auto* d = downloads_.value(key, nullptr)) d->pause();
}

void AppModelDownloads::resume(const QString& key) {
  if (auto* d = downloads_.value(key, nullptr)) d->start();
}

void AppModelDownloads::cancel(const QString& key) {
  resolving_.remove(key);
  if (auto* d = downloads_.take(key)) {
    d->cancel();
    queue_->remove(d);
  }
  emit changed(key);
}

}  // namespace hearth::app
