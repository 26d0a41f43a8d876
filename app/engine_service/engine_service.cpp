#include "engine_service/engine_service.h"

#include <QThread>
#include <QtGlobal>

#include <limits>

namespace hearth::app {

EngineService::EngineService(std::unique_ptr<ChatEngine> engine, QObject* parent)
    : QObject(parent), engine_(std::move(engine)) {}

EngineService::~EngineService() = default;

void EngineService::cancel(ui::RequestId id) {
  ui::RequestId seen = cancelled_up_to_.load();
  while (seen < id && !cancelled_up_to_.compare_exchange_weak(seen, id)) {
  }
}

void EngineService::supersede_loads(qint64 load_id) {
  qint64 seen = newest_load_.load();
  while (seen < load_id && !newest_load_.compare_exchange_weak(seen, load_id)) {
  }
}

void EngineService::shut_down() {
  shutting_down_.store(true);
  cancel(std::numeric_limits<ui::RequestId>::max());
}

void EngineService::cancel_job(qint64 job_id) {
  qint64 seen = cancelled_job_.load();
  while (seen < job_id && !cancelled_job_.compare_exchange_weak(seen, job_id)) {
  }
}

void EngineService::start_job(qint64 job_id, std::shared_ptr<BackgroundJob> job) {
  if (job_) {
    job_.reset();
    emit jobCancelled(job_id_);
  }
  job_ = std::move(job);
  job_id_ = job_id;
  QMetaObject::invokeMethod(this, &EngineService::run_job_step, Qt::QueuedConnection);
}

// Each step is queued behind whatever arrived while the previous one ran, so
// a chat reply waits for at most the step in flight.
void EngineService::run_job_step() {
  if (!job_) return;
  const qint64 id = job_id_;
  if (shutting_down_.load() || cancelled_job_.load() >= id) {
    job_.reset();  // on this thread: the job's files go before the signal
    emit jobCancelled(id);
    return;
  }
  Result<bool> more = job_->step();
  emit backgroundStepped();
  if (!more.ok()) {
    job_.reset();
    emit jobFailed(id, QString::fromStdString(more.error().message));
    return;
  }
  emit jobProgress(id, *more ? job_->progress() : 1.0, QString::fromStdString(job_->activity()));
  if (!*more) {
    job_.reset();
    emit jobFinished(id);
    return;
  }
  QMetaObject::invokeMethod(this, &EngineService::run_job_step, Qt::QueuedConnection);
}

void EngineService::load(const ui::LoadRequest& request) {
  auto superseded = [this, id = request.load_id] {
    return shutting_down_.load(std::memory_order_relaxed) || newest_load_.load(std::memory_order_relaxed) > id;
  };
  if (superseded()) {
    emit loadFailed(request.model_path, tr("superseded by a newer load"), request.load_id);
    return;
  }
  if (loaded_) {
    engine_->unload();
    loaded_ = false;
  }
  QElapsedTimer since_emit;
  since_emit.start();
  auto progress = [&](double fraction) {
    if (since_emit.elapsed() >= kBatchIntervalMs) {
      since_emit.restart();
      emit loadProgress(fraction);
    }
  };
  Result<ui::ModelInfo> info = engine_->load(request, progress, superseded);
  if (!info.ok()) {
    emit loadFailed(request.model_path, QString::fromStdString(info.error().message), request.load_id);
    return;
  }
  loaded_ = true;
  ui::ModelInfo out = std::move(info).value();
  if (out.path.isEmpty()) out.path = request.model_path;
  out.load_id = request.load_id;
  emit loadProgress(1.0);
  emit modelLoaded(out);
  emit localApiStatus(engine_->local_api_status());  // it follows the loaded model
}

void EngineService::unload() {
  if (loaded_) engine_->unload();
  loaded_ = false;
  emit modelUnloaded();
  emit localApiStatus(engine_->local_api_status());
}

void EngineService::configure_local_api(const ui::LocalApiRequest& request) {
  emit localApiStatus(engine_->configure_local_api(request));
}

void EngineService::generate(ui::RequestId id, const ui::GenerationRequest& request) {
  if (!loaded_) {
    emit failed(id, tr("No model is loaded."));
    return;
  }
  // The answer and the reasoning are batched apart; a reasoning piece waiting
  // goes out before the answer's first text, so the view gets them in order.
  QString pending;
  QString pending_reasoning;
  QElapsedTimer since_emit;
  since_emit.start();
  auto flush = [&] {
    if (!pending_reasoning.isEmpty()) emit reasoningChunk(id, pending_reasoning);
    if (!pending.isEmpty()) emit chunk(id, pending);
    if (pending.isEmpty() && pending_reasoning.isEmpty()) return;
    pending.clear();
    pending_reasoning.clear();
    since_emit.restart();
  };
  auto on_piece = [&](std::string_view piece) {
    pending += QString::fromUtf8(piece.data(), static_cast<qsizetype>(piece.size()));
    if (since_emit.elapsed() >= kBatchIntervalMs) flush();
  };
  // How long the model thought: from its first reasoning piece to its last,
  // timed here where the pieces are made (the GUI sees them batched).
  QElapsedTimer thinking;
  qint64 thought_ns = -1;
  auto on_reasoning = [&](std::string_view piece) {
    if (!thinking.isValid()) thinking.start();
    thought_ns = thinking.nsecsElapsed();
    pending_reasoning += QString::fromUtf8(piece.data(), static_cast<qsizetype>(piece.size()));
    if (since_emit.elapsed() >= kBatchIntervalMs) flush();
  };
  auto on_event = [&](const ui::ContextEvent& event) { emit contextEvent(id, event); };
  auto cancelled = [&] { return cancelled_up_to_.load(std::memory_order_relaxed) >= id; };

  last_request_ = id;
  Result<ui::GenerationStats> stats = engine_->generate(request, on_piece, on_reasoning, on_event, cancelled);
  flush();
  if (stats.ok() && thought_ns >= 0) stats.value().reasoning_ms = double(thought_ns) / 1e6;
  if (!stats.ok()) {
    emit failed(id, QString::fromStdString(stats.error().message));
    return;
  }
  emit finished(id, stats.value());
  schedule_background();
}

void EngineService::schedule_background() {
  if (background_queued_ || !loaded_ || !engine_->has_background_work()) return;
  background_queued_ = true;
  QMetaObject::invokeMethod(this, &EngineService::run_background, Qt::QueuedConnection);
}

void EngineService::run_background() {
  background_queued_ = false;
  if (!loaded_ || !engine_->has_background_work()) return;
  const ui::RequestId id = last_request_;
  Status st = engine_->background_step([&](const ui::ContextEvent& event) { emit contextEvent(id, event); });
  // Background work is best effort: a failed summary leaves the conversation
  // as it was, and evict still makes room at the limit.
  if (!st.ok()) qWarning("background work failed: %s", st.error().message.c_str());
  emit backgroundStepped();
  schedule_background();
}

}  // namespace hearth::app
