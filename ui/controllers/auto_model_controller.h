// Settings -> Backends -> Auto model: a small and a large model (downloaded
// files or remote models) behind one "Auto" entry, with the two thresholds
// that decide when the small model hands a question to the large one. "Use
// Auto" loads the pair; each reply then says which model answered and why.
#pragma once

#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <memory>

namespace hearth::settings {
struct AutoModelSettings;
}

namespace hearth::ui {

class SettingsController;
class ModelController;
class BackendsController;

class AutoModelController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  Q_PROPERTY(QString smallPath READ smallPath WRITE setSmallPath NOTIFY settingsChanged)
  Q_PROPERTY(QString largePath READ largePath WRITE setLargePath NOTIFY settingsChanged)
  // Nats per token (mean log-probabilities); lower sends less to the large model.
  Q_PROPERTY(double minConfidence READ minConfidence WRITE setMinConfidence NOTIFY settingsChanged)
  Q_PROPERTY(double minFamiliarity READ minFamiliarity WRITE setMinFamiliarity NOTIFY settingsChanged)
  // [{path, label}]: downloaded model files, then the remote models the
  // endpoints served when last asked.
  Q_PROPERTY(QVariantList candidates READ candidates NOTIFY candidatesChanged)
  // Why the pair cannot be used yet; empty when it can.
  Q_PROPERTY(QString problem READ problem NOTIFY settingsChanged)
  // The loaded model is the Auto pair: replies offer "Ask the large model".
  Q_PROPERTY(bool active READ active NOTIFY activeChanged)
  Q_PROPERTY(QString autoPath READ autoPath CONSTANT)

 public:
  AutoModelController(SettingsController* settings, ModelController* model, BackendsController* backends,
                      QString models_dir, QObject* parent = nullptr);
  ~AutoModelController() override;

  QString smallPath() const;
  QString largePath() const;
  double minConfidence() const;
  double minFamiliarity() const;
  void setSmallPath(const QString& path);
  void setLargePath(const QString& path);
  void setMinConfidence(double value);
  void setMinFamiliarity(double value);
  QVariantList candidates() const { return candidates_; }
  QString problem() const;
  bool active() const;
  QString autoPath() const;

  // Scans the models folder off the GUI thread and merges the remote models.
  Q_INVOKABLE void refreshCandidates();
  // Loads the Auto model (a reload when it is loaded already: new settings).
  Q_INVOKABLE void use();
  // The candidate's label for a path ("" when unknown).
  Q_INVOKABLE QString labelOf(const QString& path) const;

 signals:
  void settingsChanged();
  void candidatesChanged();
  void activeChanged();

 private:
  void update(const settings::AutoModelSettings& next);
  void merge_candidates();

  SettingsController* settings_;
  ModelController* model_;
  BackendsController* backends_;
  QString models_dir_;
  QVariantList local_;      // [{path, label}] from the last scan
  QVariantList candidates_;
  // Answers of a superseded scan, or of one that ends after this object, are dropped.
  struct Scan;
  std::shared_ptr<Scan> scan_;
};

}  // namespace hearth::ui
