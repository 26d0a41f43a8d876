#include "controllers/model_controller.h"

#include <QFileInfo>

#include "controllers/settings_controller.h"
#include "engine/auto_model_path.h"
#include "engine/remote_model_path.h"

namespace hearth::ui {
namespace {

LoadRequest make_request(const QString& path, const settings::LoadSettings& s,
                         const settings::AutoModelSettings& auto_model) {
  LoadRequest r;
  r.model_path = path;
  r.context_length = s.context_length;
  r.memory_budget_mib = s.memory_budget_mib;
  r.kv_cache_type = QString::fromLatin1(settings::to_string(s.kv_cache_type));
  r.threads = s.threads;
  r.gpu_device = QString::fromStdString(s.gpu_device);
  r.gpu_layers = s.gpu_layers;
  r.speculation = QString::fromLatin1(settings::to_string(s.speculation.mode));
  r.draft_model_path = QString::fromStdString(s.speculation.draft_model_path);
  r.draft_max = s.speculation.draft_max;
  r.draft_backend = QString::fromLatin1(settings::to_string(s.speculation.draft_backend));
  if (is_auto_model_path(path)) {
    r.auto_small_path = QString::fromStdString(auto_model.small_model_path);
    r.auto_large_path = QString::fromStdString(auto_model.large_model_path);
    r.auto_min_confidence = auto_model.min_confidence;
    r.auto_min_familiarity = auto_model.min_familiarity;
  }
  return r;
}

}  // namespace

ModelController::ModelController(EngineClient* engine, SettingsController* settings,
                                 std::shared_ptr<const LoadMarker> marker, QString demo_model_path,
                                 QObject* parent)
    : QObject(parent),
      engine_(engine),
      settings_(settings),
      marker_(std::move(marker)),
      demo_path_(std::move(demo_model_path)) {
  connect(engine_, &EngineClient::loadProgress, this, [this](double f) {
    progress_ = f;
    emit progressChanged();
  });
  connect(engine_, &EngineClient::modelLoaded, this, &ModelController::on_loaded);
  connect(engine_, &EngineClient::loadFailed, this, &ModelController::on_failed);
  connect(settings_, &SettingsController::reloadRequested, this, &ModelController::reload);
  marker_io_.setMaxThreadCount(1);
}

// Marker jobs post back to `this`; they finish before it goes (each is one small
// file operation), and Qt drops calls still queued for a destroyed object.
ModelController::~ModelController() { marker_io_.waitForDone(); }

void ModelController::end_marker() {
  if (!marker_) return;
  marker_io_.start([marker = marker_] { marker->end(); });
}

bool ModelController::demoAvailable() const {
  return !demo_path_.isEmpty() && QFileInfo::exists(demo_path_);
}

void ModelController::start(const QString& cli_model) {
  if (!cli_model.isEmpty()) {
    if (marker_) marker_->end();
    load(cli_model);
    return;
  }
  if (marker_) {
    if (auto crashed = marker_->interrupted_model()) {
      marker_->end();
      notice_ = tr("Hearth did not reopen %1 because loading it stopped the previous run. "
                   "Load it again from Settings to retry, or choose another model.")
                    .arg(QFileInfo(QString::fromStdString(*crashed)).fileName());
      emit noticeChanged();
      return;
    }
  }
  const QString last = QString::fromStdString(settings_->settings().last_model_path);
  if (!last.isEmpty() && (QFileInfo::exists(last) || is_auto_model_path(last))) load(last);
}

void ModelController::load(const QString& path) {
  if (path.isEmpty()) return;
  loading_path_ = path;
  progress_ = 0;
  error_.clear();
  requested_with_ = settings_->settings().load;
  set_state(State::Loading);
  emit progressChanged();
  LoadRequest request = make_request(path, *requested_with_, settings_->settings().auto_model);
  const qint64 attempt = ++load_attempt_;
  request.load_id = attempt;
  if (!marker_) {
    engine_->loadModel(request);
    return;
  }
  // The marker must be on disk before the engine touches the file, so the engine
  // is asked only once the marker thread has written and synced it.
  marker_io_.start([this, marker = marker_, request, attempt] {
    marker->begin(request.model_path.toStdString());
    QMetaObject::invokeMethod(this, [this, request, attempt] {
      if (attempt == load_attempt_) engine_->loadModel(request);
    }, Qt::QueuedConnection);
  });
}

void ModelController::loadDemo() { load(demo_path_); }

void ModelController::reload() {
  const QString path = info_.path.isEmpty() ? loading_path_ : info_.path;
  load(path);
}

void ModelController::dismissNotice() {
  notice_.clear();
  emit noticeChanged();
}

void ModelController::on_loaded(const ModelInfo& info) {
  if (info.load_id != 0 && info.load_id != load_attempt_) return;  // superseded
  end_marker();
  info_ = info;
  progress_ = 1;
  settings_->set_last_model_path(info.path);
  settings_->set_loaded_model(info.shape, info.context_train, requested_with_);
  settings_->set_loaded_draft(info.draft_shape, info.draft_path);
  set_state(State::Ready);
  emit progressChanged();
}

void ModelController::on_failed(const QString& path, const QString& message, qint64 load_id) {
  if (load_id != 0 && load_id != load_attempt_) return;  // superseded
  end_marker();
  // A remote model is named by its id (which may hold slashes), a file by its name.
  const auto remote = parse_remote_model_path(path);
  error_ = tr("Could not load %1: %2").arg(remote ? remote->model : QFileInfo(path).fileName(), message);
  info_ = ModelInfo{};
  settings_->set_loaded_model(std::nullopt, 0, std::nullopt);
  settings_->set_loaded_draft(std::nullopt, QString());
  set_state(State::Failed);
}

void ModelController::set_state(State s) {
  state_ = s;
  emit stateChanged();
}

}  // namespace hearth::ui
