// The Backends page's remote client (ui/controllers/remote_backends.h) over
// hearth_remote: the endpoint URL policy, the KeyStore, model listing on a
// worker thread, and the engine thread's RemoteEndpoints with keys filled in.
// Lives on the GUI thread.
#pragma once

#include <QObject>

#include <memory>

#include "controllers/remote_backends.h"
#include "engine_service/remote_endpoints.h"
#include "remote/key_store.h"

namespace hearth::app {

// A plain QObject (no signals of its own): the context its listings post back to.
class AppRemoteBackends final : public QObject, public ui::RemoteBackends {
 public:
  // `key_service` names the key store's entries (tests use their own).
  AppRemoteBackends(std::shared_ptr<RemoteEndpoints> endpoints, QString key_service, QObject* parent = nullptr);
  ~AppRemoteBackends() override;

  QString check_url(const QString& base_url, bool allow_lan) const override;
  QString key_store_note() const override;
  QString save_key(const QString& endpoint_id, const QString& key) override;
  QString remove_key(const QString& endpoint_id) override;
  bool has_key(const QString& endpoint_id) override;
  void list_models(const ui::EndpointProbe& probe, ModelsFn done) override;
  void publish(const std::vector<settings::RemoteEndpointSettings>& endpoints) override;

 private:
  QString stored_key(const QString& endpoint_id);

  std::shared_ptr<RemoteEndpoints> endpoints_;
  remote::KeyStore keys_;
  int running_ = 0;  // model listings in flight; the destructor waits for them
};

}  // namespace hearth::app
