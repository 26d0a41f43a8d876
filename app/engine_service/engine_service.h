// EngineService: the worker that owns the ChatEngine on its own thread (Qt's
// worker-object pattern). Its slots are invoked by queued calls from the GUI
// thread; it answers with signals. Text pieces are batched so the GUI thread
// receives at most ~30 chunk signals per second however fast the model runs.
#pragma once

#include <QElapsedTimer>
#include <QObject>

#include <atomic>
#include <memory>

#include "engine_service/background_job.h"
#include "engine_service/chat_engine.h"

namespace hearth::app {

class EngineService : public QObject {
  Q_OBJECT

 public:
  // Chunks and progress are emitted at most this often.
  static constexpr int kBatchIntervalMs = 33;

  explicit EngineService(std::unique_ptr<ChatEngine> engine, QObject* parent = nullptr);
  ~EngineService() override;

  // Thread-safe (called directly from the GUI thread): generation runs inside
  // one slot call, so a queued cancel would only arrive after it ended.
  void cancel(ui::RequestId id);
  // Thread-safe: a load with this id was queued, so every older one still
  // running stops at its next piece (and one not started yet is skipped).
  void supersede_loads(qint64 load_id);
  // Thread-safe: the app closes; a running load and reply stop.
  void shut_down();
  // Thread-safe: the job with this id stops before its next step and is
  // destroyed on the engine thread (its temporary files go with it).
  void cancel_job(qint64 job_id);
  // Thread-safe: the local API's figures now (polled while it runs).
  ui::LocalApiStatus local_api_status() const { return engine_->local_api_status(); }

 public slots:
  void load(const hearth::ui::LoadRequest& request);
  void unload();
  void generate(hearth::ui::RequestId id, const hearth::ui::GenerationRequest& request);
  void configure_local_api(const hearth::ui::LocalApiRequest& request);
  // Runs `job` a step at a time behind whatever is queued (one job at a
  // time: a new one replaces a running one, which is cancelled).
  void start_job(qint64 job_id, std::shared_ptr<hearth::app::BackgroundJob> job);

 signals:
  void loadProgress(double fraction);
  void modelLoaded(const hearth::ui::ModelInfo& info);
  void loadFailed(const QString& path, const QString& message, qint64 load_id);
  void modelUnloaded();
  void chunk(hearth::ui::RequestId id, const QString& text);
  void reasoningChunk(hearth::ui::RequestId id, const QString& text);
  void finished(hearth::ui::RequestId id, const hearth::ui::GenerationStats& stats);
  void failed(hearth::ui::RequestId id, const QString& message);
  void contextEvent(hearth::ui::RequestId id, const hearth::ui::ContextEvent& event);
  void localApiStatus(const hearth::ui::LocalApiStatus& status);
  // One step of background work ran (tests watch the scheduling).
  void backgroundStepped();
  // A job's step ran: its progress (0..1) and what comes next.
  void jobProgress(qint64 job_id, double fraction, const QString& activity);
  void jobFinished(qint64 job_id);
  void jobFailed(qint64 job_id, const QString& message);
  void jobCancelled(qint64 job_id);

 private:
  // Queues one step of the engine's background work behind whatever is
  // already queued, so a reply the GUI sent first runs first.
  void schedule_background();
  void run_background();
  void run_job_step();

  std::unique_ptr<ChatEngine> engine_;
  bool loaded_ = false;
  // The newest request id the GUI asked to cancel; ids only grow, so every
  // id at or below it is cancelled (covers a cancel that arrives before the
  // generation starts).
  std::atomic<ui::RequestId> cancelled_up_to_{0};
  std::atomic<qint64> newest_load_{0};
  std::atomic<bool> shutting_down_{false};
  // Background events are reported under the request that made the work due.
  ui::RequestId last_request_ = 0;
  bool background_queued_ = false;
  std::shared_ptr<BackgroundJob> job_;
  qint64 job_id_ = 0;
  std::atomic<qint64> cancelled_job_{0};
};

}  // namespace hearth::app
