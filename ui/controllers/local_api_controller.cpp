#include "controllers/local_api_controller.h"

#include <QClipboard>
#include <QGuiApplication>

namespace hearth::ui {

LocalApiController::LocalApiController(EngineClient* engine, SettingsController* settings, QString key_file,
                                       QObject* parent)
    : QObject(parent), engine_(engine), settings_(settings), key_file_(std::move(key_file)) {
  connect(engine_, &EngineClient::localApiStatus, this, &LocalApiController::on_status);
  // A reset to defaults (or any other change of the stored settings) reaches the engine too.
  connect(settings_, &SettingsController::changed, this, [this] {
    emit settingsChanged();
    if (!told_ || !(settings_->settings().local_api == applied_)) apply(false);
  });
  // Off by default: the engine hears of it only when the user turned it on.
  if (enabled()) apply(false);
}

bool LocalApiController::loopbackOnly() const {
  const QString h = host();
  return h == QLatin1String("127.0.0.1") || h == QLatin1String("::1") || h == QLatin1String("localhost");
}

void LocalApiController::update(const settings::LocalApiSettings& next) { settings_->setLocalApi(next); }

void LocalApiController::setEnabled(bool v) {
  auto next = settings_->settings().local_api;
  next.enabled = v;
  update(next);
}
void LocalApiController::setHost(const QString& v) {
  auto next = settings_->settings().local_api;
  next.host = v.trimmed().toStdString();
  update(next);
}
void LocalApiController::setPort(int v) {
  auto next = settings_->settings().local_api;
  next.port = v;
  update(next);
}
void LocalApiController::setParallel(int v) {
  auto next = settings_->settings().local_api;
  next.parallel = v;
  update(next);
}
void LocalApiController::setContextLength(int v) {
  auto next = settings_->settings().local_api;
  next.context_length = v;
  update(next);
}

void LocalApiController::apply(bool new_key) {
  applied_ = settings_->settings().local_api;
  told_ = true;
  LocalApiRequest r;
  r.enabled = applied_.enabled;
  r.host = QString::fromStdString(applied_.host);
  r.port = applied_.port;
  r.parallel = applied_.parallel;
  r.context_length = applied_.context_length;
  r.key_file = key_file_;
  r.new_key = new_key;
  engine_->configureLocalApi(r);
}

void LocalApiController::regenerateToken() {
  if (enabled()) apply(true);
}

void LocalApiController::copyToken() const {
  if (status_.token.isEmpty()) return;
  if (QClipboard* c = QGuiApplication::clipboard()) c->setText(status_.token);
}

void LocalApiController::on_status(const LocalApiStatus& status) {
  status_ = status;
  emit statusChanged();
}

QString LocalApiController::statusLine() const {
  if (!status_.running) return {};
  QString line = status_.pending == 1 ? tr("API: 1 request")
                                      : tr("API: %1 requests").arg(status_.pending);
  if (status_.tokens_per_second > 0) {
    line += QStringLiteral(" · %1 tok/s · %2/%3 ms")
                .arg(status_.tokens_per_second, 0, 'f', 1)
                .arg(status_.latency_p50_ms, 0, 'f', 0)
                .arg(status_.latency_p95_ms, 0, 'f', 0);
  }
  return line;
}

}  // namespace hearth::ui
