// A conversation over one Session: its turns as token ranges of the context,
// the overflow policy chosen for it, and the events that report what the
// policy did (for the app to show and store).
//
//   stop      — a turn that does not fit is refused with a clear reason;
//   evict     — the oldest whole turns are dropped (the system prompt and the
//               summary note stay pinned) and the kept keys are moved to their
//               new positions by RoPE re-rotation, without a re-prefill;
//   summarize — from `summarize_at` of the context on, a SummaryJob asks the
//               model for a short note that replaces the oldest turns (pinned
//               after the system prompt). The job is resumable, one token per
//               step(), so the caller interleaves it with chat generation,
//               which keeps priority. When a turn would not fit before a
//               summary is ready, the conversation falls back to evict.
#pragma once

#include <hearth/engine/kv/prefix_index.h>
#include <hearth/engine/runtime/session.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::runtime {

enum class OverflowPolicy { Stop, Evict, Summarize };
const char* to_string(OverflowPolicy policy);
Result<OverflowPolicy> parse_overflow_policy(std::string_view text);

enum class TurnRole { System, Summary, Exchange };

// Tokens [begin, end) of the context. Ids grow with every turn and are never
// reused, so events can name turns the app stored.
struct Turn {
  int64_t id = 0;
  TurnRole role = TurnRole::Exchange;
  int64_t begin = 0;
  int64_t end = 0;
};

enum class OverflowAction { Stopped, Evicted, Summarized };
const char* to_string(OverflowAction action);

struct OverflowEvent {
  OverflowAction action = OverflowAction::Stopped;
  std::vector<int64_t> turn_ids;  // turns dropped or summarised (and an earlier note folded in)
  int64_t tokens_freed = 0;       // context positions given back
  std::string summary;            // Summarized: the note's text
  double pause_ms = 0;            // how long the conversation waited on the action
  std::string reason;             // Stopped: why, for the user
};

struct ConversationConfig {
  OverflowPolicy policy = OverflowPolicy::Stop;
  double summarize_at = 0.8;             // fraction of n_ctx that makes a summary due
  int32_t summary_max_tokens = 48;
  std::vector<int32_t> summary_request;  // appended after the context to ask for the summary
  std::vector<int32_t> note_prefix;      // put before the summary in the pinned note
  std::vector<int32_t> end_of_generation;
};

class SummaryJob;

class Conversation {
 public:
  // `prefix` (may be null) is consulted and filled by set_system.
  Conversation(Session& session, const model::Model& model, backend::Backend& backend, ConversationConfig config,
               DetokenizeFn detokenize, kv::PrefixIndex* prefix = nullptr);
  ~Conversation();

  // Starts over with `tokens` as the pinned system prompt, restoring what the
  // prefix index holds of it and prefilling the rest.
  // `cancel` is asked before every batch (and every summary step and shift
  // below); a cancelled call returns ErrorCode::Cancelled.
  Status set_system(std::span<const int32_t> tokens, const Cancellation& cancel = {});

  // Makes room for `needed` more tokens as the policy says. False when the
  // turn cannot fit (an event says why); the context is then unchanged.
  Result<bool> make_room(int64_t needed, const Cancellation& cancel = {});

  // A turn is everything appended between begin_turn and end_turn (the user
  // message, the template's markers and the reply).
  void begin_turn();
  void end_turn();

  // Removes the last `n` context tokens, which must lie within the newest
  // exchange turn (closed or open): the template renders the end of a reply
  // differently from the tokens generated, and the next turn replaces them.
  Status rollback(int64_t n);
  // Keeps the first `keep` turns and the context up to the end of the last
  // one kept (a regenerated reply or an edited message replaces what followed).
  Status keep_turns(size_t keep);

  // Summarize policy: the context (plus `upcoming` tokens the caller expects,
  // e.g. the size of the last turn) passed summarize_at and there is an
  // exchange turn to fold into a note.
  bool summary_due(int64_t upcoming = 0) const;
  // Starts a summary in the free tail of the cache; null when there is no
  // room for the request (the caller then relies on make_room's evict).
  Result<std::unique_ptr<SummaryJob>> start_summary();

  const std::vector<Turn>& turns() const { return turns_; }
  std::vector<OverflowEvent> take_events() { return std::exchange(events_, {}); }
  Session& session() { return session_; }
  const ConversationConfig& config() const { return config_; }

 private:
  friend class SummaryJob;
  int64_t pinned_end() const;  // end of the system prompt and the note
  // Removes context [begin, end) (whole turns), moving what follows down and
  // re-rotating its keys; `insert` tokens are prefilled in the gap first.
  Status replace_range(int64_t begin, int64_t end, std::span<const int32_t> insert);
  // replace_range's K/V work without rings: move the kept rows (RoPE
  // re-rotated) and compute the inserted tokens in place.
  Status relocate_and_insert(kv::KvCache& cache, int64_t begin, int64_t end, std::span<const int32_t> insert);
  // Drops the turns inside [begin, end) and shifts the later ones by delta.
  void update_turns(int64_t begin, int64_t end, int64_t delta);
  Status evict_for(int64_t needed, bool& fits, const Cancellation& cancel);

  Session& session_;
  const model::Model& model_;
  backend::Backend& backend_;
  ConversationConfig config_;
  DetokenizeFn detokenize_;
  kv::PrefixIndex* prefix_;
  std::vector<Turn> turns_;
  std::vector<OverflowEvent> events_;
  int64_t next_id_ = 0;
  int64_t turn_begin_ = -1;
  bool summary_running_ = false;
};

// A summary in progress. step() decodes one token; after done(), finish()
// swaps the summarised turns for the note and records the event.
class SummaryJob {
 public:
  Result<bool> step();  // true once the summary is complete
  bool done() const { return done_; }
  Status finish();
  ~SummaryJob();

 private:
  friend class Conversation;
  explicit SummaryJob(Conversation& c) : conv_(c) {}
  Conversation& conv_;
  std::vector<int32_t> saved_context_;
  std::vector<int32_t> summary_;
  int64_t covered_end_ = 0;          // the summarised turns end here
  std::vector<int64_t> covered_ids_;
  int32_t max_tokens_ = 0;
  double elapsed_ms_ = 0;
  bool done_ = false;
  bool finished_ = false;
};

}  // namespace hearth::runtime
