// How a remote model is named where a model file's path would be: the load
// request, the last model in the settings, a conversation's model. The form
// "remote:<endpoint id>/<model id>" cannot be mistaken for a file path, and
// the model id may itself hold slashes ("meta-llama/Llama-3.1-70B").
#pragma once

#include <QString>

#include <optional>

namespace hearth::ui {

struct RemoteModelRef {
  QString endpoint_id;
  QString model;
};

inline constexpr const char* kRemoteModelScheme = "remote:";

inline QString remote_model_path(const QString& endpoint_id, const QString& model) {
  return QString::fromLatin1(kRemoteModelScheme) + endpoint_id + QLatin1Char('/') + model;
}

inline bool is_remote_model_path(const QString& path) {
  return path.startsWith(QLatin1String(kRemoteModelScheme));
}

// nullopt for a local path or a malformed remote one (no endpoint or no model).
inline std::optional<RemoteModelRef> parse_remote_model_path(const QString& path) {
  if (!is_remote_model_path(path)) return std::nullopt;
  const QString rest = path.mid(static_cast<qsizetype>(qstrlen(kRemoteModelScheme)));
  const qsizetype slash = rest.indexOf(QLatin1Char('/'));
  if (slash <= 0 || slash + 1 >= rest.size()) return std::nullopt;
  return RemoteModelRef{rest.left(slash), rest.mid(slash + 1)};
}

}  // namespace hearth::ui
