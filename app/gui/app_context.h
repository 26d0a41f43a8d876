// AppContext builds and connects everything the window needs: settings,
// storage thread, engine thread, controllers and the QML engine. main() and
// the end-to-end tests construct it the same way.
#pragma once

#include <QObject>
#include <QPointer>
#include <QQmlApplicationEngine>
#include <QSettings>
#include <QString>

#include <memory>
#include <thread>

#include "engine_service/chat_engine.h"
#include "store/conversation_store.h"

namespace hearth::ui {
class ArchiveController;
class BackendsController;
class ChatController;
class DocumentsController;
class LocalApiController;
class SpeculationController;
class AutoModelController;
class EngineClient;
class ModelController;
class SettingsController;
class StorageExecutor;
class MemorySizer;
class ModelDownloads;
}  // namespace hearth::ui

namespace hearth::app {

class CompareController;

struct AppOptions {
  QString data_dir;           // required
  QString model_path;         // from --model; empty: the last model
  QString demo_model_path;    // empty: no one-click demo
  // Where the engine's log messages go (main: the app's log); default: nowhere.
  Logger engine_logger;
  // Names the remote endpoints' keys in the secret store (tests use their own).
  QString key_service = QStringLiteral("Hearth remote endpoints");
};

class AppContext : public QObject {
  Q_OBJECT

 public:
  // `engine` and `store` default to the build's real ones when null.
  explicit AppContext(AppOptions options, std::unique_ptr<ChatEngine> engine = nullptr,
                      std::unique_ptr<ui::ConversationStore> store = nullptr,
                      QObject* parent = nullptr);
  ~AppContext() override;

  // Loads Main.qml into `qml` with the controllers as initial properties and
  // starts the model load and the conversation list. False if QML failed.
  bool show(QQmlApplicationEngine& qml);

  ui::ChatController* chat() const { return chat_; }
  ui::ArchiveController* archive() const { return archive_; }
  ui::ModelController* model() const { return model_; }
  ui::SettingsController* settings() const { return settings_; }
  ui::ModelDownloads* downloads() const { return downloads_; }
  ui::LocalApiController* localApi() const { return local_api_; }
  ui::SpeculationController* speculation() const { return speculation_; }
  ui::AutoModelController* auto_model() const { return auto_model_; }
  ui::DocumentsController* documents() const { return documents_; }
  CompareController* compare() const { return compare_; }
  ui::BackendsController* backends() const { return backends_; }
  const QString& data_dir() const { return options_.data_dir; }

 signals:
  // The GPU probe started by show() finished; the window's gpuFreeBytes
  // (the model picker's free VRAM) now holds `free_bytes` (0: no usable GPU).
  void gpuProbed(double free_bytes);

 private:
  // Asks the GPU for its free memory on a thread of its own: creating a
  // Vulkan instance and querying the device takes from tens of ms to a good
  // part of a second on some drivers, which the window should not wait for.
  void start_gpu_probe(QObject* window);

  AppOptions options_;
  std::unique_ptr<QSettings> qsettings_;
  std::unique_ptr<ui::MemorySizer> sizer_;
  bool persistent_ = false;
  QString storage_problem_;
  ui::StorageExecutor* storage_ = nullptr;
  ui::EngineClient* engine_ = nullptr;
  ui::SettingsController* settings_ = nullptr;
  ui::ModelController* model_ = nullptr;
  ui::LocalApiController* local_api_ = nullptr;
  ui::SpeculationController* speculation_ = nullptr;
  ui::AutoModelController* auto_model_ = nullptr;
  ui::DocumentsController* documents_ = nullptr;
  CompareController* compare_ = nullptr;
  ui::ChatController* chat_ = nullptr;
  ui::ArchiveController* archive_ = nullptr;
  ui::ModelDownloads* downloads_ = nullptr;
  QObject* remote_backends_ = nullptr;  // AppRemoteBackends, the Backends page's client
  ui::BackendsController* backends_ = nullptr;
  QPointer<QObject> window_;  // the loaded window, for the storage notice
  std::thread gpu_probe_;  // joined before anything it could post to goes
};

}  // namespace hearth::app
