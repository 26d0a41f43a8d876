// The rejection rule of speculative sampling (Leviathan et al. 2023, Chen et
// al. 2023): accepting a draft x ~ q with probability min(1, p(x)/q(x)) and
// otherwise drawing from the normalized residual max(0, p - q) yields tokens
// distributed exactly as p, whatever q is.
#include "hearth/engine/sampling/sampler.h"

#include <algorithm>
#include <vector>

namespace hearth::sampling {

void Sampler::set_history(std::span<const int32_t> history) {
  recent_.clear();
  if (config_.penalty_window <= 0) return;
  const size_t keep = std::min(history.size(), static_cast<size_t>(config_.penalty_window));
  for (size_t i = history.size() - keep; i < history.size(); ++i) recent_.push_back(history[i]);
}

int32_t Sampler::draw(std::span<const Candidate> dist) {
  if (dist.empty()) return -1;
  if (dist.size() == 1) return dist.front().token;
  const double u = rng_.uniform();
  double cum = 0;
  for (const auto& c : dist) {
    cum += c.p;
    if (u < cum) return c.token;
  }
  return dist.back().token;  // rounding left the sum just under 1
}

Sampler::Verdict Sampler::verify(std::span<const float> logits, int32_t draft, std::span<const Candidate> q) {
  const std::vector<Candidate> p = distribution(logits);
  Verdict v;
  if (config_.temperature <= 0.0f) {
    v.token = p.front().token;
    v.accepted = v.token == draft;
    accept(v.token);
    return v;
  }
  double p_draft = 0;
  for (const auto& c : p) {
    if (c.token == draft) p_draft = c.p;
  }
  // q by token, over the vocabulary (a drafter sampling the whole softmax
  // gives every token; a hash map of them cost more than the draw).
  std::vector<double> q_of(logits.size(), 0.0);
  double q_draft = 1.0;
  if (!q.empty()) {
    for (const auto& c : q) {
      if (c.token >= 0 && static_cast<size_t>(c.token) < q_of.size()) q_of[static_cast<size_t>(c.token)] = c.p;
    }
    q_draft = draft >= 0 && static_cast<size_t>(draft) < q_of.size() ? q_of[static_cast<size_t>(draft)] : 0.0;
  } else if (draft >= 0 && static_cast<size_t>(draft) < q_of.size()) {
    q_of[static_cast<size_t>(draft)] = 1.0;
  }
  // A draft the drafter could not have drawn (q = 0) is never accepted: the
  // ratio is undefined and the residual below is then p itself.
  const double u = rng_.uniform();
  if (q_draft > 0 && u * q_draft < p_draft) {
    v.accepted = true;
    v.token = draft;
    accept(draft);
    return v;
  }
  std::vector<Candidate> residual;
  residual.reserve(p.size());
  double sum = 0;
  for (const auto& c : p) {
    const double r = c.p - q_of[static_cast<size_t>(c.token)];
    if (r > 0) {
      residual.push_back(Candidate{c.token, c.logit, static_cast<float>(r)});
      sum += r;
    }
  }
  if (residual.empty() || sum <= 0) {
    // p <= q everywhere means p == q (both sum to 1) up to rounding: the
    // draft would have been accepted; draw from p.
    v.token = draw(p);
  } else {
    for (auto& c : residual) c.p = static_cast<float>(c.p / sum);
    v.token = draw(residual);
  }
  accept(v.token);
  return v;
}

}  // namespace hearth::sampling
