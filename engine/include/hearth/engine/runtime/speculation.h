// Speculative decoding's policy: how many tokens to draft, and whether
// drafting pays at all. A Speculator lives as long as a conversation (its
// rates describe that text and that drafter) and is handed to
// Session::generate through GenerateOptions.
//
// Adaptive policy: the draft length follows the acceptance (one more after
// a fully accepted draft, the accepted length plus one after a rejection);
// the speed of plain decoding is measured first, then speculation is probed
// for a few verify passes and compared with it: when it emits fewer tokens
// per second it is switched off for a while (64 tokens, doubling while it
// keeps losing, and at least long enough that what the probe cost beyond
// plain decoding is probe_share of the plain time until the next probe) and
// probed again, so a drafter that never agrees costs a few passes, not the
// conversation.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/runtime/drafter.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hearth::runtime {

enum class SpecMode { Off, Ngram, Draft };
const char* to_string(SpecMode mode);
Result<SpecMode> parse_spec_mode(std::string_view text);

// A verify pass holds the sampled token and the drafts. Up to 8 rows the CPU
// backend runs every matrix product through its decode kernels, which give
// each row bit for bit what a one-token pass gives it (so greedy output
// with speculation is exactly greedy output without); a ninth row would
// switch to the prompt kernels. Drafts are capped to fit.
inline constexpr int32_t kMaxDraftTokens = 7;
// Rows of one pass that still take the few-token kernels (both backends):
// the sampled token and its drafts, or a batch's decode tokens and theirs.
inline constexpr int32_t kVerifyRowsMax = kMaxDraftTokens + 1;

struct SpeculationConfig {
  int32_t draft_max = kMaxDraftTokens;  // tokens drafted per step at most (1..kMaxDraftTokens)
  int32_t draft_min = 1;
  bool adaptive = true;    // false: always draft_max, never switched off
  int32_t plain_steps = 4;       // plain tokens measured before speculating at all
  // Verify passes before the first comparison; after them every pass is
  // compared (two keep the cost of probing a drafter that never agrees low).
  int32_t probe_passes = 2;
  int32_t off_tokens = 64;       // plain tokens after speculation first loses
  int32_t off_tokens_max = 1024; // the back-off doubles up to this
  // The back-off is also long enough that a lost probe's extra time (the
  // draft model's catch-up and drafting, the verify passes beyond the plain
  // steps they replace) is at most this share of the plain time until the
  // next probe: a draft model nearly as slow as the target is probed less
  // often than a cheap n-gram lookup. Capped at off_tokens_max.
  double probe_share = 0.02;
};

struct SpecFigures {
  int64_t verify_passes = 0;
  int64_t drafted = 0;
  int64_t accepted = 0;
  int64_t emitted = 0;      // tokens emitted by verify passes (accepted + 1 each)
  int64_t plain_steps = 0;  // tokens decoded plainly (off, probing, empty drafts)
  double draft_ms = 0;
  double verify_ms = 0;
  double plain_ms = 0;
  int64_t switch_offs = 0;
  int64_t draft_errors = 0;

  double acceptance_rate() const { return drafted > 0 ? static_cast<double>(accepted) / drafted : 0.0; }
  double mean_accepted() const { return verify_passes > 0 ? static_cast<double>(accepted) / verify_passes : 0.0; }
  // Tokens per second of each mode, and their ratio (0 while a side has no
  // measurement): what the status line shows as the effective speed-up.
  double spec_tps() const { return draft_ms + verify_ms > 0 ? 1000.0 * emitted / (draft_ms + verify_ms) : 0.0; }
  double plain_tps() const { return plain_ms > 0 ? 1000.0 * plain_steps / plain_ms : 0.0; }
  double speedup() const { return spec_tps() > 0 && plain_tps() > 0 ? spec_tps() / plain_tps() : 0.0; }
  SpecFigures since(const SpecFigures& earlier) const;
};

class Speculator {
 public:
  Speculator(std::unique_ptr<Drafter> drafter, SpeculationConfig config);

  Drafter& drafter() { return *drafter_; }
  const SpeculationConfig& config() const { return config_; }
  // Tokens to draft before the next step; 0: decode plainly (measuring the
  // plain speed, or switched off for now).
  int32_t draft_length() const;
  // A plain step took `ms` (one token); `draft_ms` of it went to a drafter
  // that proposed nothing.
  void on_plain_step(double ms);
  // A verify pass of `drafted` tokens kept `accepted` of them (and emitted
  // one more from the target's own logits).
  void on_verify(int32_t drafted, int32_t accepted, double draft_ms, double verify_ms);
  // The drafter failed (its model's context is full, ...): the step was
  // decoded plainly; the message is kept for the status line and logs.
  void on_draft_error(std::string message);
  const std::string& last_draft_error() const { return last_error_; }
  // A new conversation: forget the rates and the back-off.
  void reset();

  const SpecFigures& figures() const { return figures_; }
  // Whether the last comparison found speculation slower (it is off for now).
  bool switched_off() const { return phase_ == Phase::BackOff; }

 private:
  enum class Phase { MeasurePlain, Speculate, BackOff };
  // Enters Phase::Speculate with the probe's figures empty.
  void begin_probe();
  // Decayed sums, so the comparison follows the recent text.
  struct Rate {
    double ms = 0, tokens = 0;
    void add(double step_ms, double step_tokens) {
      ms = ms * kDecay + step_ms;
      tokens = tokens * kDecay + step_tokens;
    }
    double per_ms() const { return ms > 0 ? tokens / ms : 0; }
  };
  static constexpr double kDecay = 0.9;

  std::unique_ptr<Drafter> drafter_;
  SpeculationConfig config_;
  SpecFigures figures_;
  Phase phase_ = Phase::MeasurePlain;
  int32_t length_ = 4;
  int32_t phase_steps_ = 0;   // steps in the current phase
  int32_t off_left_ = 0;      // plain tokens left while backed off
  int32_t next_off_ = 0;      // the back-off the next loss gets
  double probe_ms_ = 0;       // time and tokens of the current probe (undecayed)
  int64_t probe_tokens_ = 0;
  Rate plain_, spec_;
  std::string last_error_;
};

}  // namespace hearth::runtime
