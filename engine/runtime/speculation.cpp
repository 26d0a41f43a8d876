#include <fmt/format.h>
#include <hearth/engine/runtime/speculation.h>

#include <algorithm>
#include <cmath>

namespace hearth::runtime {

const char* to_string(SpecMode mode) {
  switch (mode) {
    case SpecMode::Off: return "off";
    case SpecMode::Ngram: return "ngram";
    case SpecMode::Draft: return "draft";
  }
  return "?";
}

Result<SpecMode> parse_spec_mode(std::string_view text) {
  if (text == "off") return SpecMode::Off;
  if (text == "ngram") return SpecMode::Ngram;
  if (text == "draft") return SpecMode::Draft;
  return make_error(ErrorCode::InvalidArgument,
                    fmt::format("unknown speculation mode \"{}\" (off, ngram or draft)", text));
}

SpecFigures SpecFigures::since(const SpecFigures& e) const {
  SpecFigures d;
  d.verify_passes = verify_passes - e.verify_passes;
  d.drafted = drafted - e.drafted;
  d.accepted = accepted - e.accepted;
  d.emitted = emitted - e.emitted;
  d.plain_steps = plain_steps - e.plain_steps;
  d.draft_ms = draft_ms - e.draft_ms;
  d.verify_ms = verify_ms - e.verify_ms;
  d.plain_ms = plain_ms - e.plain_ms;
  d.switch_offs = switch_offs - e.switch_offs;
  d.draft_errors = draft_errors - e.draft_errors;
  return d;
}

Speculator::Speculator(std::unique_ptr<Drafter> drafter, SpeculationConfig config)
    : drafter_(std::move(drafter)), config_(config) {
  config_.draft_max = std::clamp(config_.draft_max, 1, kMaxDraftTokens);
  config_.draft_min = std::clamp(config_.draft_min, 1, config_.draft_max);
  config_.probe_passes = std::max(1, config_.probe_passes);
  config_.plain_steps = std::max(1, config_.plain_steps);
  config_.probe_share = std::clamp(config_.probe_share, 0.001, 1.0);
  reset();
}

void Speculator::reset() {
  phase_ = config_.adaptive ? Phase::MeasurePlain : Phase::Speculate;
  length_ = config_.adaptive ? std::clamp(4, config_.draft_min, config_.draft_max) : config_.draft_max;
  phase_steps_ = 0;
  off_left_ = 0;
  next_off_ = config_.off_tokens;
  probe_ms_ = 0;
  probe_tokens_ = 0;
  plain_ = {};
  spec_ = {};
}

int32_t Speculator::draft_length() const { return phase_ == Phase::Speculate ? length_ : 0; }

void Speculator::on_plain_step(double ms) {
  ++figures_.plain_steps;
  figures_.plain_ms += ms;
  plain_.add(ms, 1);
  if (!config_.adaptive || phase_ == Phase::Speculate) return;  // an empty draft while speculating
  ++phase_steps_;
  if (phase_ == Phase::MeasurePlain && phase_steps_ >= config_.plain_steps) {
    begin_probe();
  } else if (phase_ == Phase::BackOff && --off_left_ <= 0) {
    begin_probe();
    spec_ = {};  // judged on fresh figures only
  }
}

void Speculator::begin_probe() {
  phase_ = Phase::Speculate;
  phase_steps_ = 0;
  probe_ms_ = 0;
  probe_tokens_ = 0;
}

void Speculator::on_verify(int32_t drafted, int32_t accepted, double draft_ms, double verify_ms) {
  ++figures_.verify_passes;
  figures_.drafted += drafted;
  figures_.accepted += accepted;
  figures_.emitted += accepted + 1;
  figures_.draft_ms += draft_ms;
  figures_.verify_ms += verify_ms;
  spec_.add(draft_ms + verify_ms, accepted + 1);
  probe_ms_ += draft_ms + verify_ms;
  probe_tokens_ += accepted + 1;
  if (!config_.adaptive) return;
  length_ = accepted >= drafted ? std::min(length_ + 1, config_.draft_max)
                                : std::clamp(accepted + 1, config_.draft_min, config_.draft_max);
  if (++phase_steps_ < config_.probe_passes || plain_.per_ms() <= 0) return;
  if (spec_.per_ms() < plain_.per_ms()) {
    phase_ = Phase::BackOff;
    phase_steps_ = 0;
    // What this probe cost beyond decoding its tokens plainly, spread over
    // enough plain tokens to stay within probe_share of their time.
    const double plain_ms = 1.0 / plain_.per_ms();
    const double extra_ms = probe_ms_ - static_cast<double>(probe_tokens_) * plain_ms;
    const double spread = std::ceil(std::max(0.0, extra_ms) / (config_.probe_share * plain_ms));
    const auto needed = static_cast<int32_t>(std::min<double>(spread, config_.off_tokens_max));
    off_left_ = std::max(next_off_, needed);
    next_off_ = std::min(off_left_ * 2, config_.off_tokens_max);
    ++figures_.switch_offs;
  } else {
    next_off_ = config_.off_tokens;
  }
}

}  // namespace hearth::runtime

namespace hearth::runtime {

void Speculator::on_draft_error(std::string message) {
  ++figures_.draft_errors;
  last_error_ = std::move(message);
}

}  // namespace hearth::runtime
