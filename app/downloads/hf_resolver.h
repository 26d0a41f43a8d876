// Expected SHA-256 and size of a file on Hugging Face. Large files there are
// Git LFS objects whose object id *is* the SHA-256 of the content, published
// by the tree API:
//   GET https://huggingface.co/api/models/{owner}/{repo}/tree/{revision}/{folder}
//   -> [{"type": "file", "path": "...", "size": N,
//        "lfs": {"oid": "<sha256 hex>", "size": N, "pointerSize": 135}}, ...]
// Hearth uses this API (not the X-Linked-Etag header of the resolve URL)
// because it gives the size too, which the free-space check needs before the
// first byte is fetched.
#pragma once

#include <hearth/models/hf_files.h>

#include <QObject>
#include <QString>
#include <QUrl>

#include <utility>

class QNetworkAccessManager;

namespace hearth::models {

// Asynchronous look-up with the given network manager (HTTPS only).
class HfResolver : public QObject {
  Q_OBJECT
 public:
  explicit HfResolver(QNetworkAccessManager* network, QObject* parent = nullptr);
  // Another base URL for file URLs and the API (checked by the caller, who
  // knows its scheme policy). Default kHfEndpoint.
  void set_endpoint(QString endpoint) { endpoint_ = std::move(endpoint); }
  void resolve(const QUrl& file_url);

 signals:
  void resolved(const QString& sha256, quint64 size);
  void failed(const QString& message);

 private:
  QNetworkAccessManager* network_;
  QString endpoint_ = QString::fromLatin1(kHfEndpoint.data(), static_cast<qsizetype>(kHfEndpoint.size()));
};

}  // namespace hearth::models
