// The scheduler's bookkeeping: queues, admission against the KV pool, the
// batch of one step, sampling and the events. The forward pass itself is
// model::Model::forward_sequences.
#include "hearth/engine/runtime/scheduler.h"

#include <hearth/engine/chat/stop.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>

namespace hearth::runtime {
namespace {

int64_t blocks_for(int64_t positions) { return (positions + kv::kBlockTokens - 1) / kv::kBlockTokens; }

}  // namespace

struct Sequence {
  Sequence(SequenceId id_, SequenceRequest r, SequenceEventFn fn, int64_t order_)
      : id(id_), req(std::move(r)), on_event(std::move(fn)), sampler(req.sampler), stops(req.stop_strings),
        order(order_) {}
  SequenceId id;
  SequenceRequest req;
  SequenceEventFn on_event;
  sampling::Sampler sampler;
  chat::StopMatcher stops;
  int64_t order;                 // arrival, breaks ties within a priority
  std::vector<int32_t> tokens;   // prompt, then sampled tokens
  int64_t n_past = 0;            // positions whose K/V are in the pool
  std::vector<int32_t> blocks;   // the block table (pool blocks held)
  int64_t reserved = 0;          // blocks admission set aside and not yet taken
  int64_t cached = 0;
  int32_t generated = 0;
  bool gone = false;  // finished by a failed pass
  bool prompt_done() const { return n_past >= static_cast<int64_t>(req.prompt.size()); }
};

struct Scheduler::Impl {
  std::mutex mutex;
  std::condition_variable wake;
  std::vector<std::unique_ptr<Sequence>> incoming;  // guarded by mutex
  bool stopping = false;                            // guarded by mutex
  std::thread loop;
  std::atomic<int64_t> active{0};
  std::atomic<SequenceId> next_id{1};
  // Owned by the stepping thread.
  std::vector<std::unique_ptr<Sequence>> waiting;  // not yet admitted (no blocks)
  std::vector<std::unique_ptr<Sequence>> running;
  int64_t reserved = 0;  // sum of running sequences' reserved blocks
  int64_t order = 0;
  // Reused per step.
  std::vector<int32_t> tokens, positions, token_seq, tables, logit_tokens;
  std::vector<float> logits;
};

Scheduler::Scheduler(const model::Model& model, backend::Backend& backend, const SchedulerConfig& config)
    : model_(model), backend_(backend), config_(config), impl_(std::make_unique<Impl>()) {}

Result<std::unique_ptr<Scheduler>> Scheduler::create(const model::Model& model, backend::Backend& backend,
                                                     const SchedulerConfig& config) {
  if (config.n_ctx <= 0 || config.parallel <= 0 || config.max_batch_tokens <= 0) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("scheduler: n_ctx {}, parallel {} and max_batch_tokens {} must be positive",
                                  config.n_ctx, config.parallel, config.max_batch_tokens));
  }
  if (!backend.supports_sequence_batches()) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("the {} backend cannot run several sequences in one forward pass (its attention "
                                  "takes one block table)",
                                  backend.name()));
  }
  std::unique_ptr<Scheduler> s(new Scheduler(model, backend, config));
  const model::HParams& hp = model.hparams();
  kv::KvPoolConfig pc;
  pc.n_layer = hp.n_layer;
  pc.n_head_kv = hp.n_head_kv;
  pc.head_dim = hp.head_dim;
  pc.type = config.kv_type;
  pc.max_seq_positions = config.n_ctx;
  pc.first_pass_positions = config.max_batch_tokens;
  // The size the memory estimate shows (kv::estimate_parallel_memory).
  HEARTH_TRY(pc.n_blocks, kv::parallel_pool_blocks(config.n_ctx, config.parallel));
  HEARTH_TRY(s->pool_, kv::KvPool::create(backend, pc));
  HEARTH_TRY(const kv::ScratchSizes scratch,
             kv::scratch_sizes(model.memory_dims(), config.n_ctx, config.max_batch_tokens));
  HEARTH_CHECK(backend.reserve_scratch(backend::ScratchReservation{scratch.activation_bytes, scratch.matmul_bytes()}));
  return s;
}

Scheduler::~Scheduler() {
  stop();
  Impl& im = *impl_;
  for (auto& s : im.incoming) im.waiting.push_back(std::move(s));
  im.incoming.clear();
  auto finish_all = [&](std::vector<std::unique_ptr<Sequence>>& list) {
    for (auto& s : list) {
      for (int32_t b : s->blocks) pool_->release(b);
      SequenceEvent e;
      e.id = s->id;
      e.kind = SequenceEventKind::Finished;
      e.reason = StopReason::Cancelled;
      e.usage = {static_cast<int64_t>(s->req.prompt.size()), s->cached, s->generated};
      if (s->on_event) s->on_event(e);
    }
    list.clear();
  };
  finish_all(im.running);
  finish_all(im.waiting);
}

Result<SequenceId> Scheduler::submit(SequenceRequest request, SequenceEventFn on_event) {
  const auto n = static_cast<int64_t>(request.prompt.size());
  if (n == 0) return make_error(ErrorCode::InvalidArgument, "scheduler: empty prompt");
  if (request.max_tokens <= 0) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("scheduler: max_tokens {} must be positive",
                                                              request.max_tokens));
  }
  for (int32_t t : request.prompt) {
    if (t < 0 || t >= model_.hparams().n_vocab) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("token id {} is outside the vocabulary (0..{})", t,
                                                                model_.hparams().n_vocab - 1));
    }
  }
  if (n > config_.n_ctx) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("the prompt has {} tokens but a sequence holds {}", n, config_.n_ctx));
  }
  const SequenceId id = impl_->next_id.fetch_add(1);
  {
    std::lock_guard lock(impl_->mutex);
    impl_->incoming.push_back(std::make_unique<Sequence>(id, std::move(request), std::move(on_event), 0));
  }
  impl_->active.fetch_add(1);
  impl_->wake.notify_one();
  return id;
}

int64_t Scheduler::active() const { return impl_->active.load(); }

void Scheduler::start() {
  Impl& im = *impl_;
  std::lock_guard lock(im.mutex);
  if (im.loop.joinable()) return;
  im.stopping = false;
  im.loop = std::thread([this] {
    Impl& in = *impl_;
    for (;;) {
      {
        std::unique_lock wait_lock(in.mutex);
        // running/waiting belong to this thread: reading them here is safe.
        in.wake.wait(wait_lock, [&] { return in.stopping || !in.incoming.empty() || !in.running.empty() ||
                                        !in.waiting.empty(); });
        if (in.stopping) return;
      }
      if (config_.wait_turn) {
        config_.wait_turn();
        std::lock_guard stop_lock(in.mutex);
        if (in.stopping) return;
      }
      // A failed pass has already finished its sequences with the error.
      (void)step();
    }
  });
}

void Scheduler::stop() {
  Impl& im = *impl_;
  {
    std::lock_guard lock(im.mutex);
    im.stopping = true;
  }
  im.wake.notify_all();
  if (im.loop.joinable()) im.loop.join();
}

namespace {

// Sorted by priority, then arrival.
void by_priority(std::vector<std::unique_ptr<Sequence>>& list) {
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
    if (a->req.priority != b->req.priority) return a->req.priority < b->req.priority;
    return a->order < b->order;
  });
}

size_t common_prefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b, size_t limit) {
  size_t n = 0;
  const size_t m = std::min({a.size(), b.size(), limit});
  while (n < m && a[n] == b[n]) ++n;
  return n;
}

SequenceUsage usage_of(const Sequence& s) {
  return {static_cast<int64_t>(s.req.prompt.size()), s.cached, s.generated};
}

// Leaves the scheduler: blocks back to the pool, the Finished event.
void finish(Sequence& s, StopReason reason, kv::KvPool& pool, int64_t& reserved, const std::string& error = {}) {
  for (int32_t b : s.blocks) pool.release(b);
  s.blocks.clear();
  reserved -= s.reserved;
  s.reserved = 0;
  std::string tail;
  if (!s.stops.stopped() && error.empty()) tail = s.stops.flush();
  SequenceEvent e;
  e.id = s.id;
  e.kind = SequenceEventKind::Finished;
  e.text = tail;
  e.reason = reason;
  e.error = error;
  e.usage = usage_of(s);
  if (s.on_event) s.on_event(e);
}

// Shares the longest context prefix another running sequence already holds:
// its whole blocks are held by both, and the block the prefix ends in (if
// partly shared) is copied, since the new sequence writes the rest of it.
// At least the context's last token is left to compute (its logits are needed).
Status share_prefix(Sequence& s, const std::vector<std::unique_ptr<Sequence>>& running, kv::KvPool& pool) {
  const Sequence* best = nullptr;
  size_t best_n = 0;
  for (const auto& r : running) {
    const size_t n = common_prefix(s.tokens, r->tokens, std::min(s.tokens.size() - 1, size_t(r->n_past)));
    if (n > best_n) {
      best_n = n;
      best = r.get();
    }
  }
  if (best == nullptr) return {};
  const auto whole = static_cast<int64_t>(best_n) / kv::kBlockTokens;
  // A pool the host cannot see (a discrete GPU) cannot copy the partly
  // shared block: only whole blocks are shared, and the rest is prefilled.
  const auto rest = pool.host_visible() ? static_cast<int64_t>(best_n) % kv::kBlockTokens : 0;
  if (whole == 0 && rest == 0) return {};
  for (int64_t b = 0; b < whole; ++b) {
    const int32_t block = best->blocks[static_cast<size_t>(b)];
    pool.retain(block);
    s.blocks.push_back(block);
  }
  if (rest > 0) {
    HEARTH_TRY(const int32_t copy, pool.allocate());
    pool.copy_block(best->blocks[static_cast<size_t>(whole)], copy, rest);
    s.blocks.push_back(copy);
  }
  s.n_past = whole * kv::kBlockTokens + rest;
  if (s.generated == 0) s.cached = s.n_past;  // a preempted sequence keeps its first figure
  return {};
}

// A sequence's share of one step: context tokens fed, and the drafts fed
// after them.
struct Part {
  Sequence* s = nullptr;
  int64_t fed = 0;
  Draft draft;
  bool speculating = false;  // its speculator was asked this step (drafts or not)
  double draft_ms = 0;
  int64_t first_row = -1;    // its first logits row, when it samples this step
};

// Speculation fills the rows a decode-only step leaves under kVerifyRowsMax
// (and the token budget), most urgent sequence first: every product of the
// pass then stays on the few-token kernels, whose rows are bit for bit
// those of a one-token pass, so a draft never changes what greedy decoding
// emits and never moves the step onto the prompt kernels.
void add_drafts(std::vector<Part>& parts, int64_t budget, int64_t n_ctx) {
  int64_t rows = 0;
  for (const Part& p : parts) {
    if (!p.s->prompt_done()) return;
    rows += p.fed;
  }
  int64_t free_rows = std::min<int64_t>(kVerifyRowsMax - rows, budget);
  for (Part& p : parts) {
    Sequence& s = *p.s;
    if (!s.req.speculator || s.req.choose || p.fed != 1) continue;
    Speculator& spec = *s.req.speculator;
    p.speculating = true;
    // As in Session::generate: the drafts, and the token the step adds
    // after them, stay inside the context and the reply's max_tokens.
    const int64_t room = std::min<int64_t>({free_rows, n_ctx - 1 - static_cast<int64_t>(s.tokens.size()),
                                            s.req.max_tokens - 1 - static_cast<int64_t>(s.generated)});
    const int64_t length = std::min<int64_t>(spec.draft_length(), room);
    if (length <= 0) continue;
    const auto t0 = std::chrono::steady_clock::now();
    auto proposed = spec.drafter().propose(s.tokens, static_cast<int32_t>(length), s.sampler.config());
    p.draft_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!proposed.ok()) {
      spec.on_draft_error(proposed.error().message);
      continue;
    }
    p.draft = std::move(*proposed);
    if (static_cast<int64_t>(p.draft.tokens.size()) > length) p.draft.tokens.resize(static_cast<size_t>(length));
    if (!p.draft.q.empty()) p.draft.q.resize(p.draft.tokens.size());
    free_rows -= static_cast<int64_t>(p.draft.tokens.size());
  }
}

}  // namespace

Result<StepReport> Scheduler::step() {
  Impl& im = *impl_;
  kv::KvPool& pool = *pool_;
  {
    std::lock_guard lock(im.mutex);
    for (auto& s : im.incoming) {
      s->order = im.order++;
      im.waiting.push_back(std::move(s));
    }
    im.incoming.clear();
  }
  auto leave = [&](std::vector<std::unique_ptr<Sequence>>& list, auto&& done) {
    const auto before = list.size();
    std::erase_if(list, done);
    im.active.fetch_sub(static_cast<int64_t>(before - list.size()));
  };
  auto cancelled = [&](std::unique_ptr<Sequence>& s) {
    if (!s->req.cancel.requested()) return false;
    finish(*s, StopReason::Cancelled, pool, im.reserved);
    return true;
  };
  leave(im.running, cancelled);
  leave(im.waiting, cancelled);

  // Admission, most urgent first: a slot (Interactive needs none) and the
  // blocks the whole reply can reach, so a running sequence never finds the
  // pool empty. An Interactive request that finds the pool full preempts the
  // least urgent running sequences: their blocks are freed and they wait
  // again, to recompute their context when they are admitted back.
  by_priority(im.waiting);
  const int64_t table_max = pool.table_blocks();
  std::vector<std::unique_ptr<Sequence>> still_waiting, preempted;
  bool blocked = false;
  for (auto& sp : im.waiting) {
    Sequence& s = *sp;
    const bool interactive = s.req.priority == Priority::Interactive;
    if (blocked || (!interactive && static_cast<int64_t>(im.running.size()) >= config_.parallel)) {
      blocked = true;
      still_waiting.push_back(std::move(sp));
      continue;
    }
    const int64_t reach = std::min<int64_t>(static_cast<int64_t>(s.req.prompt.size()) + s.req.max_tokens, config_.n_ctx);
    const int64_t need = std::min(blocks_for(reach), table_max);
    if (need > pool.total_blocks()) {
      // Can never fit: refused rather than waiting forever.
      finish(s, StopReason::ContextFull, pool, im.reserved,
             fmt::format("needs {} KV blocks, the pool has {}", need, pool.total_blocks()));
      im.active.fetch_sub(1);
      continue;
    }
    while (interactive && pool.free_blocks() - im.reserved < need) {
      auto victim = std::find_if(im.running.rbegin(), im.running.rend(), [](const auto& r) {
        return r->req.priority != Priority::Interactive;
      });
      if (victim == im.running.rend()) break;
      Sequence& v = **victim;
      for (int32_t blk : v.blocks) pool.release(blk);
      v.blocks.clear();
      im.reserved -= v.reserved;
      v.reserved = 0;
      v.n_past = 0;
      preempted.push_back(std::move(*victim));
      im.running.erase(std::next(victim).base());
    }
    if (pool.free_blocks() - im.reserved < need) {
      blocked = true;
      still_waiting.push_back(std::move(sp));
      continue;
    }
    if (s.tokens.empty()) {
      s.tokens = s.req.prompt;
      for (int32_t t : s.req.prompt) s.sampler.accept(t);
    }
    if (config_.share_prefixes) HEARTH_CHECK(share_prefix(s, im.running, pool));
    // Blocks already held (shared or copied) are out of the reservation.
    s.reserved = std::max<int64_t>(0, need - static_cast<int64_t>(s.blocks.size()));
    im.reserved += s.reserved;
    im.running.push_back(std::move(sp));
    by_priority(im.running);  // the victims are the last ones
  }
  im.waiting = std::move(still_waiting);
  for (auto& v : preempted) im.waiting.push_back(std::move(v));

  StepReport report;
  if (im.running.empty()) return report;
  by_priority(im.running);

  // The batch: every decode token first (by priority), then prompt chunks
  // in the budget left, then (in a decode-only step) speculative drafts.
  const auto step_start = std::chrono::steady_clock::now();
  im.tokens.clear();
  im.positions.clear();
  im.token_seq.clear();
  im.logit_tokens.clear();
  std::vector<Part> parts;
  int64_t budget = config_.max_batch_tokens;
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& sp : im.running) {
      Sequence& s = *sp;
      if (budget <= 0) break;
      if (s.prompt_done() != (pass == 0)) continue;
      const int64_t k = std::min<int64_t>(static_cast<int64_t>(s.tokens.size()) - s.n_past, budget);
      if (k <= 0) continue;
      budget -= k;
      Part part;
      part.s = &s;
      part.fed = k;
      parts.push_back(std::move(part));
    }
  }
  add_drafts(parts, budget, config_.n_ctx);
  im.tables.assign(parts.size() * static_cast<size_t>(table_max), 0);
  for (size_t slot = 0; slot < parts.size(); ++slot) {
    Part& part = parts[slot];
    Sequence* s = part.s;
    const auto drafted = static_cast<int64_t>(part.draft.tokens.size());
    const int64_t fed = part.fed + drafted;
    while (static_cast<int64_t>(s->blocks.size()) < blocks_for(s->n_past + fed)) {
      HEARTH_TRY(const int32_t b, pool.allocate());
      s->blocks.push_back(b);
      if (s->reserved > 0) {
        --s->reserved;
        --im.reserved;
      }
    }
    std::copy(s->blocks.begin(), s->blocks.end(), im.tables.begin() + static_cast<std::ptrdiff_t>(slot) * table_max);
    for (int64_t i = 0; i < fed; ++i) {
      im.tokens.push_back(i < part.fed ? s->tokens[static_cast<size_t>(s->n_past + i)]
                                       : part.draft.tokens[static_cast<size_t>(i - part.fed)]);
      im.positions.push_back(static_cast<int32_t>(s->n_past + i));
      im.token_seq.push_back(static_cast<int32_t>(slot));
    }
    if (s->n_past + part.fed == static_cast<int64_t>(s->tokens.size())) {
      // The last context token's row, and one per draft after it.
      part.first_row = static_cast<int64_t>(im.logit_tokens.size());
      for (int64_t i = 0; i <= drafted; ++i) {
        im.logit_tokens.push_back(static_cast<int32_t>(im.tokens.size() - 1 - static_cast<size_t>(drafted - i)));
      }
      if (s->prompt_done()) ++report.decode_tokens;
    }
    if (!s->prompt_done()) report.prompt_tokens += static_cast<int32_t>(part.fed);
  }

  // Only prompt chunks that end before their prompts do: the pass still
  // needs one logits row (computed, not used).
  if (im.logit_tokens.empty()) im.logit_tokens.push_back(static_cast<int32_t>(im.tokens.size() - 1));
  const Status pass = model_.forward_sequences(
      backend_, pool, model::SequenceBatch{im.tokens, im.positions, im.token_seq, im.tables, im.logit_tokens},
      im.logits);
  if (!pass.ok()) {
    const std::string message = pass.error().message;
    for (auto& part : parts) {
      finish(*part.s, StopReason::Cancelled, pool, im.reserved, message);
      part.s->gone = true;
    }
    leave(im.running, [](const std::unique_ptr<Sequence>& s) { return s->gone; });
    return pass.error();
  }
  for (auto& part : parts) part.s->n_past += part.fed + static_cast<int64_t>(part.draft.tokens.size());

  const auto n_vocab = static_cast<size_t>(model_.hparams().n_vocab);
  const double step_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - step_start).count();
  // One token out: the events and every end rule, with `n_past` the
  // positions in the cache as plain decoding would have them then.
  auto emit = [&](Sequence& s, int32_t token, int64_t n_past) {
    const auto& eog = s.req.end_of_generation;
    if (std::find(eog.begin(), eog.end(), token) != eog.end()) {
      finish(s, StopReason::EndOfGeneration, pool, im.reserved);
      return false;
    }
    s.tokens.push_back(token);
    ++s.generated;
    const std::string shown = s.stops.push(config_.detokenize ? config_.detokenize(token) : std::string()).text;
    SequenceEvent e;
    e.id = s.id;
    e.token = token;
    e.text = shown;
    e.usage = usage_of(s);
    if (s.on_event) s.on_event(e);
    std::optional<StopReason> end;
    if (s.stops.stopped()) {
      end = StopReason::StopString;
    } else if (n_past >= config_.n_ctx) {
      end = StopReason::ContextFull;
    } else if (s.generated >= s.req.max_tokens) {
      end = StopReason::MaxTokens;
    } else if (s.req.cancel.requested()) {
      end = StopReason::Cancelled;
    }
    if (!end) return true;
    finish(s, *end, pool, im.reserved);
    return false;
  };
  auto logits_row = [&](const Part& part, int64_t i) {
    return std::span<const float>(im.logits.data() + static_cast<size_t>(part.first_row + i) * n_vocab, n_vocab);
  };
  // Each plain step's draw, on the backend's host threads: a draw touches
  // only its own sequence (its sampler, its request's chooser), and one
  // over a 152k vocabulary with OpenAI's default sampling (the whole
  // softmax) takes about 0.3 ms, so eight in a row were a sixth of an
  // eight-stream step. Verify passes draw in the loop below.
  std::vector<size_t> plain;
  for (size_t i = 0; i < parts.size(); ++i) {
    Part& part = parts[i];
    if (part.first_row < 0) continue;
    const Sequence& s = *part.s;
    if (!s.req.choose) {
      const auto rows = static_cast<size_t>(1 + part.draft.tokens.size());
      for (size_t r = 0; r < rows; ++r) {
        float* row = im.logits.data() + (static_cast<size_t>(part.first_row) + r) * n_vocab;
        for (int32_t t : s.req.masked_tokens) {
          if (t >= 0 && static_cast<size_t>(t) < n_vocab) row[t] = -std::numeric_limits<float>::infinity();
        }
      }
    }
    if (part.draft.tokens.empty()) plain.push_back(i);
  }
  std::vector<int32_t> drawn(parts.size(), -1);
  backend_.run_host_tasks(static_cast<int64_t>(plain.size()), [&](int64_t k) {
    const size_t i = plain[static_cast<size_t>(k)];
    Sequence& s = *parts[i].s;
    const auto row = logits_row(parts[i], 0);
    drawn[i] = s.req.choose ? s.req.choose(row, s.sampler) : s.sampler.sample(row);
  });
  std::vector<Sequence*> done;
  for (size_t pi = 0; pi < parts.size(); ++pi) {
    Part& part = parts[pi];
    if (part.first_row < 0) continue;
    Sequence& s = *part.s;
    auto row = [&](int64_t i) { return logits_row(part, i); };
    report.sampled.push_back(s.id);
    const auto drafted = static_cast<int32_t>(part.draft.tokens.size());
    if (drafted == 0) {
      const int32_t token = drawn[pi];
      if (part.speculating) s.req.speculator->on_plain_step(step_ms);
      if (!emit(s, token, s.n_past)) done.push_back(&s);
      continue;
    }
    // The verify pass: drafts are kept while the sequence's own sampler
    // accepts them; the first rejection gives its replacement, a fully
    // accepted draft one more token from the last row.
    const int64_t base = s.n_past - 1 - drafted;  // positions before the fed token
    int32_t accepted = 0;
    int32_t next = -1;
    for (; accepted < drafted; ++accepted) {
      const auto a = static_cast<size_t>(accepted);
      const auto q = part.draft.q.empty() ? std::span<const sampling::Candidate>()
                                          : std::span<const sampling::Candidate>(part.draft.q[a]);
      const auto verdict = s.sampler.verify(row(accepted), part.draft.tokens[a], q);
      if (!verdict.accepted) {
        next = verdict.token;
        break;
      }
    }
    if (next < 0) next = s.sampler.sample(row(drafted));
    // Rejected drafts' K/V stay in the blocks past n_past, to be written over.
    s.n_past = base + 1 + accepted;
    report.drafted_tokens += drafted;
    report.accepted_tokens += accepted;
    s.req.speculator->on_verify(drafted, accepted, part.draft_ms, std::max(0.0, step_ms - part.draft_ms));
    bool going = true;
    for (int32_t i = 0; i < accepted && going; ++i) {
      going = emit(s, part.draft.tokens[static_cast<size_t>(i)], base + 1 + i);
    }
    if (going) going = emit(s, next, s.n_past);
    if (!going) done.push_back(&s);
  }
  leave(im.running, [&](const std::unique_ptr<Sequence>& s) {
    return std::find(done.begin(), done.end(), s.get()) != done.end();
  });
  return report;
}

}  // namespace hearth::runtime
