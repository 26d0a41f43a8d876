#include "spec_setup.h"

#include <fmt/format.h>
#include <hearth/engine/runtime/backend_choice.h>

#include <cstdio>

namespace hearth::cli {

std::vector<FlagSpec> speculation_flags() {
  return {{"spec", FlagKind::Value, "speculative decoding: off, ngram or draft (default off; draft with --draft-model)",
           "", "MODE"},
          {"draft-model", FlagKind::Value, "draft model with the target's vocabulary (--spec draft)", "", "D.gguf"},
          {"draft-max", FlagKind::Value, "tokens drafted per step at most, 1 to 7 (default 7)", "", "K"},
          {"draft-backend", FlagKind::Value, "where the draft model runs: cpu (default) or vulkan", "", "B"},
          {"draft-fixed", FlagKind::Switch, "always draft --draft-max tokens (no adaptation, never switched off)", "",
           ""}};
}

Result<std::unique_ptr<SpecSetup>> setup_speculation(const ParsedArgs& args, const model::Model& target, int64_t n_ctx,
                                                     int threads) {
  auto out = std::make_unique<SpecSetup>();
  const std::string default_mode = args.has("draft-model") ? "draft" : "off";
  HEARTH_TRY(out->mode, runtime::parse_spec_mode(args.get_or("spec", default_mode)));
  HEARTH_TRY(const int64_t draft_max, args.get_int("draft-max", runtime::kMaxDraftTokens, 1, runtime::kMaxDraftTokens));
  runtime::SpeculationConfig& config = out->config;
  config.draft_max = static_cast<int32_t>(draft_max);
  config.adaptive = !args.has("draft-fixed");
  switch (out->mode) {
    case runtime::SpecMode::Off:
      if (args.has("draft-model")) {
        return make_error(ErrorCode::InvalidArgument, "--draft-model drafts only with --spec draft");
      }
      return out;
    case runtime::SpecMode::Ngram:
      out->speculator = std::make_unique<runtime::Speculator>(std::make_unique<runtime::NgramDrafter>(), config);
      return out;
    case runtime::SpecMode::Draft: break;
  }
  if (!args.has("draft-model")) return make_error(ErrorCode::InvalidArgument, "--spec draft needs --draft-model");
  out->draft_path = *args.get("draft-model");
  const std::string where = args.get_or("draft-backend", "cpu");
  if (where != "cpu" && where != "vulkan") {
    return make_error(ErrorCode::InvalidArgument, fmt::format("--draft-backend '{}' is not one of cpu, vulkan", where));
  }
  runtime::BackendRequest request;
  request.preference = where == "vulkan" ? runtime::BackendPreference::Vulkan : runtime::BackendPreference::Cpu;
  request.cpu_threads = threads;
  auto chosen = runtime::choose_backend(request);
  // Where the draft runs is said, never silent (a Vulkan request may land on the CPU).
  std::fprintf(stderr, "draft model: %s\n", chosen.description.c_str());
  out->draft_backend = std::move(chosen.backend);
  auto draft = model::Model::load(out->draft_path);
  if (!draft.ok()) return make_error(draft.error().code, fmt::format("draft model {}: {}", out->draft_path, draft.error().message));
  out->draft_model = std::move(*draft);
  auto drafter = runtime::ModelDrafter::create(target, *out->draft_model, *out->draft_backend, n_ctx);
  if (!drafter.ok()) {
    return make_error(drafter.error().code, fmt::format("draft model {}: {}", out->draft_path, drafter.error().message));
  }
  out->speculator = std::make_unique<runtime::Speculator>(std::move(*drafter), config);
  return out;
}

server::SpeculatorFactory speculator_factory(const SpecSetup& setup, const model::Model& target, int64_t n_ctx) {
  const runtime::SpeculationConfig config = setup.config;
  switch (setup.mode) {
    case runtime::SpecMode::Off: return {};
    case runtime::SpecMode::Ngram:
      return [config]() -> Result<std::shared_ptr<runtime::Speculator>> {
        return std::make_shared<runtime::Speculator>(std::make_unique<runtime::NgramDrafter>(), config);
      };
    case runtime::SpecMode::Draft: break;
  }
  const SpecSetup* s = &setup;
  const model::Model* t = &target;
  return [s, t, n_ctx, config]() -> Result<std::shared_ptr<runtime::Speculator>> {
    HEARTH_TRY(auto drafter, runtime::ModelDrafter::create(*t, *s->draft_model, *s->draft_backend, n_ctx));
    return std::make_shared<runtime::Speculator>(std::move(drafter), config);
  };
}

}  // namespace hearth::cli
