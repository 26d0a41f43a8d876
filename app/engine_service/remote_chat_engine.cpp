#include "engine_service/remote_chat_engine.h"

#include <algorithm>
#include <chrono>

#include "remote/openai_client.h"

namespace hearth::app {
namespace {

const char* role_of(ui::ChatRole role) {
  switch (role) {
    case ui::ChatRole::System: return "system";
    case ui::ChatRole::User: return "user";
    case ui::ChatRole::Assistant: return "assistant";
  }
  return "user";
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

RemoteChatEngine::RemoteChatEngine(RemoteEngineConfig config) : config_(std::move(config)) {}

RemoteChatEngine::~RemoteChatEngine() = default;

std::string RemoteChatEngine::last_error() const {
  std::lock_guard lock(error_mutex_);
  return last_error_;
}

Result<ui::ModelInfo> RemoteChatEngine::load(const ui::LoadRequest& request, const ProgressFn& progress,
                                             const CancelledFn& cancelled) {
  // The client lives on this (the engine) thread, where every call comes.
  client_ = std::make_unique<remote::OpenAiClient>(config_.endpoint);
  if (!client_->base_url().ok()) return remote::to_error(client_->base_url().error());
  if (progress) progress(0.0);
  auto models = client_->list_models(cancelled);
  if (!models.ok()) {
    if (models.error().kind == remote::RemoteErrorKind::Cancelled) {
      return make_error(ErrorCode::Cancelled, "connecting to the endpoint was cancelled");
    }
    return remote::to_error(models.error());
  }
  const remote::RemoteModel* found = nullptr;
  std::string names;
  for (const auto& m : *models) {
    if (m.id == config_.model) found = &m;
    names += (names.empty() ? "" : ", ") + m.id;
  }
  const std::string url = remote::display_url(*client_->base_url());
  if (!found) {
    return make_error(ErrorCode::NotFound, "the model '" + config_.model + "' is not served at " + url +
                                               " (it serves: " + (names.empty() ? "nothing" : names) + ")");
  }
  context_max_ = found->context_length > 0 ? static_cast<int>(found->context_length)
                                           : (config_.context_length > 0 ? config_.context_length : request.context_length);
  if (progress) progress(1.0);
  ui::ModelInfo info;
  info.path = QString::fromStdString(url + "#" + config_.model);
  info.name = QString::fromStdString(config_.model);
  info.architecture = QStringLiteral("remote");
  info.backend = QStringLiteral("Remote: ") + QString::fromStdString(url);
  info.load_id = request.load_id;
  info.context_max = context_max_;
  info.context_train = found->context_length > 0 ? static_cast<int>(found->context_length) : 0;
  // No switch is offered: whether the model reasons is the server's business,
  // and OpenAI's API refuses reasoning_effort for models that do not.
  info.speculation = QStringLiteral("off: a remote model");
  return info;
}

void RemoteChatEngine::unload() { client_.reset(); }

Result<ui::GenerationStats> RemoteChatEngine::generate(const ui::GenerationRequest& request, const PieceFn& on_piece,
                                                       const PieceFn& on_reasoning, const ContextEventFn& on_event,
                                                       const CancelledFn& cancelled) {
  if (!client_) return make_error(ErrorCode::InvalidArgument, "no remote model is connected");
  {
    std::lock_guard lock(error_mutex_);
    last_error_.clear();
  }
  const auto started = std::chrono::steady_clock::now();
  const double pause_ms =
      request.sent_at_ns > 0
          ? std::max(0.0, std::chrono::duration<double, std::milli>(
                              started.time_since_epoch() - std::chrono::nanoseconds(request.sent_at_ns))
                              .count())
          : 0.0;

  std::vector<remote::ChatMessage> messages;
  for (const auto& t : request.turns) messages.push_back({role_of(t.role), t.text.toStdString()});
  // Room kept for the reply while fitting the turns: the reply's limit, but
  // never more than half the context (the app's limit, 1024 by default, may
  // exceed a small model's whole context, where no turn would fit at all).
  const int limit = std::max(1, request.max_new_tokens);
  const int reserve = context_max_ > 0 ? std::min(limit, std::max(1, context_max_ / 2)) : limit;
  HEARTH_TRY(remote::FitResult fit, remote::fit_to_context(messages, context_max_, reserve, estimator_));
  if (fit.dropped > 0 && on_event) {
    ui::ContextEvent e;
    e.kind = ui::ContextEvent::Kind::Dropped;
    e.turns = fit.dropped;
    e.conversation_id = request.conversation_id;
    e.first_message = fit.first_dropped;
    e.last_message = fit.first_dropped + fit.dropped - 1;
    for (int i = e.first_message; i <= e.last_message; ++i) {
      e.tokens_freed += static_cast<int>(estimator_.estimate(messages[static_cast<size_t>(i)]));
    }
    on_event(e);
  }

  remote::ChatCall call;
  call.model = config_.model;
  call.messages = fit.messages;
  // Whatever the kept turns leave of the context, up to the limit: servers
  // that check prompt + max_tokens against their context (vLLM) then accept it.
  call.max_tokens = context_max_ > 0 ? static_cast<int>(std::max<int64_t>(
                                          reserve, std::min<int64_t>(limit, context_max_ - fit.estimated_tokens)))
                                    : limit;
  // OpenAI's standard sampling fields only: hosted APIs refuse the others.
  call.temperature = request.sampling.temperature;
  call.top_p = request.sampling.top_p;
  if (request.sampling.seed >= 0) call.seed = request.sampling.seed;
  const std::string effort = request.reasoning.toStdString();
  if (effort == "low" || effort == "medium" || effort == "high") call.reasoning_effort = effort;

  double first_reasoning_ms = -1;
  double last_reasoning_ms = -1;
  remote::StreamCallbacks cb;
  cb.on_content = [&](std::string_view piece) {
    if (on_piece) on_piece(piece);
  };
  cb.on_reasoning = [&](std::string_view piece) {
    const double now = ms_since(started);
    if (first_reasoning_ms < 0) first_reasoning_ms = now;
    last_reasoning_ms = now;
    if (on_reasoning) on_reasoning(piece);
  };
  const remote::ChatReply reply = client_->stream_chat(call, cb, cancelled);

  ui::GenerationStats stats;
  stats.pause_ms = pause_ms;
  stats.context_max = context_max_;
  if (reply.error && !reply.cut) return remote::to_error(*reply.error);
  if (reply.usage) {
    estimator_.calibrate(call.messages, reply.usage->prompt_tokens);
    stats.context_used = static_cast<int>(reply.usage->prompt_tokens + reply.usage->completion_tokens);
  } else {
    stats.context_used = static_cast<int>(fit.estimated_tokens + reply.pieces);
  }
  stats.ttft_ms = reply.ttft_ms;
  stats.tokens_per_second = reply.tokens_per_second;
  stats.generated_tokens = static_cast<int>(reply.completion_tokens());
  if (first_reasoning_ms >= 0) stats.reasoning_ms = last_reasoning_ms - first_reasoning_ms;
  if (reply.cancelled) {
    stats.stop_reason = QStringLiteral("cancelled");
  } else if (reply.cut) {
    stats.stop_reason = QString::fromLatin1(kStopReasonCut);
    std::lock_guard lock(error_mutex_);
    last_error_ = reply.error ? reply.error->message : std::string("the stream was cut");
  } else if (reply.finish_reason == "length") {
    stats.stop_reason = QStringLiteral("length");
  } else {
    stats.stop_reason = QStringLiteral("eos");
  }
  return stats;
}

}  // namespace hearth::app
