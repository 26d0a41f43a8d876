// The GUI-thread side of the EngineService: owns the engine thread, forwards
// calls to the worker with queued invocations and re-emits its signals on the
// GUI thread. Never blocks except in the destructor (joining the thread).
#pragma once

#include <QThread>
#include <QTimer>

#include <memory>

#include "engine/engine_client.h"
#include "engine_service/background_job.h"
#include "engine_service/chat_engine.h"

namespace hearth::app {

class EngineService;

class EngineServiceClient final : public ui::EngineClient {
  Q_OBJECT

 public:
  explicit EngineServiceClient(std::unique_ptr<ChatEngine> engine, QObject* parent = nullptr);
  ~EngineServiceClient() override;

  void loadModel(const ui::LoadRequest& request) override;
  void unloadModel() override;
  void generate(ui::RequestId id, const ui::GenerationRequest& request) override;
  void cancel(ui::RequestId id) override;
  void configureLocalApi(const ui::LocalApiRequest& request) override;

  // A long job on the engine thread, a step at a time between replies
  // (EngineService::start_job); its figures arrive as the job* signals.
  void startJob(qint64 job_id, std::shared_ptr<BackgroundJob> job);
  void cancelJob(qint64 job_id);

 signals:
  void jobProgress(qint64 job_id, double fraction, const QString& activity);
  void jobFinished(qint64 job_id);
  void jobFailed(qint64 job_id, const QString& message);
  void jobCancelled(qint64 job_id);

 private:
  // While the local API runs, its figures are read about once a second
  // (from any thread: a long reply keeps the engine thread busy).
  QTimer api_poll_;
  bool api_running_ = false;
  QThread thread_;
  EngineService* service_ = nullptr;  // lives on thread_
  ui::RequestId newest_request_ = 0;
};

}  // namespace hearth::app
