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

#include <hearth/engine/core/result.h>

#include <QObject>
#include <QUrl>

#include <optional>
#include <string>
#include <string_view>

class QNetworkAccessManager;

namespace hearth::models {

struct HfFileRef {
  std::string repo;      // "owner/name"
  std::string revision;  // "main" or a commit
  std::string path;      // path of the file inside the repository
};

// Parses https://huggingface.co/{owner}/{name}/resolve/{revision}/{path};
// nullopt for any other URL.
std::optional<HfFileRef> parse_hf_url(std::string_view url);

// URL of the tree listing of the folder that holds `ref.path`.
std::string hf_tree_api_url(const HfFileRef& ref);

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
  void resolve(const QUrl& file_url);

 signals:
  void resolved(const QString& sha256, quint64 size);
  void failed(const QString& message);

 private:
  QNetworkAccessManager* network_;
};

}  // namespace hearth::models
