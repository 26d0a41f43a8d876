// The picker's downloads (ui/picker/model_downloads.h) over the app's Qt
// Network downloader: a queue running two at a time, and the Hugging Face
// look-up of a file's published SHA-256 when the catalog has none.
#pragma once

#include <QHash>
#include <QSet>

#include "downloads/download.h"
#include "picker/model_downloads.h"

namespace hearth::models {
class DownloadQueue;
}

namespace hearth::app {

class AppModelDownloads final : public ui::ModelDownloads {
  Q_OBJECT
 public:
  explicit AppModelDownloads(QObject* parent = nullptr);
  ~AppModelDownloads() override;

  void start(const QString& key, const ui::DownloadOrder& order) override;
  bool contains(const QString& key) const override;
  std::optional<ui::DownloadStatus> status(const QString& key) const override;
  void pause(const QString& key) override;
  void resume(const QString& key) override;
  void cancel(const QString& key) override;

 private:
  void start_download(const QString& key, const ui::DownloadOrder& order);

  models::DownloadQueue* queue_;
  QHash<QString, models::Download*> downloads_;  // owned by queue_
  QSet<QString> resolving_;  // keys waiting for the Hugging Face API
};

}  // namespace hearth::app
