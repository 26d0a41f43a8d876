// Settings -> Local API: the switch (off by default), the address and port,
// parallel requests and their context, and what the server is doing (URL,
// the bearer token with copy and regenerate, requests pending and served,
// tokens/s and latency for the status line). The settings persist through
// SettingsController; the engine runs the server (EngineClient).
#pragma once

#include <QObject>
#include <QtQml/qqmlregistration.h>
#include <QString>

#include "controllers/settings_controller.h"
#include "engine/engine_client.h"

namespace hearth::ui {

class LocalApiController : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("Created by the app")
  Q_PROPERTY(bool enabled READ enabled WRITE setEnabled NOTIFY settingsChanged)
  Q_PROPERTY(QString host READ host WRITE setHost NOTIFY settingsChanged)
  Q_PROPERTY(int port READ port WRITE setPort NOTIFY settingsChanged)
  Q_PROPERTY(int parallel READ parallel WRITE setParallel NOTIFY settingsChanged)
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY settingsChanged)
  Q_PROPERTY(int maxParallel READ maxParallel CONSTANT)
  Q_PROPERTY(bool loopbackOnly READ loopbackOnly NOTIFY settingsChanged)
  Q_PROPERTY(bool running READ running NOTIFY statusChanged)
  Q_PROPERTY(QString url READ url NOTIFY statusChanged)
  Q_PROPERTY(QString token READ token NOTIFY statusChanged)
  Q_PROPERTY(QString error READ error NOTIFY statusChanged)
  Q_PROPERTY(qint64 pending READ pending NOTIFY statusChanged)
  Q_PROPERTY(qint64 served READ served NOTIFY statusChanged)
  Q_PROPERTY(double tokensPerSecond READ tokensPerSecond NOTIFY statusChanged)
  Q_PROPERTY(double latencyP50 READ latencyP50 NOTIFY statusChanged)
  Q_PROPERTY(double latencyP95 READ latencyP95 NOTIFY statusChanged)
  Q_PROPERTY(QString statusLine READ statusLine NOTIFY statusChanged)

 public:
  // `key_file`: where the bearer token lives (created 0600 when missing).
  LocalApiController(EngineClient* engine, SettingsController* settings, QString key_file,
                     QObject* parent = nullptr);

  bool enabled() const { return settings_->settings().local_api.enabled; }
  QString host() const { return QString::fromStdString(settings_->settings().local_api.host); }
  int port() const { return settings_->settings().local_api.port; }
  int parallel() const { return settings_->settings().local_api.parallel; }
  int contextLength() const { return settings_->settings().local_api.context_length; }
  int maxParallel() const { return settings::SettingsLimits::kMaxParallel; }
  bool loopbackOnly() const;
  void setEnabled(bool v);
  void setHost(const QString& v);
  void setPort(int v);
  void setParallel(int v);
  void setContextLength(int v);

  bool running() const { return status_.running; }
  QString url() const { return status_.url; }
  QString token() const { return status_.token; }
  QString error() const { return status_.error; }
  qint64 pending() const { return status_.pending; }
  qint64 served() const { return status_.served; }
  double tokensPerSecond() const { return status_.tokens_per_second; }
  double latencyP50() const { return status_.latency_p50_ms; }
  double latencyP95() const { return status_.latency_p95_ms; }
  // "API: 2 requests · 31 tok/s · 48/95 ms" while it runs, else empty.
  QString statusLine() const;

  // Puts the token on the clipboard.
  Q_INVOKABLE void copyToken() const;
  // A new token: clients using the old one are refused from now on.
  Q_INVOKABLE void regenerateToken();

 signals:
  void settingsChanged();
  void statusChanged();

 private:
  void update(const settings::LocalApiSettings& next);
  void apply(bool new_key);
  void on_status(const LocalApiStatus& status);

  EngineClient* engine_;
  SettingsController* settings_;
  QString key_file_;
  settings::LocalApiSettings applied_;  // what the engine was last told
  bool told_ = false;
  LocalApiStatus status_;
};

}  // namespace hearth::ui
