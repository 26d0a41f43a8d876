#include <hearth/engine/runtime/drafter.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/tokenizer/vocab_match.h>

#include <algorithm>
#include <cstdlib>

namespace hearth::runtime {
Status check_draft_vocabulary(const model::Model& target, const model::Model& draft) {
  return tokenizer::check_draft_tokens(target.file(), draft.file());
}

ModelDrafter::ModelDrafter(std::unique_ptr<Session> session) : session_(std::move(session)) {}
ModelDrafter::~ModelDrafter() = default;

Result<std::unique_ptr<ModelDrafter>> ModelDrafter::create(const model::Model& target, const model::Model& draft,
                                                           backend::Backend& backend, int64_t n_ctx) {
  HEARTH_CHECK(check_draft_vocabulary(target, draft));
  // Drafts are a few tokens per step; the prompt catch-up after a new
  // conversation goes in batches of this size.
  SessionConfig config;
  config.n_ctx = n_ctx;
  config.n_batch = 64;
  HEARTH_TRY(auto session, Session::create(draft, backend, config));
  return std::unique_ptr<ModelDrafter>(new ModelDrafter(std::move(session)));
}

Result<Draft> ModelDrafter::propose(std::span<const int32_t> context, int32_t max,
                                    const sampling::SamplerConfig& sampler) {
  Draft draft;
  if (max <= 0 || context.empty()) return draft;
  if (static_cast<int64_t>(context.size()) + max > session_->n_ctx()) return draft;  // nowhere to draft into
  const auto& held = session_->context();
  const size_t common =
      static_cast<size_t>(std::mismatch(held.begin(), held.end(), context.begin(), context.end()).first - held.begin());
  // At least the last token is computed again, so its logits are fresh.
  const size_t keep = std::min(common, context.size() - 1);
  if (keep < held.size()) HEARTH_CHECK(session_->truncate(keep));
  HEARTH_CHECK(session_->prefill(context.subspan(session_->context().size())));

  if (!sampler_ || !(sampler == sampler_config_)) {
    // Its own generator, seeded apart from the target's so the two draws are
    // independent (the rejection rule assumes it).
    sampling::SamplerConfig own = sampler;
    own.seed = sampler.seed ^ 0xD1B54A32D192ED03ull;
    sampler_ = std::make_unique<sampling::Sampler>(own);
    sampler_config_ = sampler;
  }
  sampler_->set_history(context);
  const bool greedy = sampler.temperature <= 0.0f;
  for (int32_t i = 0; i < max; ++i) {
    const auto logits = session_->last_logits();
    std::vector<sampling::Candidate> q = sampler_->distribution(logits);
    const int32_t token = greedy ? q.front().token : sampler_->draw(q);
    sampler_->accept(token);
    draft.tokens.push_back(token);
    if (!greedy) draft.q.push_back(std::move(q));
    if (i + 1 < max) HEARTH_CHECK(session_->decode(token));
  }
  return draft;
}

}  // namespace hearth::runtime
