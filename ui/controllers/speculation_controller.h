// Settings -> Speculative decoding: off, n-gram drafts (the default: no
// second model) or a draft model, chosen among the downloaded models that
// share the loaded model's vocabulary and are smaller than it; the longest
// draft; where the draft model runs (the CPU, or a Vulkan GPU when one is
// present); and what the engine made of the choice. The settings persist
// through SettingsController (they take effect at the next load).
#pragma once

#include <QObject>
#include <QString>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <memory>

#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"

namespace hearth::ui {

class SpeculationController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")
  Q_PROPERTY(QString mode READ mode WRITE setMode NOTIFY settingsChanged)
  Q_PROPERTY(QString draftModelPath READ draftModelPath WRITE setDraftModelPath NOTIFY settingsChanged)
  Q_PROPERTY(int draftMax READ draftMax WRITE setDraftMax NOTIFY settingsChanged)
  Q_PROPERTY(int maxDraft READ maxDraft CONSTANT)
  // Where the draft model runs: "cpu" (the default) or "vulkan".
  Q_PROPERTY(QString draftBackend READ draftBackend WRITE setDraftBackend NOTIFY settingsChanged)
  // Whether a Vulkan GPU is present (the probe found one, or the loaded
  // model runs on one): only then is "vulkan" offered and accepted.
  Q_PROPERTY(bool gpuAvailable READ gpuAvailable NOTIFY gpuChanged)
  // "Vulkan: <device>", or empty without one.
  Q_PROPERTY(QString gpuName READ gpuName NOTIFY gpuChanged)
  // [{name, path, sizeBytes}] of the models that can draft for the loaded one.
  Q_PROPERTY(QVariantList draftModels READ draftModels NOTIFY draftModelsChanged)
  // Why the list is short: no model loaded, models left out and why.
  Q_PROPERTY(QString draftModelsNote READ draftModelsNote NOTIFY draftModelsChanged)
  Q_PROPERTY(bool scanning READ scanning NOTIFY draftModelsChanged)
  // What the engine uses now ("n-gram drafts", "draft model X", "off: why").
  Q_PROPERTY(QString status READ status NOTIFY statusChanged)

 public:
  SpeculationController(SettingsController* settings, ModelController* model, QString models_dir,
                        QObject* parent = nullptr);
  ~SpeculationController() override;

  QString mode() const;
  QString draftModelPath() const;
  int draftMax() const;
  int maxDraft() const { return settings::SettingsLimits::kMaxDraft; }
  void setMode(const QString& mode);
  void setDraftModelPath(const QString& path);
  void setDraftMax(int n);
  QString draftBackend() const;
  // "vulkan" is refused (the setting stays) while no GPU is present.
  void setDraftBackend(const QString& backend);
  bool gpuAvailable() const { return !gpuName().isEmpty(); }
  QString gpuName() const;
  // The GPU probe's answer: "Vulkan: <device>", or empty when none is usable.
  void set_gpu_device(const QString& description);

  QVariantList draftModels() const { return draft_models_; }
  QString draftModelsNote() const { return note_; }
  bool scanning() const { return scanning_; }
  QString status() const;

  // Looks through the models folder again (off the GUI thread: each file's
  // vocabulary is read from its header).
  Q_INVOKABLE void refreshDraftModels();

 signals:
  void settingsChanged();
  void draftModelsChanged();
  void statusChanged();
  void gpuChanged();

 private:
  struct Scan;
  void update(const settings::SpeculationSettings& next);

  SettingsController* settings_;
  ModelController* model_;
  QString models_dir_;
  QString gpu_device_;
  QVariantList draft_models_;
  QString note_;
  bool scanning_ = false;
  // Shared with the scan in flight, which drops its answer when a newer
  // scan started or this controller is gone.
  std::shared_ptr<Scan> scan_;
};

}  // namespace hearth::ui
