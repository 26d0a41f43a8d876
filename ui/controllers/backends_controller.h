// Settings -> Backends: "This computer" and the remote OpenAI-compatible
// endpoints, added, edited and removed here. Names, URLs and the LAN switch go
// to the settings; keys go to the key store only (RemoteBackends). "Test
// connection" lists an endpoint's models or shows the typed error; the models
// found are offered in the model picker beside the local files.
#pragma once

#include <QObject>
#include <QStringList>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <map>

#include "controllers/remote_backends.h"

namespace hearth::ui {

class SettingsController;

class BackendsController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  // [{id, name, baseUrl, allowLan, hasKey}], in the settings' order.
  Q_PROPERTY(QVariantList endpoints READ endpoints NOTIFY endpointsChanged)
  // Empty while a secret store keeps keys; else "kept for this run only".
  Q_PROPERTY(QString keyNote READ keyNote NOTIFY endpointsChanged)
  // [{path, label, endpoint}] for the model picker: every model an endpoint served when last asked.
  Q_PROPERTY(QVariantList remoteModels READ remoteModels NOTIFY remoteModelsChanged)
  // The last "Test connection": which endpoint, running or not, and its answer.
  Q_PROPERTY(QString testedId READ testedId NOTIFY testChanged)
  Q_PROPERTY(bool testing READ testing NOTIFY testChanged)
  Q_PROPERTY(QStringList testModels READ testModels NOTIFY testChanged)
  Q_PROPERTY(QString testError READ testError NOTIFY testChanged)
  // Why the last add or edit was refused; empty after one that succeeded.
  Q_PROPERTY(QString error READ error NOTIFY errorChanged)

 public:
  BackendsController(SettingsController* settings, RemoteBackends* backends, QObject* parent = nullptr);
  ~BackendsController() override;

  QVariantList endpoints() const;
  QString keyNote() const { return backends_->key_store_note(); }
  QVariantList remoteModels() const;
  QString testedId() const { return tested_id_; }
  bool testing() const { return testing_; }
  QStringList testModels() const { return test_.models; }
  QString testError() const { return test_.error; }
  QString error() const { return error_; }

  // The new endpoint's id, or empty when refused (`error` says why). An empty key: none.
  Q_INVOKABLE QString addEndpoint(const QString& name, const QString& baseUrl, const QString& key, bool allowLan);
  // An empty key keeps the stored one; `clearKey` removes it.
  Q_INVOKABLE bool updateEndpoint(const QString& id, const QString& name, const QString& baseUrl,
                                  const QString& key, bool allowLan, bool clearKey = false);
  Q_INVOKABLE void removeEndpoint(const QString& id);
  Q_INVOKABLE void testConnection(const QString& id);
  // Asks every endpoint for its models (for the picker).
  Q_INVOKABLE void refreshModels();
  // "GPU box · llama-3.1-70b" for a remote model path; empty for a local one.
  Q_INVOKABLE QString labelOf(const QString& modelPath) const;

 signals:
  void endpointsChanged();
  void remoteModelsChanged();
  void testChanged();
  void errorChanged();

 private:
  const settings::RemoteEndpointSettings* find(const QString& id) const;
  bool validate(const QString& name, const QString& base_url, bool allow_lan);
  void commit(std::vector<settings::RemoteEndpointSettings> endpoints);
  void ask_models(const QString& id, bool as_test);
  void set_error(const QString& error);

  SettingsController* settings_;
  RemoteBackends* backends_;
  // Endpoint id -> a key is stored; read once at start and kept up to date
  // here, so the page's bindings never wait on the secret store.
  std::map<QString, bool> has_key_;
  std::map<QString, QStringList> models_;  // endpoint id -> models it served when last asked
  QString tested_id_;
  bool testing_ = false;
  EndpointModels test_;
  QString error_;
  // Answers to a superseded test are dropped.
  int test_generation_ = 0;
};

}  // namespace hearth::ui
