// The loaded model as the window sees it: load state and progress, name,
// quant and backend for the status line, and the crash-safe reload at start.
#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QtQml/qqmlregistration.h>

#include <memory>
#include <optional>

#include <hearth/settings/settings.h>

#include "controllers/load_marker.h"
#include "engine/engine_client.h"

namespace hearth::ui {

class SettingsController;

class ModelController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")

  Q_PROPERTY(State state READ state NOTIFY stateChanged)
  Q_PROPERTY(bool ready READ ready NOTIFY stateChanged)
  Q_PROPERTY(bool loading READ loading NOTIFY stateChanged)
  Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
  Q_PROPERTY(QString modelName READ modelName NOTIFY stateChanged)
  Q_PROPERTY(QString modelPath READ modelPath NOTIFY stateChanged)
  Q_PROPERTY(QString quant READ quant NOTIFY stateChanged)
  Q_PROPERTY(QString backend READ backend NOTIFY stateChanged)
  // How replies are drafted (speculative decoding), as the engine set it up.
  Q_PROPERTY(QString speculation READ speculation NOTIFY stateChanged)
  // Empty when the model's own chat template is used; else what is used instead and why.
  Q_PROPERTY(QString chatFormatNotice READ chat_format_notice NOTIFY stateChanged)
  Q_PROPERTY(int contextMax READ contextMax NOTIFY stateChanged)
  // The reasoning switch the loaded model's template offers: {"off", "on"},
  // {"low", "medium", "high"}, or empty (no switch to show).
  Q_PROPERTY(QStringList reasoningChoices READ reasoningChoices NOTIFY stateChanged)
  Q_PROPERTY(QString errorMessage READ errorMessage NOTIFY stateChanged)
  Q_PROPERTY(QString notice READ notice NOTIFY noticeChanged)
  Q_PROPERTY(bool demoAvailable READ demoAvailable CONSTANT)

 public:
  enum class State { NoModel, Loading, Ready, Failed };
  Q_ENUM(State)

  ModelController(EngineClient* engine, SettingsController* settings,
                  std::shared_ptr<const LoadMarker> marker, QString demo_model_path,
                  QObject* parent = nullptr);
  ~ModelController() override;

  // At start: loads `cli_model` if given, else the last model unless loading
  // it crashed the previous run (then says why in `notice`).
  void start(const QString& cli_model);

  State state() const { return state_; }
  bool ready() const { return state_ == State::Ready; }
  bool loading() const { return state_ == State::Loading; }
  double progress() const { return progress_; }
  QString modelName() const { return info_.name; }
  QString modelPath() const { return state_ == State::Loading ? loading_path_ : info_.path; }
  QString quant() const { return info_.quant; }
  QString backend() const { return info_.backend; }
  QString speculation() const { return info_.speculation; }
  QString chat_format_notice() const { return info_.chat_format; }
  int contextMax() const { return info_.context_max; }
  QStringList reasoningChoices() const { return ready() ? info_.reasoning_choices : QStringList(); }
  QString errorMessage() const { return error_; }
  QString notice() const { return notice_; }
  bool demoAvailable() const;
  const ModelInfo& info() const { return info_; }

  Q_INVOKABLE void load(const QString& path);
  Q_INVOKABLE void loadDemo();
  Q_INVOKABLE void reload();
  Q_INVOKABLE void dismissNotice();

 signals:
  void stateChanged();
  void progressChanged();
  void noticeChanged();

 private:
  void on_loaded(const ModelInfo& info);
  void on_failed(const QString& path, const QString& message, qint64 load_id);
  void set_state(State s);
  void end_marker();

  EngineClient* engine_;
  SettingsController* settings_;
  // Null: no crash marker (tests). Shared with the marker thread's jobs.
  std::shared_ptr<const LoadMarker> marker_;
  QString demo_path_;
  State state_ = State::NoModel;
  double progress_ = 0;
  QString loading_path_;
  ModelInfo info_;
  QString error_;
  QString notice_;
  std::optional<settings::LoadSettings> requested_with_;
  // Writes and removes the load marker off the GUI thread (an fsync can stall on a
  // busy disk). One thread, so a marker's removal never overtakes its writing.
  QThreadPool marker_io_;
  // The newest load asked for (its LoadRequest::load_id): a marker write finishing
  // for an older load is ignored, and so are answers to superseded loads, so they
  // neither end the crash marker nor apply their settings.
  qint64 load_attempt_ = 0;
};

}  // namespace hearth::ui
