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

namespace {

// Whether `dist` lists every one of n tokens in token order (the
// distribution of a chain that keeps every token).
bool in_token_order(std::span<const Candidate> dist, size_t n) {
  if (dist.size() != n) return false;
  for (size_t i = 0; i < n; ++i) {
    if (dist[i].token != static_cast<int32_t>(i)) return false;
  }
  return true;
}

}  // namespace

Sampler::Verdict Sampler::verify(std::span<const float> logits, int32_t draft, std::span<const Candidate> q) {
  std::vector<Candidate>& p = scratch_.p;
  distribution_into(logits, p);
  Verdict v;
  if (config_.temperature <= 0.0f) {
    v.token = p.front().token;
    v.accepted = v.token == draft;
    accept(v.token);
    return v;
  }
  const size_t n = logits.size();
  const bool in_vocabulary = draft >= 0 && static_cast<size_t>(draft) < n;
  // Both over the whole vocabulary in token order (a drafter and a target
  // sampling the whole softmax): p and q are read by token where they lie,
  // and the residual is drawn without being listed. Listing it, and q by
  // token, cost 11-15 ms over a 152k vocabulary, most of it in the page
  // faults of fresh megabyte buffers.
  const bool dense = !q.empty() && in_token_order(p, n) && in_token_order(q, n);
  double p_draft = 0, q_draft = 1.0;
  std::vector<double>& q_of = scratch_.q_of;  // q by token, where not dense
  if (dense) {
    p_draft = in_vocabulary ? p[static_cast<size_t>(draft)].p : 0.0;
    q_draft = in_vocabulary ? q[static_cast<size_t>(draft)].p : 0.0;
  } else {
    for (const auto& c : p) {
      if (c.token == draft) p_draft = c.p;
    }
    q_of.assign(n, 0.0);
    if (!q.empty()) {
      for (const auto& c : q) {
        if (c.token >= 0 && static_cast<size_t>(c.token) < n) q_of[static_cast<size_t>(c.token)] = c.p;
      }
      q_draft = in_vocabulary ? q_of[static_cast<size_t>(draft)] : 0.0;
    } else if (in_vocabulary) {
      q_of[static_cast<size_t>(draft)] = 1.0;
    }
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
  v.token = dense ? draw_residual(p, q) : draw_residual(p, q_of);
  accept(v.token);
  return v;
}

int32_t Sampler::draw_residual(std::span<const Candidate> p, std::span<const Candidate> q) {
  double sum = 0;
  for (size_t i = 0; i < p.size(); ++i) sum += std::max(0.0, static_cast<double>(p[i].p) - q[i].p);
  // p <= q everywhere means p == q (both sum to 1) up to rounding: the
  // draft would have been accepted; draw from p.
  if (sum <= 0) return draw(p);
  const double target = rng_.uniform() * sum;
  double cum = 0;
  int32_t token = -1;
  for (size_t i = 0; i < p.size(); ++i) {
    const double r = static_cast<double>(p[i].p) - q[i].p;
    if (r <= 0) continue;
    cum += r;
    token = p[i].token;
    if (target < cum) break;
  }
  return token;
}

int32_t Sampler::draw_residual(std::span<const Candidate> p, std::span<const double> q_of) {
  std::vector<Candidate>& residual = scratch_.residual;
  residual.clear();
  double sum = 0;
  for (const auto& c : p) {
    const double r = c.p - q_of[static_cast<size_t>(c.token)];
    if (r > 0) {
      residual.push_back(Candidate{c.token, c.logit, static_cast<float>(r)});
      sum += r;
    }
  }
  if (residual.empty() || sum <= 0) return draw(p);  // as above
  for (auto& c : residual) c.p = static_cast<float>(c.p / sum);
  return draw(residual);
}

}  // namespace hearth::sampling
