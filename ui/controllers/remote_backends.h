// What the Backends page needs from the app's remote client: the URL policy,
// the key store, listing an endpoint's models, and handing the endpoints (with
// their keys) to the engine thread. ui/ declares it; the app implements it over
// hearth_remote (app/gui/app_remote_backends.h), so controllers never see
// network code or the secret store. Used on the GUI thread only.
#pragma once

#include <QString>
#include <QStringList>

#include <functional>
#include <vector>

#include <hearth/settings/settings.h>

namespace hearth::ui {

struct EndpointProbe {
  QString id;        // the endpoint's id, for its stored key when `key` is empty
  QString base_url;
  bool allow_lan = false;
  QString key;       // typed but not saved yet; empty: the stored key, if any
};

// What "Test connection" found: the served model ids, or why none.
struct EndpointModels {
  QStringList models;
  QString error;  // empty on success; else the typed error in words ("unauthorized: ...")
};

class RemoteBackends {
 public:
  using ModelsFn = std::function<void(const EndpointModels&)>;

  virtual ~RemoteBackends() = default;

  // Empty when Hearth will talk to `base_url`; else why not (https only, except
  // this machine and, when allowed, private addresses).
  virtual QString check_url(const QString& base_url, bool allow_lan) const = 0;
  // Empty while a secret store keeps keys; else a sentence saying keys last
  // for this run only.
  virtual QString key_store_note() const = 0;
  // Empty on success; else why the key could not be stored or removed.
  virtual QString save_key(const QString& endpoint_id, const QString& key) = 0;
  virtual QString remove_key(const QString& endpoint_id) = 0;
  virtual bool has_key(const QString& endpoint_id) = 0;
  // Asks the endpoint for its models off the GUI thread; `done` runs on the
  // GUI thread, and never after the implementation is gone.
  virtual void list_models(const EndpointProbe& probe, ModelsFn done) = 0;
  // The engine thread's copy of the endpoints, keys read from the key store.
  virtual void publish(const std::vector<settings::RemoteEndpointSettings>& endpoints) = 0;
};

}  // namespace hearth::ui
