#include "gui/app_remote_backends.h"

#include <QCoreApplication>
#include <QThread>

#include <thread>

#include "remote/openai_client.h"

namespace hearth::app {

AppRemoteBackends::AppRemoteBackends(std::shared_ptr<RemoteEndpoints> endpoints, QString key_service,
                                     QObject* parent)
    : QObject(parent), endpoints_(std::move(endpoints)), keys_(std::move(key_service)) {}

AppRemoteBackends::~AppRemoteBackends() {
  // A listing thread posts back to this object: let the running ones end
  // (each is bounded by the connect timeout) so none outlives it.
  while (running_ > 0) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    QThread::msleep(5);
  }
}

QString AppRemoteBackends::check_url(const QString& base_url, bool allow_lan) const {
  const auto checked = remote::checked_base_url(base_url, allow_lan);
  return checked.ok() ? QString() : QString::fromStdString(checked.error().message);
}

QString AppRemoteBackends::key_store_note() const {
  // Already a whole sentence: no secret store, keys in memory until Hearth quits.
  return keys_.backend() == remote::KeyBackend::SecretStore ? QString() : keys_.backend_note();
}

QString AppRemoteBackends::save_key(const QString& endpoint_id, const QString& key) {
  const Status st = keys_.write(endpoint_id, key);
  return st.ok() ? QString() : QString::fromStdString(st.error().message);
}

QString AppRemoteBackends::remove_key(const QString& endpoint_id) {
  const Status st = keys_.remove(endpoint_id);
  return st.ok() ? QString() : QString::fromStdString(st.error().message);
}

QString AppRemoteBackends::stored_key(const QString& endpoint_id) {
  auto key = keys_.read(endpoint_id);
  return key.ok() && key->has_value() ? **key : QString();
}

bool AppRemoteBackends::has_key(const QString& endpoint_id) { return !stored_key(endpoint_id).isEmpty(); }

void AppRemoteBackends::list_models(const ui::EndpointProbe& probe, ModelsFn done) {
  remote::EndpointConfig config;
  config.base_url = probe.base_url;
  config.allow_lan = probe.allow_lan;
  config.api_key = probe.key.isEmpty() ? stored_key(probe.id) : probe.key;
  ++running_;
  // The client blocks in a local event loop: it runs on a thread of its own
  // (created, used and destroyed there) so the window stays live.
  std::thread([this, config, done = std::move(done)] {
    ui::EndpointModels found;
    {
      remote::OpenAiClient client(config);
      auto models = client.list_models();
      if (models.ok()) {
        for (const auto& m : *models) found.models.append(QString::fromStdString(m.id));
      } else {
        found.error = QStringLiteral("%1: %2").arg(QString::fromLatin1(remote::to_string(models.error().kind)),
                                                   QString::fromStdString(models.error().message));
      }
    }
    QMetaObject::invokeMethod(this, [this, found, done] {
      --running_;
      done(found);
    }, Qt::QueuedConnection);
  }).detach();
}

void AppRemoteBackends::publish(const std::vector<settings::RemoteEndpointSettings>& endpoints) {
  std::map<std::string, RemoteEndpointEntry> entries;
  for (const auto& e : endpoints) {
    RemoteEndpointEntry entry;
    entry.name = QString::fromStdString(e.name);
    entry.config.base_url = QString::fromStdString(e.base_url);
    entry.config.allow_lan = e.allow_lan;
    entry.config.inactivity_timeout_ms = e.inactivity_timeout_s * 1000;
    entry.config.api_key = stored_key(QString::fromStdString(e.id));
    entries.emplace(e.id, std::move(entry));
  }
  endpoints_->replace(std::move(entries));
}

}  // namespace hearth::app
