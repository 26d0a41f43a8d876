#include <fmt/format.h>
#include <hearth/server/auto_route.h>

#include <condition_variable>
#include <mutex>

namespace hearth::server {
namespace {

chat::RouteInput input_of(const ParsedRequest& request) {
  chat::RouteInput input;
  if (request.endpoint == Endpoint::ChatCompletions) {
    input.turns = request.messages.size();
    for (auto it = request.messages.rbegin(); it != request.messages.rend(); ++it) {
      if (it->role == "user") {
        input.last_user_message = it->content;
        break;
      }
    }
  } else {
    input.turns = 1;
    input.last_user_message = request.prompt;
  }
  return input;
}

// The small model's probe, run to the end (it is a few tokens long).
struct Probe {
  std::mutex mutex;
  std::condition_variable done_changed;
  bool done = false;
  Completion completion;
  double logprob_sum = 0;
  int64_t logprob_count = 0;
};

}  // namespace

std::string describe(const chat::RouteDecision& d) {
  return fmt::format("{}; {}; draft {}; familiarity {}", chat::to_string(d.target), d.reason,
                     d.score ? fmt::format("{:.3f}", *d.score) : std::string("-"),
                     d.familiarity ? fmt::format("{:.3f}", *d.familiarity) : std::string("-"));
}

Result<RoutedRequest> route_request(CompletionBackend& small, const AutoRoute& route, const ParsedRequest& request) {
  auto choose = [&](chat::RouteDecision d) {
    return RoutedRequest{d.target == chat::RouteTarget::Large ? route.large : &small, std::move(d)};
  };
  if (auto ruled = chat::route_by_rules(input_of(request), route.rules)) return choose(std::move(*ruled));

  GenerationRequest g;
  if (request.endpoint == Endpoint::ChatCompletions) {
    HEARTH_TRY(g.prompt, small.format().encode(request.messages, chat::GenerationPrompt::Add));
  } else if (!request.prompt_tokens.empty()) {
    g.prompt = request.prompt_tokens;
  } else {
    g.prompt = small.format().tokenizer().tokenize(request.prompt, tokenizer::AddSpecial::AsVocab,
                                                   tokenizer::ParseSpecial::No);
  }
  if (static_cast<int64_t>(g.prompt.size()) >= small.model().context_length) {
    // Too long for the small model to read: the large one may still hold it.
    return choose(chat::RouteDecision{chat::RouteTarget::Large, "longer than the small model's context", {}, {}});
  }
  g.sampler.temperature = 0;
  g.max_tokens = route.rules.probe_tokens;
  g.top_logprobs = 0;
  g.score_prompt_tokens = route.rules.familiarity_tokens;

  auto probe = std::make_shared<Probe>();
  GenerationCallbacks callbacks;
  callbacks.on_token = [probe](const TokenOut& t) {
    if (!t.has_logprob) return;
    std::lock_guard lock(probe->mutex);
    probe->logprob_sum += t.chosen.logprob;
    ++probe->logprob_count;
  };
  callbacks.on_done = [probe](const Completion& c) {
    std::lock_guard lock(probe->mutex);
    probe->completion = c;
    probe->done = true;
    probe->done_changed.notify_all();
  };
  HEARTH_TRY(const uint64_t job, small.submit(std::move(g), std::move(callbacks)));
  (void)job;
  std::unique_lock lock(probe->mutex);
  probe->done_changed.wait(lock, [&] { return probe->done; });
  const Completion& c = probe->completion;
  if (c.reason == FinishReason::Error) {
    return make_error(ErrorCode::Internal, "the auto model's probe of the small model failed: " + c.error);
  }
  if (c.reason == FinishReason::Cancelled) {
    return make_error(ErrorCode::Cancelled, "the auto model's probe was cancelled");
  }
  chat::ProbeScores scores;
  if (probe->logprob_count > 0) scores.draft = probe->logprob_sum / static_cast<double>(probe->logprob_count);
  if (c.prompt_scored_tokens > 0) scores.familiarity = c.prompt_mean_logprob;
  return choose(chat::route_by_scores(scores, route.rules));
}

}  // namespace hearth::server
