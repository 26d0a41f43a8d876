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

#include <hearth/core/result.h>

#include <QObject>
#include <QString>
#include <QUrl>

#include <optional>
#include <string>
#include <string_view>
#include <utility>

class QNetworkAccessManager;

namespace hearth::models {

struct HfFileRef {
  std::string repo;      // "owner/name"
  std::string revision;  // "main" or a commit
  std::string path;      // path of the file inside the repository
};

// Where Hugging Face serves files and its API. A mirror (or a test server)
// can stand in for it: the same paths under another base URL.
inline constexpr std::string_view kHfEndpoint = "https://huggingface.co";

// Parses {endpoint}/{owner}/{name}/resolve/{revision}/{path}; nullopt for
// any other URL.
std::optional<HfFileRef> parse_hf_url(std::string_view url, std::string_view endpoint = kHfEndpoint);

// URL of the tree listing of the folder that holds `ref.path`:
// {endpoint}/api/models/{repo}/tree/{revision}[/{folder}].
std::string hf_tree_api_url(const HfFileRef& ref, std::string_view endpoint = kHfEndpoint);

struct HfFileInfo {
  std::string sha256;  // lowercase hex
  uint64_t size = 0;
};

// Finds `path` in a tree API response and returns its LFS SHA-256 and size.
// NotFound when the file is absent or not stored in LFS (no published hash).
Result<HfFileInfo> parse_hf_tree(std::string_view json_text, std::string_view path);

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
