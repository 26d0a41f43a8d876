// API keys of remote endpoints in the system's secret store (Secret Service
// on Linux, Keychain on macOS, Credential Manager on Windows) through
// QtKeychain, by endpoint id. Keys never go to the settings file or the data
// folder. When no secret store runs, a key is kept in memory for this
// session only and `backend_note()` says so, for the settings page to show.
// QtKeychain's jobs are asynchronous; each call here runs one to its end in
// a local event loop. Use from one thread.
#pragma once

#include <hearth/core/result.h>

#include <QHash>
#include <QString>

#include <optional>

namespace hearth::remote {

enum class KeyBackend {
  SecretStore,    // the system's secret store holds the keys
  SessionMemory,  // none answered: keys live until Hearth quits
};

class KeyStore {
 public:
  // `service` names Hearth's entries in the secret store.
  explicit KeyStore(QString service = QStringLiteral("Hearth remote endpoints"));

  Status write(const QString& endpoint_id, const QString& key);
  // nullopt when no key is stored for the endpoint.
  Result<std::optional<QString>> read(const QString& endpoint_id);
  Status remove(const QString& endpoint_id);

  KeyBackend backend() const { return backend_; }
  // Empty while the secret store works; else why keys are kept in memory.
  const QString& backend_note() const { return note_; }

 private:
  void fall_back(const QString& why);

  QString service_;
  KeyBackend backend_ = KeyBackend::SecretStore;
  QString note_;
  QHash<QString, QString> memory_;  // endpoint id -> key, SessionMemory only
};

}  // namespace hearth::remote
