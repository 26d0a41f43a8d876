#include "engine_service/engine_service_client.h"

#include "engine_service/engine_service.h"

#include <chrono>

namespace hearth::app {

EngineServiceClient::EngineServiceClient(std::unique_ptr<ChatEngine> engine, QObject* parent)
    : ui::EngineClient(parent) {
  ui::register_engine_metatypes();
  thread_.setObjectName(QStringLiteral("hearth-engine"));
  service_ = new EngineService(std::move(engine));
  service_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, service_, &QObject::deleteLater);

  // Queued automatically: the service lives on another thread.
  connect(service_, &EngineService::loadProgress, this, &EngineClient::loadProgress);
  connect(service_, &EngineService::modelLoaded, this, &EngineClient::modelLoaded);
  connect(service_, &EngineService::loadFailed, this, &EngineClient::loadFailed);
  connect(service_, &EngineService::modelUnloaded, this, &EngineClient::modelUnloaded);
  connect(service_, &EngineService::chunk, this, &EngineClient::chunk);
  connect(service_, &EngineService::reasoningChunk, this, &EngineClient::reasoningChunk);
  connect(service_, &EngineService::finished, this, &EngineClient::finished);
  connect(service_, &EngineService::failed, this, &EngineClient::failed);
  connect(service_, &EngineService::contextEvent, this, &EngineClient::contextEvent);
  connect(service_, &EngineService::localApiStatus, this, [this](const ui::LocalApiStatus& status) {
    api_running_ = status.running;
    if (api_running_) {
      api_poll_.start();
    } else {
      api_poll_.stop();
    }
    emit localApiStatus(status);
  });
  connect(service_, &EngineService::jobProgress, this, &EngineServiceClient::jobProgress);
  connect(service_, &EngineService::jobFinished, this, &EngineServiceClient::jobFinished);
  connect(service_, &EngineService::jobFailed, this, &EngineServiceClient::jobFailed);
  connect(service_, &EngineService::jobCancelled, this, &EngineServiceClient::jobCancelled);
  api_poll_.setInterval(1000);
  connect(&api_poll_, &QTimer::timeout, this, [this] {
    if (api_running_) emit localApiStatus(service_->local_api_status());
  });
  thread_.start();
}

EngineServiceClient::~EngineServiceClient() {
  // Stop a running load or reply so the thread can finish promptly.
  api_poll_.stop();
  service_->shut_down();
  thread_.quit();
  thread_.wait();
}

void EngineServiceClient::loadModel(const ui::LoadRequest& request) {
  EngineService* service = service_;
  service->supersede_loads(request.load_id);
  QMetaObject::invokeMethod(service, [service, request] { service->load(request); },
                            Qt::QueuedConnection);
}

void EngineServiceClient::unloadModel() {
  EngineService* service = service_;
  QMetaObject::invokeMethod(service, [service] { service->unload(); }, Qt::QueuedConnection);
}

void EngineServiceClient::generate(ui::RequestId id, const ui::GenerationRequest& request) {
  newest_request_ = std::max(newest_request_, id);
  EngineService* service = service_;
  ui::GenerationRequest sent = request;
  if (sent.sent_at_ns == 0) {
    sent.sent_at_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  }
  QMetaObject::invokeMethod(
      service, [service, id, sent] { service->generate(id, sent); }, Qt::QueuedConnection);
}

void EngineServiceClient::cancel(ui::RequestId id) { service_->cancel(id); }

void EngineServiceClient::startJob(qint64 job_id, std::shared_ptr<BackgroundJob> job) {
  EngineService* service = service_;
  QMetaObject::invokeMethod(
      service, [service, job_id, job = std::move(job)]() mutable { service->start_job(job_id, std::move(job)); },
      Qt::QueuedConnection);
}

void EngineServiceClient::cancelJob(qint64 job_id) { service_->cancel_job(job_id); }

void EngineServiceClient::configureLocalApi(const ui::LocalApiRequest& request) {
  EngineService* service = service_;
  QMetaObject::invokeMethod(
      service, [service, request] { service->configure_local_api(request); }, Qt::QueuedConnection);
}

}  // namespace hearth::app
