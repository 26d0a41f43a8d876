#include <hearth/server/engine_backend.h>

#include <fmt/format.h>
#include <algorithm>

namespace hearth::server {

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancelled: return "cancelled";
    case FinishReason::Error: return "error";
  }
  return "error";
}


EngineBackend::EngineBackend(const runtime::ChatFormat& format, std::unique_ptr<runtime::Session> session,
                             const EngineBackendConfig& config, int64_t vocab_size)
    : format_(format), session_(std::move(session)), config_(config), vocab_size_(vocab_size),
      chooser_(format.tokenizer(), format.end_of_generation()) {
  description_.id = config.model_id;
  description_.context_length = session_->n_ctx();
  description_.created = config.created;
  end_of_generation_ = format_.end_of_generation();
  thread_ = std::thread([this] { worker(); });
}

Result<std::unique_ptr<EngineBackend>> EngineBackend::create(const model::Model& model, backend::Backend& backend,
                                                             const runtime::ChatFormat& format,
                                                             const EngineBackendConfig& config) {
  HEARTH_TRY(auto session, runtime::Session::create(model, backend, runtime::SessionConfig{config.n_ctx, config.kv_type, 256}));
  return std::unique_ptr<EngineBackend>(
      new EngineBackend(format, std::move(session), config, model.hparams().n_vocab));
}

EngineBackend::~EngineBackend() {
  std::deque<std::unique_ptr<Job>> left;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (running_ != nullptr) running_->cancelled = true;
    left.swap(queue_);
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& job : left) {
    Completion c;
    c.reason = FinishReason::Cancelled;
    if (job->callbacks.on_done) job->callbacks.on_done(c);
  }
}

Result<uint64_t> EngineBackend::submit(GenerationRequest request, GenerationCallbacks callbacks) {
  HEARTH_CHECK(check_prompt(request.prompt, session_->n_ctx(), vocab_size_));
  auto job = std::make_unique<Job>();
  job->request = std::move(request);
  job->callbacks = std::move(callbacks);
  uint64_t id = 0;
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= config_.max_queued) {
      return make_error(ErrorCode::LimitExceeded,
                        fmt::format("{} requests are already waiting; try again shortly", queue_.size()));
    }
    id = next_id_++;
    job->id = id;
    queue_.push_back(std::move(job));
  }
  wake_.notify_one();
  return id;
}

void EngineBackend::cancel(uint64_t id) {
  std::unique_ptr<Job> removed;
  {
    std::lock_guard lock(mutex_);
    if (running_ != nullptr && running_->id == id) {
      running_->cancelled = true;
      return;
    }
    auto it = std::find_if(queue_.begin(), queue_.end(), [id](const auto& j) { return j->id == id; });
    if (it == queue_.end()) return;
    removed = std::move(*it);
    queue_.erase(it);
  }
  Completion c;
  c.reason = FinishReason::Cancelled;
  c.prompt_tokens = static_cast<int64_t>(removed->request.prompt.size());
  if (removed->callbacks.on_done) removed->callbacks.on_done(c);
}

int64_t EngineBackend::pending() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(queue_.size()) + (running_ != nullptr ? 1 : 0);
}

void EngineBackend::worker() {
  while (true) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = job.get();
    }
    Completion done = run(*job);
    {
      std::lock_guard lock(mutex_);
      running_ = nullptr;
    }
    if (job->callbacks.on_done) job->callbacks.on_done(done);
  }
}

Completion EngineBackend::run(Job& job) {
  GenerationRequest& req = job.request;
  const runtime::Cancellation cancel([&] { return job.cancelled.load() || req.cancel.requested(); });
  runtime::Session& session = *session_;
  Completion c;
  c.prompt_tokens = static_cast<int64_t>(req.prompt.size());
  auto fail = [&](std::string why) {
    session.reset();  // the context no longer matches what is cached
    c.reason = FinishReason::Error;
    c.error = std::move(why);
    return c;
  };

  // Reuse the prefix the previous request left in the cache; at least one
  // prompt token is prefilled so the last position's logits are fresh.
  const auto& context = session.context();
  size_t common = 0;
  while (common < context.size() && common < req.prompt.size() && context[common] == req.prompt[common]) ++common;
  if (common == req.prompt.size()) --common;
  if (auto st = session.truncate(common); !st.ok()) {
    session.reset();
    common = 0;
  }
  c.cached_tokens = static_cast<int64_t>(common);
  const auto fresh = std::span<const int32_t>(req.prompt).subspan(common);
  std::vector<float> scored;
  const Status prefilled =
      req.score_prompt_tokens > 0
          ? session.prefill_scored(fresh, static_cast<size_t>(req.score_prompt_tokens), scored, cancel)
          : session.prefill(fresh, cancel);
  if (!scored.empty()) {
    double sum = 0;
    for (float lp : scored) sum += lp;
    c.prompt_scored_tokens = static_cast<int64_t>(scored.size());
    c.prompt_mean_logprob = sum / static_cast<double>(scored.size());
  }
  if (const Status& st = prefilled; !st.ok()) {
    if (st.error().code == ErrorCode::Cancelled) {
      c.reason = FinishReason::Cancelled;
      return c;
    }
    return fail(st.error().message);
  }

  // The same chain and stop handling as runtime::Session::generate, with two
  // additions it lacks: a token mask (grammar) before the draw and logprobs.
  sampling::Sampler sampler(req.sampler);
  for (int32_t t : session.context()) sampler.accept(t);
  ReplyText text(format_.tokenizer(), req.stop, req.strip_leading_space);
  c.reason = FinishReason::Length;
  for (int32_t i = 0; i < req.max_tokens; ++i) {
    if (cancel.requested()) {
      c.reason = FinishReason::Cancelled;
      break;
    }
    auto choice =
        chooser_.choose(session.last_logits(), sampler, req.constraint.get(), req.top_logprobs, req.ignore_eos);
    if (!choice.ok()) return fail(choice.error().message);
    if (choice->end_of_generation) {
      c.reason = FinishReason::Stop;
      break;
    }
    TokenOut out;
    out.token = choice->token;
    out.text = text.push(choice->token);
    out.has_logprob = choice->has_logprob;
    out.chosen = std::move(choice->chosen);
    out.top = std::move(choice->top);
    ++c.completion_tokens;
    if (job.callbacks.on_token) job.callbacks.on_token(out);
    if (text.stopped()) {
      c.reason = FinishReason::Stop;
      break;
    }
    if (static_cast<int64_t>(session.context().size()) >= session.n_ctx()) break;  // length
    if (i + 1 < req.max_tokens) {
      if (auto st = session.decode(out.token); !st.ok()) return fail(st.error().message);
    }
  }
  if (!text.stopped() && c.reason != FinishReason::Cancelled) {
    TokenOut out;
    out.text = text.finish();
    if (text.stopped()) c.reason = FinishReason::Stop;
    if (!out.text.empty() && job.callbacks.on_token) job.callbacks.on_token(out);
  }
  return c;
}

}  // namespace hearth::server
