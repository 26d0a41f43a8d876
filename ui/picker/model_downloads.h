// The model downloads the picker starts and shows. ui/ declares what it needs;
// the app implements it over its Qt Network downloader (app/downloads, wired in
// app/gui/app_model_downloads.h) and hands it to the picker, so the view model
// never sees network code. Every download is named by the picker's key
// ("id:quant"). Lives on the GUI thread; signals arrive there.
#pragma once

#include <QObject>
#include <QString>
#include <QUrl>
#include <QtQml/qqmlregistration.h>

#include <cstdint>
#include <optional>

namespace hearth::ui {

// What to fetch and how to check it.
struct DownloadOrder {
  QUrl url;
  QString destination;      // final path of the file
  QString expected_sha256;  // 64 lowercase hex digits; empty: use the published one if any
  std::optional<uint64_t> expected_size;
};

// One running (or paused, or failed) download as the picker shows it.
struct DownloadStatus {
  QString state;  // "checking" | "downloading" | "paused" | "verifying" | "failed" | ""
  uint64_t received_bytes = 0;
  std::optional<uint64_t> total_bytes;
  double bytes_per_second = 0;
  std::optional<double> eta_seconds;
  QString error;
};

class ModelDownloads : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Provided by the app")

 public:
  using QObject::QObject;

  // Starts the download of `key`. Without an expected SHA-256, the one the
  // host publishes (Hugging Face) is looked up first; when there is none the
  // download runs unverified and `notice` says so.
  virtual void start(const QString& key, const DownloadOrder& order) = 0;
  // True from start() until the download finished or was cancelled.
  virtual bool contains(const QString& key) const = 0;
  // nullopt while the checksum is being looked up, or for an unknown key.
  virtual std::optional<DownloadStatus> status(const QString& key) const = 0;
  virtual void pause(const QString& key) = 0;
  virtual void resume(const QString& key) = 0;
  // Stops and deletes the partial file; the key is forgotten.
  virtual void cancel(const QString& key) = 0;

 signals:
  void changed(const QString& key);
  void failed(const QString& key, const QString& message);
  // Something the user should know that does not stop the download.
  void notice(const QString& key, const QString& message);
  // Verified and in place at `path` (durable on disk); the key is forgotten.
  void finished(const QString& key, const QString& path, const QString& sha256);
};

}  // namespace hearth::ui
