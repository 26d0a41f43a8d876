#include "gui/app_context.h"

#include <QDir>
#include <QPointer>
#include <QtQml/qqmlextensionplugin.h>
#include <hearth/models/machine_info.h>

#include "common/settings_store.h"
#include "compare/compare_controller.h"
#include "common/version.h"
#include "documents/engine_embedding.h"
#include "documents/pdf_extractor.h"
#include "controllers/archive_controller.h"
#include "controllers/auto_model_controller.h"
#include "controllers/backends_controller.h"
#include "controllers/chat_controller.h"
#include "controllers/documents_controller.h"
#include "controllers/local_api_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "controllers/speculation_controller.h"
#include "engine/memory_sizer.h"
#include "engine_service/caching_chat_engine.h"
#include "engine_service/engine_service_client.h"
#include "engine_service/gpu_probe.h"
#include "engine_service/routing_chat_engine.h"
#include "gui/app_model_downloads.h"
#include "gui/app_remote_backends.h"
#include "gui/deferred_store.h"
#include "gui/file_load_marker.h"
#include "gui/store_factory.h"
#include "store/storage_executor.h"
#include "ui_module.h"

Q_IMPORT_QML_PLUGIN(Hearth_UiPlugin)

namespace hearth::app {

AppContext::AppContext(AppOptions options, std::unique_ptr<ChatEngine> engine,
                       std::unique_ptr<ui::ConversationStore> store, QObject* parent)
    : QObject(parent), options_(std::move(options)) {
  QDir().mkpath(options_.data_dir);
  const QDir dir(options_.data_dir);
  qsettings_ = std::make_unique<QSettings>(dir.filePath(QStringLiteral("settings.ini")),
                                           QSettings::IniFormat);
  sizer_ = std::make_unique<ui::EngineMemorySizer>();

  if (store) {
    persistent_ = true;
  } else {
    // Opened by the storage thread's first job: checking, migrating and recovering
    // the database can take a while and the window should not wait for it.
    store = std::make_unique<DeferredStore>(
        [data_dir = options_.data_dir] { return open_conversation_store(data_dir); },
        [this](const OpenedStore& opened) {
          QMetaObject::invokeMethod(
              this,
              [this, persistent = opened.persistent, problem = opened.problem] {
                persistent_ = persistent;
                storage_problem_ = problem;
                if (window_) window_->setProperty("storageNotice", problem);
              },
              Qt::QueuedConnection);
        });
  }
  storage_ = new ui::StorageExecutor(std::move(store), this);
  if (!engine) {
    engine = make_default_chat_engine(dir.filePath(QStringLiteral("prefix-cache")), options_.engine_logger);
  }
  // Repeated deterministic requests are answered from a cache beside the database.
  engine = std::make_unique<CachingChatEngine>(
      std::move(engine), dir.filePath(QStringLiteral("response-cache.sqlite3")).toStdString(),
      CachingChatEngine::kDefaultCapacityBytes, options_.engine_logger);
  // Remote models bypass the cache: their answers are the server's to repeat.
  auto endpoints = std::make_shared<RemoteEndpoints>();
  // The Auto model's local halves are engines of their own, loaded beside
  // each other while the main one stays unloaded.
  auto make_local = [logger = options_.engine_logger] { return make_default_chat_engine(QString(), logger); };
  engine = std::make_unique<RoutingChatEngine>(std::move(engine), endpoints, make_local, options_.engine_logger);
  auto* engine_client = new EngineServiceClient(std::move(engine), this);
  engine_ = engine_client;

  QSettings* qs = qsettings_.get();
  settings_ = new ui::SettingsController(
      load_settings(*qs), [qs](const settings::Settings& s) { save_settings(*qs, s); }, sizer_.get(), this);
  model_ = new ui::ModelController(
      engine_, settings_,
      std::make_shared<FileLoadMarker>(dir.filePath(QStringLiteral("model-load.marker")).toStdString()),
      options_.demo_model_path, this);
  chat_ = new ui::ChatController(storage_, engine_, model_, settings_, this);
  archive_ = new ui::ArchiveController(storage_, this);
  downloads_ = new AppModelDownloads(this);
  auto* remote_backends = new AppRemoteBackends(endpoints, options_.key_service, this);
  remote_backends_ = remote_backends;
  backends_ = new ui::BackendsController(settings_, remote_backends, this);
  // The local API's token lives beside the settings, readable by this user only.
  local_api_ = new ui::LocalApiController(engine_, settings_, dir.filePath(QStringLiteral("api-key")), this);
  // Documents: libraries in the conversation database, PDF through Poppler.
  documents_ = new ui::DocumentsController(
      storage_, chat_->conversation(), chat_->reply(), settings_, add_document_formats,
      [logger = options_.engine_logger](const QString& path) { return load_engine_embedding(path, logger); }, this);
  speculation_ = new ui::SpeculationController(settings_, model_,
                                               QString::fromStdString(models::default_models_dir().string()), this);
  auto_model_ = new ui::AutoModelController(settings_, model_, backends_,
                                            QString::fromStdString(models::default_models_dir().string()), this);
  // Compare levels: jobs on the engine thread's queue; charts and partial
  // files under the data directory.
  compare_ = new CompareController(engine_client, settings_, storage_, dir.filePath(QStringLiteral("compare")),
                                   dir.filePath(QStringLiteral("compare/work")),
                                   QStringLiteral(":/Hearth/Ui/resources/compare/builtin-prompts.jsonl"), this);
  // Imported conversations appear in the sidebar.
  connect(archive_, &ui::ArchiveController::imported, chat_, &ui::ChatController::refreshConversations);
}

AppContext::~AppContext() {
  if (gpu_probe_.joinable()) gpu_probe_.join();
  // Order matters. Jobs already queued run to the end first, so none is in
  // flight while its receiver goes (their results, posted back, are then
  // dropped with the receiver). The controller then flushes its last writes
  // into the queue, and deleting the executor drains and joins it.
  storage_->drain();
  delete compare_;  // cancels a running comparison before the engine goes
  compare_ = nullptr;
  delete documents_;
  documents_ = nullptr;
  delete auto_model_;
  auto_model_ = nullptr;
  delete speculation_;
  speculation_ = nullptr;
  delete local_api_;
  local_api_ = nullptr;
  delete archive_;
  archive_ = nullptr;
  delete backends_;
  backends_ = nullptr;
  delete remote_backends_;
  remote_backends_ = nullptr;
  delete chat_;
  chat_ = nullptr;
  delete model_;
  model_ = nullptr;
  delete engine_;
  engine_ = nullptr;
  delete storage_;
  storage_ = nullptr;
}

bool AppContext::show(QQmlApplicationEngine& qml) {
  qml.addImportPath(QStringLiteral("qrc:/"));
  // Free VRAM for the model picker's fit verdicts arrives from the probe
  // started below; until then the picker judges without a GPU.
  qml.setInitialProperties({
      {QStringLiteral("gpuFreeBytes"), 0.0},
      {QStringLiteral("chat"), QVariant::fromValue(chat_)},
      {QStringLiteral("archive"), QVariant::fromValue(archive_)},
      {QStringLiteral("backends"), QVariant::fromValue(backends_)},
      {QStringLiteral("downloads"), QVariant::fromValue(downloads_)},
      {QStringLiteral("localApi"), QVariant::fromValue(local_api_)},
      {QStringLiteral("speculation"), QVariant::fromValue(speculation_)},
      {QStringLiteral("autoModel"), QVariant::fromValue(auto_model_)},
      {QStringLiteral("documents"), QVariant::fromValue(documents_)},
      {QStringLiteral("compare"), QVariant::fromValue(static_cast<QObject*>(compare_))},
      {QStringLiteral("model"), QVariant::fromValue(model_)},
      {QStringLiteral("settings"), QVariant::fromValue(settings_)},
      {QStringLiteral("storageNotice"), storage_problem_},
      {QStringLiteral("appVersion"), QString::fromLatin1(kVersion)},
  });
  qml.load(QUrl(QString::fromUtf8(ui::kMainQmlUrl)));
  if (qml.rootObjects().isEmpty()) return false;
  window_ = qml.rootObjects().first();
  // The database may have reported while QML loaded.
  window_->setProperty("storageNotice", storage_problem_);
  start_gpu_probe(qml.rootObjects().first());
  model_->start(options_.model_path);
  chat_->refreshConversations();
  backends_->refreshModels();  // the picker offers what the endpoints serve
  return true;
}

void AppContext::start_gpu_probe(QObject* window) {
  if (gpu_probe_.joinable()) return;  // one probe per run
  QPointer<QObject> target(window);
  gpu_probe_ = std::thread([this, target, load = settings_->settings().load, logger = options_.engine_logger] {
    const auto gpu = probe_gpu_memory(load, logger);
    const double free_bytes = gpu ? static_cast<double>(gpu->free_bytes) : 0.0;
    // A draft model may run on the GPU while the model stays on the CPU
    // (gpu_layers 0): the device is looked for anyway.
    auto any_load = load;
    any_load.gpu_layers = -1;
    const auto device = gpu ? gpu : probe_gpu_memory(any_load, logger);
    const QString device_name = device ? QString::fromStdString(device->description) : QString();
    // Back on the GUI thread; dropped with `this` if the app is already going.
    QMetaObject::invokeMethod(
        this,
        [this, target, free_bytes, device_name] {
          if (target) target->setProperty("gpuFreeBytes", free_bytes);
          if (speculation_) speculation_->set_gpu_device(device_name);
          if (compare_) compare_->set_vram_free_bytes(static_cast<uint64_t>(free_bytes));
          emit gpuProbed(free_bytes);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace hearth::app
