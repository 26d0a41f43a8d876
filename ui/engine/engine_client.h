// The GUI thread's view of the engine. The app implements it with an
// EngineService on its own thread; view-model tests implement it with a
// deterministic double. All calls return at once; results arrive as signals
// on the GUI thread.
#pragma once

#include <QObject>

#include "engine/engine_types.h"

namespace hearth::ui {

class EngineClient : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;
  ~EngineClient() override = default;

  virtual void loadModel(const LoadRequest& request) = 0;
  virtual void unloadModel() = 0;
  virtual void generate(RequestId id, const GenerationRequest& request) = 0;
  // Takes effect between two tokens; the reply ends with finished(stop_reason
  // "cancelled") carrying the text produced so far.
  virtual void cancel(RequestId id) = 0;
  // Starts, changes or stops the local API on the loaded model; the answer
  // (and later figures) arrive as localApiStatus. An engine without one
  // says so there.
  virtual void configureLocalApi(const LocalApiRequest& request);

 signals:
  void loadProgress(double fraction);
  void modelLoaded(const hearth::ui::ModelInfo& info);
  // `load_id`: the LoadRequest's (0 from engines that do not track loads).
  void loadFailed(const QString& path, const QString& message, qint64 load_id = 0);
  void modelUnloaded();
  // Text pieces, batched by the engine thread (at most ~30 per second).
  void chunk(hearth::ui::RequestId id, const QString& text);
  // Pieces of the reply's reasoning (thinking), batched like chunk; they all
  // come before the answer's first chunk.
  void reasoningChunk(hearth::ui::RequestId id, const QString& text);
  void finished(hearth::ui::RequestId id, const hearth::ui::GenerationStats& stats);
  void failed(hearth::ui::RequestId id, const QString& message);
  void contextEvent(hearth::ui::RequestId id, const hearth::ui::ContextEvent& event);
  void localApiStatus(const hearth::ui::LocalApiStatus& status);
};

// Registers the metatypes above for queued connections; call once at start-up.
void register_engine_metatypes();

}  // namespace hearth::ui
