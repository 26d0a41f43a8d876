#include <hearth/server/scheduler_backend.h>

#include <fmt/format.h>
#include <hearth/server/token_choice.h>

#include <atomic>
#include <optional>

namespace hearth::server {

struct SchedulerBackend::Job {
  Job(uint64_t id_, GenerationRequest r, GenerationCallbacks cb, const runtime::ChatFormat& format)
      : id(id_), request(std::move(r)), callbacks(std::move(cb)),
        chooser(format.tokenizer(), format.end_of_generation()),
        text(format.tokenizer(), request.stop, request.strip_leading_space) {}
  uint64_t id;
  GenerationRequest request;
  GenerationCallbacks callbacks;
  // Used by one thread at a time, within the scheduler's steps: the chooser
  // by the sequence's draw (a host thread of the backend), the text by its
  // events (the stepping thread).
  TokenChooser chooser;
  ReplyText text;
  TokenChoice last;      // the choice whose Token event comes next
  std::string failure;   // the grammar allowed no token
  int64_t completion_tokens = 0;
  std::optional<LiveMeter::Clock::time_point> last_token_at;
  std::shared_ptr<runtime::Speculator> speculator;  // null: decoded plainly
  // Read by the scheduler's cancellation check; `stopped` is set on the
  // stepping thread when a stop string appears, `cancelled` by any thread.
  std::atomic<bool> stopped{false};
  std::atomic<bool> cancelled{false};
};

SchedulerBackend::SchedulerBackend(const runtime::ChatFormat& format, const SchedulerBackendConfig& config,
                                   int64_t vocab_size)
    : format_(format), config_(config), vocab_size_(vocab_size) {
  description_.id = config.model_id;
  description_.context_length = config.scheduler.n_ctx;
  description_.created = config.created;
}

Result<std::unique_ptr<SchedulerBackend>> SchedulerBackend::create(const model::Model& model,
                                                                   backend::Backend& backend,
                                                                   const runtime::ChatFormat& format,
                                                                   const SchedulerBackendConfig& config) {
  std::unique_ptr<SchedulerBackend> b(new SchedulerBackend(format, config, model.hparams().n_vocab));
  HEARTH_TRY(b->scheduler_, runtime::Scheduler::create(model, backend, config.scheduler));
  b->scheduler_->start();
  return b;
}

SchedulerBackend::~SchedulerBackend() { scheduler_.reset(); }

Result<uint64_t> SchedulerBackend::submit(GenerationRequest request, GenerationCallbacks callbacks) {
  HEARTH_CHECK(check_prompt(request.prompt, config_.scheduler.n_ctx, vocab_size_));
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(mutex_);
    const size_t limit = static_cast<size_t>(config_.scheduler.parallel) + config_.max_queued;
    if (jobs_.size() >= limit) {
      return make_error(ErrorCode::LimitExceeded,
                        fmt::format("{} requests are already running or waiting; try again shortly", jobs_.size()));
    }
    job = std::make_shared<Job>(next_id_++, std::move(request), std::move(callbacks), format_);
    jobs_.emplace(job->id, job);
  }

  runtime::SequenceRequest seq;
  seq.prompt = job->request.prompt;
  seq.sampler = job->request.sampler;
  seq.max_tokens = std::max<int32_t>(1, job->request.max_tokens);
  seq.end_of_generation = format_.end_of_generation();
  seq.priority = runtime::Priority::Normal;
  Job* raw = job.get();
  seq.cancel = runtime::Cancellation(
      [raw] { return raw->cancelled.load() || raw->stopped.load() || raw->request.cancel.requested(); });
  const bool plain_draws = !job->request.constraint && job->request.top_logprobs < 0;
  if (!plain_draws) {
    seq.choose = [raw](std::span<const float> logits, sampling::Sampler& sampler) -> int32_t {
      auto choice = raw->chooser.choose(logits, sampler, raw->request.constraint.get(), raw->request.top_logprobs,
                                         raw->request.ignore_eos);
      if (!choice.ok()) {
        // Ends the sequence at once: the failure is reported when it finishes.
        raw->failure = choice.error().message;
        raw->stopped = true;
        return 0;
      }
      raw->last = std::move(choice).value();
      return raw->last.token;
    };
  } else {
    // The scheduler draws (and verifies drafts) with the sequence's own
    // sampler: what TokenChooser does for a request without mask or
    // logprobs, with ignore_eos's end tokens masked in the scheduler's own
    // logits row instead of in a copy of it (0.6 MB per token for a 152k
    // vocabulary).
    if (job->request.ignore_eos) seq.masked_tokens = format_.end_of_generation();
    if (config_.speculators) {
      std::lock_guard lock(speculators_mutex_);
      auto speculator = config_.speculators();
      if (!speculator.ok()) {
        std::lock_guard jobs_lock(mutex_);
        jobs_.erase(job->id);
        return speculator.error();
      }
      job->speculator = *speculator;
      seq.speculator = std::move(*speculator);
    }
  }
  // The scheduler holds the job alive through this callback until Finished.
  auto submitted = scheduler_->submit(std::move(seq), [this, job](const runtime::SequenceEvent& e) { on_event(*job, e); });
  if (!submitted.ok()) {
    std::lock_guard lock(mutex_);
    jobs_.erase(job->id);
    return submitted.error();
  }
  return job->id;
}

void SchedulerBackend::on_event(Job& job, const runtime::SequenceEvent& e) {
  if (e.kind == runtime::SequenceEventKind::Token) {
    if (!job.failure.empty() || job.stopped) return;  // the token that ended it is not part of the reply
    TokenOut out;
    out.token = e.token;
    out.text = job.text.push(e.token);
    out.has_logprob = job.last.has_logprob;
    out.chosen = std::move(job.last.chosen);
    out.top = std::move(job.last.top);
    ++job.completion_tokens;
    const auto now = LiveMeter::Clock::now();
    meter_.token(now, job.last_token_at ? &*job.last_token_at : nullptr);
    job.last_token_at = now;
    if (job.callbacks.on_token) job.callbacks.on_token(out);
    if (job.text.stopped()) job.stopped = true;  // the scheduler ends it before the next token
    return;
  }
  Completion c;
  c.prompt_tokens = e.usage.prompt_tokens;
  c.cached_tokens = e.usage.cached_tokens;
  c.completion_tokens = job.completion_tokens;
  if (!job.failure.empty()) {
    c.reason = FinishReason::Error;
    c.error = job.failure;
  } else if (!e.error.empty()) {
    c.reason = FinishReason::Error;
    c.error = e.error;
  } else if (job.text.stopped()) {
    c.reason = FinishReason::Stop;
  } else if (job.cancelled || job.request.cancel.requested()) {
    c.reason = FinishReason::Cancelled;
  } else {
    switch (e.reason) {
      case runtime::StopReason::EndOfGeneration:
      case runtime::StopReason::StopString: c.reason = FinishReason::Stop; break;
      case runtime::StopReason::MaxTokens:
      case runtime::StopReason::ContextFull: c.reason = FinishReason::Length; break;
      case runtime::StopReason::Cancelled: c.reason = FinishReason::Cancelled; break;
    }
  }
  if (c.reason == FinishReason::Stop || c.reason == FinishReason::Length) {
    TokenOut tail;
    if (!job.text.stopped()) tail.text = job.text.finish();
    if (job.text.stopped()) c.reason = FinishReason::Stop;
    if (!tail.text.empty() && job.callbacks.on_token) job.callbacks.on_token(tail);
  }
  {
    std::lock_guard lock(mutex_);
    jobs_.erase(job.id);
    if (job.speculator) {
      // The stepping thread (this one) is the only one that moves the figures.
      const runtime::SpecFigures& f = job.speculator->figures();
      ++speculation_.requests;
      speculation_.drafted += f.drafted;
      speculation_.accepted += f.accepted;
    }
  }
  if (job.callbacks.on_done) job.callbacks.on_done(c);
}

void SchedulerBackend::cancel(uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it != jobs_.end()) it->second->cancelled = true;
}

SpeculationTotals SchedulerBackend::speculation() const {
  std::lock_guard lock(mutex_);
  return speculation_;
}

int64_t SchedulerBackend::pending() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(jobs_.size());
}

}  // namespace hearth::server
