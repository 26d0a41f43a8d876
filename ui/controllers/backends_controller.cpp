#include "controllers/backends_controller.h"

#include <QPointer>
#include <QUuid>
#include <QVariantMap>

#include "controllers/settings_controller.h"
#include "engine/remote_model_path.h"

namespace hearth::ui {

BackendsController::BackendsController(SettingsController* settings, RemoteBackends* backends, QObject* parent)
    : QObject(parent), settings_(settings), backends_(backends) {
  // The engine thread learns the endpoints (and keys) before any load names one.
  backends_->publish(settings_->settings().remote_endpoints);
  for (const auto& e : settings_->settings().remote_endpoints) {
    const QString id = QString::fromStdString(e.id);
    has_key_[id] = backends_->has_key(id);
  }
}

BackendsController::~BackendsController() = default;

QVariantList BackendsController::endpoints() const {
  QVariantList out;
  for (const auto& e : settings_->settings().remote_endpoints) {
    const QString id = QString::fromStdString(e.id);
    out.append(QVariantMap{{QStringLiteral("id"), id},
                           {QStringLiteral("name"), QString::fromStdString(e.name)},
                           {QStringLiteral("baseUrl"), QString::fromStdString(e.base_url)},
                           {QStringLiteral("allowLan"), e.allow_lan},
                           {QStringLiteral("hasKey"), has_key_.count(id) > 0 && has_key_.at(id)}});
  }
  return out;
}

QVariantList BackendsController::remoteModels() const {
  QVariantList out;
  for (const auto& e : settings_->settings().remote_endpoints) {
    const QString id = QString::fromStdString(e.id);
    const auto it = models_.find(id);
    if (it == models_.end()) continue;
    for (const QString& model : it->second) {
      const QString path = remote_model_path(id, model);
      out.append(QVariantMap{{QStringLiteral("path"), path},
                             {QStringLiteral("label"), labelOf(path)},
                             {QStringLiteral("endpoint"), QString::fromStdString(e.name)}});
    }
  }
  return out;
}

QString BackendsController::labelOf(const QString& modelPath) const {
  const auto ref = parse_remote_model_path(modelPath);
  if (!ref) return {};
  const auto* e = find(ref->endpoint_id);
  const QString endpoint = e ? QString::fromStdString(e->name) : tr("removed endpoint");
  return tr("%1 · %2").arg(endpoint, ref->model);
}

const settings::RemoteEndpointSettings* BackendsController::find(const QString& id) const {
  for (const auto& e : settings_->settings().remote_endpoints) {
    if (QString::fromStdString(e.id) == id) return &e;
  }
  return nullptr;
}

void BackendsController::set_error(const QString& error) {
  if (error_ == error) return;
  error_ = error;
  emit errorChanged();
}

bool BackendsController::validate(const QString& name, const QString& base_url, bool allow_lan) {
  if (name.trimmed().isEmpty()) {
    set_error(tr("Give the endpoint a name."));
    return false;
  }
  const QString refused = backends_->check_url(base_url.trimmed(), allow_lan);
  if (!refused.isEmpty()) {
    set_error(refused);
    return false;
  }
  set_error({});
  return true;
}

void BackendsController::commit(std::vector<settings::RemoteEndpointSettings> endpoints) {
  settings_->set_remote_endpoints(std::move(endpoints));
  backends_->publish(settings_->settings().remote_endpoints);
  emit endpointsChanged();
  emit remoteModelsChanged();
}

QString BackendsController::addEndpoint(const QString& name, const QString& baseUrl, const QString& key,
                                        bool allowLan) {
  if (!validate(name, baseUrl, allowLan)) return {};
  const QString id = QUuid::createUuid().toString(QUuid::WithoutBraces);
  if (!key.isEmpty()) {
    const QString failed = backends_->save_key(id, key);
    if (!failed.isEmpty()) {
      set_error(failed);
      return {};
    }
  }
  has_key_[id] = !key.isEmpty();
  settings::RemoteEndpointSettings e;
  e.id = id.toStdString();
  e.name = name.trimmed().toStdString();
  e.base_url = baseUrl.trimmed().toStdString();
  e.allow_lan = allowLan;
  auto all = settings_->settings().remote_endpoints;
  all.push_back(std::move(e));
  commit(std::move(all));
  return id;
}

bool BackendsController::updateEndpoint(const QString& id, const QString& name, const QString& baseUrl,
                                        const QString& key, bool allowLan, bool clearKey) {
  if (!find(id)) {
    set_error(tr("That endpoint is no longer configured."));
    return false;
  }
  if (!validate(name, baseUrl, allowLan)) return false;
  const QString failed = clearKey ? backends_->remove_key(id) : (key.isEmpty() ? QString() : backends_->save_key(id, key));
  if (!failed.isEmpty()) {
    set_error(failed);
    return false;
  }
  if (clearKey) has_key_[id] = false;
  else if (!key.isEmpty()) has_key_[id] = true;
  auto all = settings_->settings().remote_endpoints;
  for (auto& e : all) {
    if (QString::fromStdString(e.id) != id) continue;
    e.name = name.trimmed().toStdString();
    e.base_url = baseUrl.trimmed().toStdString();
    e.allow_lan = allowLan;
  }
  models_.erase(id);  // another URL may serve other models
  commit(std::move(all));
  return true;
}

void BackendsController::removeEndpoint(const QString& id) {
  auto all = settings_->settings().remote_endpoints;
  std::erase_if(all, [&](const auto& e) { return QString::fromStdString(e.id) == id; });
  // A key left behind would outlive the endpoint in the secret store.
  backends_->remove_key(id);
  has_key_.erase(id);
  models_.erase(id);
  commit(std::move(all));
}

void BackendsController::testConnection(const QString& id) { ask_models(id, true); }

void BackendsController::refreshModels() {
  for (const auto& e : settings_->settings().remote_endpoints) ask_models(QString::fromStdString(e.id), false);
}

void BackendsController::ask_models(const QString& id, bool as_test) {
  const auto* e = find(id);
  if (!e) return;
  const int generation = as_test ? ++test_generation_ : test_generation_;
  if (as_test) {
    tested_id_ = id;
    testing_ = true;
    test_ = {};
    emit testChanged();
  }
  EndpointProbe probe{id, QString::fromStdString(e->base_url), e->allow_lan, QString()};
  QPointer<BackendsController> self(this);
  backends_->list_models(probe, [self, id, as_test, generation](const EndpointModels& found) {
    if (!self) return;
    if (found.error.isEmpty()) {
      self->models_[id] = found.models;
      emit self->remoteModelsChanged();
    }
    if (as_test && generation == self->test_generation_) {
      self->testing_ = false;
      self->test_ = found;
      emit self->testChanged();
    }
  });
}

}  // namespace hearth::ui
