// POST /v1/chat/completions and /v1/completions: a checked request becomes
// prompt tokens (the engine's chat layer: message text never becomes control
// tokens), is queued on the backend, and its tokens go back as one JSON body
// or as Server-Sent Events. A client that goes away cancels its generation:
// the stream's next write fails, or the connection monitor sees the hang-up.
#include <fmt/format.h>
#include <hearth/server/json_grammar.h>
#include <hearth/server/openai_request.h>
#include <hearth/server/openai_response.h>

#include <condition_variable>
#include <mutex>

#include "server_state.h"

namespace hearth::server {
namespace {

// How long a waiting handler sleeps between looks at its client and the server.
constexpr auto kWaitSlice = std::chrono::milliseconds(100);

// One request's hand-over between the backend's thread and the connection's.
struct Exchange {
  std::mutex mutex;
  std::condition_variable changed;
  std::string frames;  // stream: SSE frames not yet written
  std::string text;    // whole response: the reply so far
  std::string shown;   // every token's text, stream or not (for the semantic cache)
  std::vector<TokenOut> tokens;
  bool done = false;
  Completion completion;
  std::atomic<bool> cancelled{false};

  void cancel() {
    cancelled = true;
    changed.notify_all();
  }
};

std::string random_id(HttpServer::State& s, const char* prefix) {
  return fmt::format("{}{:016x}", prefix, s.next_random());
}

// Counts a request in flight for as long as it lives.
struct InFlight {
  HttpServer::State& s;
  explicit InFlight(HttpServer::State& state) : s(state) {
    ++s.in_flight;
    ++s.total;
  }
  ~InFlight() { --s.in_flight; }
};

// A reply from the semantic cache, as the model would have sent it (one
// chunk when streamed); its headers name the stored question it matched.
void send_cached_reply(HttpServer::State& s, httplib::Response& res, const ParsedRequest& p,
                       const std::string& model_id, const SemanticReply& hit, CompletionBackend& backend) {
  ++s.total;
  Completion done;
  done.reason = FinishReason::Stop;
  done.completion_tokens = hit.tokens;
  if (auto prompt = backend.format().encode(p.messages, chat::GenerationPrompt::Add); prompt.ok()) {
    done.prompt_tokens = static_cast<int64_t>(prompt->size());
    done.cached_tokens = done.prompt_tokens;
  }
  const ResponseHeader header{random_id(s, "chatcmpl-"), static_cast<int64_t>(std::time(nullptr)), model_id,
                              Endpoint::ChatCompletions};
  res.set_header("X-Hearth-Cache", fmt::format("semantic; similarity {:.4f}", hit.similarity));
  if (!p.stream) {
    res.set_content(full_response(header, hit.reply, {}, false, done), "application/json");
    return;
  }
  TokenOut all;
  all.text = hit.reply;
  std::string frames = sse_first_chunk(header) + sse_token_chunk(header, all, false) + sse_finish_chunk(header, done);
  if (p.include_usage) frames += sse_usage_chunk(header, done);
  frames += sse_done();
  res.set_content(frames, "text/event-stream");
}

}  // namespace

void handle_completion(HttpServer::State& s, bool chat, const httplib::Request& req, httplib::Response& res) {
  const Endpoint endpoint = chat ? Endpoint::ChatCompletions : Endpoint::Completions;
  auto parsed = parse_request(endpoint, req.body, s.model_ids(), s.next_random());
  if (auto* e = std::get_if<ApiError>(&parsed)) {
    send_error(res, e->status, e->message, e->type, e->code, e->param);
    return;
  }
  ParsedRequest& p = std::get<ParsedRequest>(parsed);
  // The semantic cache: a question close to one answered before, in the same
  // context, is answered from it without running the model.
  std::optional<SemanticKey> semantic;
  if (s.config.semantic_cache && chat) {
    auto key = s.config.semantic_cache->key_of(p);
    if (!key.ok()) {
      send_error(res, 500, fmt::format("the semantic cache could not embed the question: {}", key.error().message),
                 "server_error");
      return;
    }
    semantic = std::move(key).value();
    if (semantic) {
      auto hit = s.config.semantic_cache->find(*semantic);
      if (hit.ok() && *hit) {
        send_cached_reply(s, res, p, p.model, **hit, s.backend);
        return;
      }
      // A cache that cannot be read costs the answer nothing; the client is told.
      if (!hit.ok()) res.set_header("X-Hearth-Cache", "unavailable: " + hit.error().message);
    }
  }

  CompletionBackend* chosen = &s.backend;
  if (const auto& route = s.config.auto_route) {
    if (p.model == route->id) {
      auto routed = route_request(s.backend, *route, p);
      if (!routed.ok()) {
        const bool full = routed.error().code == ErrorCode::LimitExceeded;
        send_error(res, full ? 429 : 500, routed.error().message, full ? "rate_limit_error" : "server_error",
                   full ? "queue_full" : "");
        return;
      }
      chosen = routed->backend;
      // Which model answered and why, for clients and for tuning the thresholds.
      res.set_header("X-Hearth-Route", describe(routed->decision));
      ++s.routed[routed->decision.target == chat::RouteTarget::Large ? 1 : 0];
    } else if (p.model == route->large->model().id) {
      chosen = route->large;
    }
  }
  CompletionBackend& backend = *chosen;

  GenerationRequest g;
  if (chat) {
    auto prompt = backend.format().encode(p.messages, chat::GenerationPrompt::Add);
    if (!prompt.ok()) {
      send_error(res, 400, fmt::format("the conversation cannot be rendered with the model's chat template: {}",
                                       prompt.error().message),
                 "invalid_request_error", "", "messages");
      return;
    }
    g.prompt = std::move(prompt).value();
    g.strip_leading_space = true;
  } else if (!p.prompt_tokens.empty()) {
    g.prompt = std::move(p.prompt_tokens);
  } else {
    g.prompt = backend.format().tokenizer().tokenize(p.prompt, tokenizer::AddSpecial::AsVocab, tokenizer::ParseSpecial::No);
  }
  const int64_t n_ctx = backend.model().context_length;
  const auto n_prompt = static_cast<int64_t>(g.prompt.size());
  if (n_prompt >= n_ctx) {
    send_error(res, 400,
               fmt::format("the prompt has {} tokens but the context holds {} (one more is needed for the reply)",
                           n_prompt, n_ctx),
               "invalid_request_error", "context_length_exceeded", chat ? "messages" : "prompt");
    return;
  }
  // max_tokens is capped by the room the context leaves.
  g.max_tokens = static_cast<int32_t>(std::min<int64_t>(p.max_tokens.value_or(n_ctx), n_ctx - n_prompt));
  g.sampler = p.sampler;
  g.stop = p.stop;
  g.top_logprobs = p.top_logprobs;
  g.ignore_eos = p.ignore_eos;
  if (p.format != ResponseFormat::Text) {
    auto constraint = make_json_constraint(p.format, p.schema, backend.format().tokenizer());
    if (auto* e = std::get_if<ApiError>(&constraint)) {
      send_error(res, e->status, e->message, e->type, e->code, e->param);
      return;
    }
    g.constraint = std::move(std::get<std::unique_ptr<TokenConstraint>>(constraint));
  }

  auto ex = std::make_shared<Exchange>();
  g.cancel = runtime::Cancellation(&ex->cancelled);
  ResponseHeader header{random_id(s, chat ? "chatcmpl-" : "cmpl-"),
                        static_cast<int64_t>(std::time(nullptr)), backend.model().id, endpoint};
  const bool stream = p.stream;
  const bool logprobs = p.top_logprobs >= 0;
  const bool include_usage = p.include_usage;
  if (stream && chat) ex->frames = sse_first_chunk(header);

  GenerationCallbacks callbacks;
  callbacks.on_token = [ex, header, stream, logprobs](const TokenOut& t) {
    std::lock_guard lock(ex->mutex);
    ex->shown += t.text;
    if (stream) {
      if (!t.text.empty() || (logprobs && t.has_logprob)) ex->frames += sse_token_chunk(header, t, logprobs);
    } else {
      ex->text += t.text;
      if (logprobs && t.has_logprob) ex->tokens.push_back(t);
    }
    ex->changed.notify_all();
  };
  callbacks.on_done = [ex, header, stream, include_usage, &cancelled = s.cancelled, cache = s.config.semantic_cache,
                       semantic](const Completion& c) {
    if (c.reason == FinishReason::Cancelled) ++cancelled;
    std::lock_guard lock(ex->mutex);
    // A whole reply (not cut short by a cancel or an error) is kept for the next similar question.
    if (cache && semantic && (c.reason == FinishReason::Stop || c.reason == FinishReason::Length)) {
      (void)cache->store(*semantic, ex->shown, c.completion_tokens);
    }
    ex->completion = c;
    ex->done = true;
    if (stream) {
      if (c.reason == FinishReason::Error) {
        ApiError e;
        e.status = 500;
        e.type = "server_error";
        e.message = fmt::format("generation failed: {}", c.error);
        ex->frames += sse_error(e);
      } else if (c.reason != FinishReason::Cancelled) {
        ex->frames += sse_finish_chunk(header, c);
        if (include_usage) ex->frames += sse_usage_chunk(header, c);
      }
      ex->frames += sse_done();
    }
    ex->changed.notify_all();
  };

  auto submitted = backend.submit(std::move(g), std::move(callbacks));
  if (!submitted.ok()) {
    const bool full = submitted.error().code == ErrorCode::LimitExceeded;
    send_error(res, full ? 429 : 400, submitted.error().message, full ? "rate_limit_error" : "invalid_request_error",
               full ? "queue_full" : "");
    return;
  }
  const uint64_t job = *submitted;
  auto in_flight = std::make_shared<InFlight>(s);
  const uint64_t watch = s.monitor->watch(req.remote_addr, req.remote_port, [ex] { ex->cancel(); });
  // Ends the request's bookkeeping once, whichever way it ends.
  auto finish = [&s, &backend, ex, job, watch, in_flight](bool cancel) mutable {
    if (cancel) {
      ex->cancel();
      backend.cancel(job);
    }
    s.monitor->unwatch(watch);
    in_flight.reset();
  };

  if (!stream) {
    std::unique_lock lock(ex->mutex);
    while (!ex->done) {
      if (ex->cancelled || s.stopping) {
        lock.unlock();
        backend.cancel(job);
        lock.lock();
        ex->changed.wait(lock, [&] { return ex->done; });
        break;
      }
      ex->changed.wait_for(lock, kWaitSlice);
    }
    const Completion done = ex->completion;
    lock.unlock();
    finish(false);
    if (done.reason == FinishReason::Error) {
      send_error(res, 500, fmt::format("generation failed: {}", done.error), "server_error");
    } else if (done.reason == FinishReason::Cancelled) {
      send_error(res, 499, "the request was cancelled", "invalid_request_error", "cancelled");
    } else {
      std::lock_guard again(ex->mutex);
      res.set_content(full_response(header, ex->text, ex->tokens, logprobs, done), "application/json");
    }
    return;
  }

  auto finished = std::make_shared<std::function<void(bool)>>(std::move(finish));
  res.set_chunked_content_provider(
      "text/event-stream",
      [&s, ex, finished](size_t, httplib::DataSink& sink) {
        std::string out;
        bool done = false;
        {
          std::unique_lock lock(ex->mutex);
          ex->changed.wait_for(lock, kWaitSlice, [&] { return !ex->frames.empty() || ex->done || ex->cancelled; });
          out.swap(ex->frames);
          done = ex->done;
        }
        if (ex->cancelled || s.stopping) return false;  // the releaser cancels
        if (!out.empty() && !sink.write(out.data(), out.size())) return false;
        if (done) sink.done();
        return true;
      },
      [ex, finished](bool success) {
        bool complete = false;
        {
          std::lock_guard lock(ex->mutex);
          complete = ex->done;
        }
        (*finished)(!success || !complete);
      });
}

}  // namespace hearth::server
