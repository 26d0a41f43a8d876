#include "support/scripted_engine_client.h"

namespace hearth::ui::testing {

ScriptedEngineClient::ScriptedEngineClient(QObject* parent) : EngineClient(parent) {
  register_engine_metatypes();
  info.name = QStringLiteral("scripted");
  info.quant = QStringLiteral("F32");
  info.backend = QStringLiteral("CPU: test double");
  info.context_max = 512;
  info.context_train = 2048;
  info.shape.n_layer = 5;
  info.shape.n_head_kv = 4;
  info.shape.head_dim = 16;
  info.shape.n_embd = 64;
  info.shape.n_vocab = 512;
  info.shape.weights_bytes = 1'000'000;
  timer_.setInterval(1);
  connect(&timer_, &QTimer::timeout, this, &ScriptedEngineClient::step);
}

void ScriptedEngineClient::loadModel(const LoadRequest& request) {
  if (on_load) on_load(request);
  loads.append(request);
  QTimer::singleShot(0, this, [this, request] {
    emit loadProgress(0.5);
    if (load_error) {
      emit loadFailed(request.model_path, *load_error);
      return;
    }
    ModelInfo out = info;
    out.path = request.model_path;
    emit modelLoaded(out);
  });
}

void ScriptedEngineClient::generate(RequestId id, const GenerationRequest& request) {
  requests.append(request);
  current_ = id;
  next_piece_ = 0;
  next_reasoning_ = 0;
  cancelled_ = false;
  held_ = false;
  timer_.start();
}

void ScriptedEngineClient::cancel(RequestId id) {
  if (id == current_) cancelled_ = true;
}

void ScriptedEngineClient::release() { held_ = false; }

void ScriptedEngineClient::step() {
  if (held_ && !cancelled_) return;
  if (!cancelled_ && next_reasoning_ < reasoning_pieces.size()) {
    emit reasoningChunk(current_, reasoning_pieces[next_reasoning_++]);
    if (hold_after_reasoning && next_reasoning_ == reasoning_pieces.size()) held_ = true;
    return;
  }
  if (!cancelled_ && next_piece_ < pieces.size()) {
    emit chunk(current_, pieces[next_piece_++]);
    if (hold_after_first_piece && next_piece_ == 1) held_ = true;
    return;
  }
  timer_.stop();
  GenerationStats stats;
  stats.ttft_ms = 12;
  stats.tokens_per_second = 250;
  stats.pause_ms = 30;
  stats.generated_tokens = next_piece_;
  stats.context_used = 40 + next_piece_;
  stats.context_max = info.context_max;
  if (next_reasoning_ > 0) stats.reasoning_ms = reasoning_ms;
  stats.stop_reason = cancelled_ ? QStringLiteral("cancelled") : QStringLiteral("eos");
  emit finished(current_, stats);
}

}  // namespace hearth::ui::testing
