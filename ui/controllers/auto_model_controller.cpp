#include "controllers/auto_model_controller.h"

#include <hearth/models/model_registry.h>
#include <hearth/settings/settings.h>

#include <QFileInfo>
#include <QPointer>
#include <QThreadPool>

#include <atomic>

#include "controllers/backends_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "engine/auto_model_path.h"
#include "engine/remote_model_path.h"

namespace hearth::ui {

struct AutoModelController::Scan {
  std::atomic<uint64_t> generation{0};
};

AutoModelController::AutoModelController(SettingsController* settings, ModelController* model,
                                         BackendsController* backends, QString models_dir, QObject* parent)
    : QObject(parent),
      settings_(settings),
      model_(model),
      backends_(backends),
      models_dir_(std::move(models_dir)),
      scan_(std::make_shared<Scan>()) {
  connect(settings_, &SettingsController::changed, this, &AutoModelController::settingsChanged);
  connect(model_, &ModelController::stateChanged, this, &AutoModelController::activeChanged);
  if (backends_) {
    connect(backends_, &BackendsController::remoteModelsChanged, this, &AutoModelController::merge_candidates);
  }
}

AutoModelController::~AutoModelController() { ++scan_->generation; }

QString AutoModelController::smallPath() const {
  return QString::fromStdString(settings_->settings().auto_model.small_model_path);
}
QString AutoModelController::largePath() const {
  return QString::fromStdString(settings_->settings().auto_model.large_model_path);
}
double AutoModelController::minConfidence() const { return settings_->settings().auto_model.min_confidence; }
double AutoModelController::minFamiliarity() const { return settings_->settings().auto_model.min_familiarity; }
QString AutoModelController::autoPath() const { return QString::fromLatin1(kAutoModelPath); }

void AutoModelController::update(const settings::AutoModelSettings& next) { settings_->set_auto_model(next); }

void AutoModelController::setSmallPath(const QString& path) {
  auto next = settings_->settings().auto_model;
  next.small_model_path = path.toStdString();
  update(next);
}
void AutoModelController::setLargePath(const QString& path) {
  auto next = settings_->settings().auto_model;
  next.large_model_path = path.toStdString();
  update(next);
}
void AutoModelController::setMinConfidence(double value) {
  auto next = settings_->settings().auto_model;
  next.min_confidence = value;
  update(next);
}
void AutoModelController::setMinFamiliarity(double value) {
  auto next = settings_->settings().auto_model;
  next.min_familiarity = value;
  update(next);
}

QString AutoModelController::problem() const {
  const QString small = smallPath(), large = largePath();
  if (small.isEmpty() || large.isEmpty()) return tr("Choose a small and a large model.");
  if (small == large) return tr("The small and the large model are the same model.");
  for (const QString& p : {small, large}) {
    if (!is_remote_model_path(p) && !QFileInfo::exists(p)) return tr("%1 is no longer there.").arg(p);
  }
  return {};
}

bool AutoModelController::active() const { return model_->ready() && is_auto_model_path(model_->info().path); }

void AutoModelController::use() {
  if (!problem().isEmpty()) return;
  model_->load(autoPath());
}

QString AutoModelController::labelOf(const QString& path) const {
  for (const QVariant& v : candidates_) {
    const QVariantMap m = v.toMap();
    if (m.value(QStringLiteral("path")).toString() == path) return m.value(QStringLiteral("label")).toString();
  }
  return {};
}

void AutoModelController::refreshCandidates() {
  const uint64_t generation = ++scan_->generation;
  QPointer<AutoModelController> self(this);
  QThreadPool::globalInstance()->start([self, scan = scan_, generation, folder = models_dir_] {
    QVariantList found;
    for (const auto& m : models::ModelRegistry(folder.toStdString()).scan()) {
      const QString path = QString::fromStdString(m.path.string());
      found.append(QVariantMap{{QStringLiteral("path"), path},
                               {QStringLiteral("label"), QFileInfo(path).completeBaseName()}});
    }
    if (scan->generation != generation) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, scan, generation, found = std::move(found)] {
          if (!self || scan->generation != generation) return;
          self->local_ = found;
          self->merge_candidates();
        },
        Qt::QueuedConnection);
  });
}

void AutoModelController::merge_candidates() {
  candidates_ = local_;
  if (backends_) {
    for (const QVariant& v : backends_->remoteModels()) {
      const QVariantMap m = v.toMap();
      candidates_.append(QVariantMap{{QStringLiteral("path"), m.value(QStringLiteral("path"))},
                                     {QStringLiteral("label"), m.value(QStringLiteral("label"))}});
    }
  }
  emit candidatesChanged();
}

}  // namespace hearth::ui
