// hearth-cli perplexity: a model's perplexity over a text in the reference
// engine's windows (engine/quality): the text is tokenized once, cut into
// windows of --ctx tokens that each start with BOS, and the second half of
// every window is scored.
#include <hearth/engine/quality/perplexity.h>
#include <hearth/engine/quality/segments.h>

#include <nlohmann/json.hpp>

#include <cstdio>

#include "args.h"
#include "engine_setup.h"
#include "tokenizer_cli.h"
#include "verbs.h"

namespace hearth::cli {

int run_perplexity(const std::vector<std::string>& argv) {
  VerbSpec spec{"perplexity", "--model M.gguf --text F [--ctx N] [--json]",
                "Perplexity over a text in sliding windows, as the reference engine's perplexity tool computes it.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"text", FlagKind::Value, "text file (at least 2 x ctx tokens)", "f", "F"},
                 {"ctx", FlagKind::Value, "window length in tokens (default 512)", "c", "N"},
                 {"json", FlagKind::Switch, "one JSON object on stdout", "", ""}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  auto ctx = args->get_int("ctx", 512, 4, 1 << 20);
  if (!ctx.ok() || !args->has("model") || !args->has("text")) {
    std::fprintf(stderr, "perplexity: --model and --text are required; --ctx takes a count of at least 4\n");
    return kExitUsage;
  }
  auto text = read_whole_file(*args->get("text"), "text file");
  if (!text.ok()) {
    std::fprintf(stderr, "perplexity: %s\n", text.error().message.c_str());
    return kExitBadInput;
  }
  auto setup = setup_engine(*args, *ctx);
  if (!setup.ok()) {
    std::fprintf(stderr, "perplexity: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  const auto& model = *setup->model;
  auto tok = tokenizer::Tokenizer::from_gguf(model.file());
  if (!tok.ok()) {
    std::fprintf(stderr, "perplexity: %s: %s\n", args->get("model")->c_str(), tok.error().message.c_str());
    return kExitBadInput;
  }
  const auto scored_text = quality::tokenize_text(*tok, *text);
  auto windows = quality::text_windows(scored_text, static_cast<int32_t>(*ctx));
  if (!windows.ok()) {
    std::fprintf(stderr, "perplexity: %s: %s\n", args->get("text")->c_str(), windows.error().message.c_str());
    return kExitBadInput;
  }
  quality::EvalOptions eval;
  eval.kv_type = setup->kv_type;
  auto r = quality::perplexity(model, *setup->backend, *windows, eval);
  if (!r.ok()) {
    std::fprintf(stderr, "perplexity: %s\n", r.error().message.c_str());
    return kExitBadInput;
  }
  if (args->has("json")) {
    const nlohmann::json j = {{"model", *args->get("model")},
                              {"tokens", scored_text.tokens.size()},
                              {"ppl", r->ppl},
                              {"ppl_sd", r->ppl_sd},
                              {"ctx", *ctx},
                              {"windows", r->segments},
                              {"scored_tokens", r->scored}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("model   %s\n", args->get("model")->c_str());
    std::printf("tokens  %zu: %d windows of %lld, %lld scored\n", scored_text.tokens.size(), r->segments,
                static_cast<long long>(*ctx), static_cast<long long>(r->scored));
    std::printf("ppl     %.4f +- %.5f\n", r->ppl, r->ppl_sd);
  }
  return kExitOk;
}

}  // namespace hearth::cli
