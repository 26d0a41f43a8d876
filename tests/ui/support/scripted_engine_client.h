// Test double for EngineClient: loads instantly and streams a fixed reply in
// fixed pieces from the event loop, deterministically. For view-model tests
// only; the end-to-end test uses the real engine.
#pragma once

#include <QStringList>
#include <QTimer>

#include <functional>
#include <optional>

#include "engine/engine_client.h"

namespace hearth::ui::testing {

class ScriptedEngineClient final : public EngineClient {
  Q_OBJECT

 public:
  explicit ScriptedEngineClient(QObject* parent = nullptr);

  // The pieces each reply streams; the reply's text is their concatenation.
  QStringList pieces = {QStringLiteral("Once "), QStringLiteral("there "), QStringLiteral("was "),
                        QStringLiteral("a fox.")};
  // Reasoning pieces each reply streams before its answer (none by default),
  // and the thinking time the finished reply reports (negative: none).
  QStringList reasoning_pieces;
  double reasoning_ms = -1;
  // When true, replies wait for release() after their reasoning, before the answer.
  bool hold_after_reasoning = false;
  ModelInfo info;
  // When set, a load fails with this message.
  std::optional<QString> load_error;
  // Called as a load request arrives, before anything else happens (tests look at
  // what is on disk at that moment).
  std::function<void(const LoadRequest&)> on_load;
  // When true, replies wait for release() after the first piece (to test stop).
  bool hold_after_first_piece = false;

  void loadModel(const LoadRequest& request) override;
  void unloadModel() override {}
  void generate(RequestId id, const GenerationRequest& request) override;
  void cancel(RequestId id) override;
  void release();

  QList<GenerationRequest> requests;
  QList<LoadRequest> loads;

 private:
  void step();

  QTimer timer_;
  RequestId current_ = 0;
  int next_piece_ = 0;
  int next_reasoning_ = 0;
  bool cancelled_ = false;
  bool held_ = false;
};

}  // namespace hearth::ui::testing
