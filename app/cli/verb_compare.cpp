// hearth-cli compare: how far models (typically quantizations) stray from a
// base model. The base runs first and leaves its distributions on disk
// (engine/quality/kl_divergence.h); it is freed before each model is loaded,
// so one model is in memory at a time. Per model: KL divergence from the base
// (mean, p99), top-1 agreement and perplexity over the same positions, its
// memory and its pp/tg speed (measure/speed.h, bench's own measurement). With
// --prompts, the positions are the base's greedy continuations of the
// prompts, and each model's own greedy continuation is compared with the
// base's token for token.
#include <fmt/format.h>
#include <hearth/engine/quality/greedy.h>
#include <hearth/engine/quality/kl_divergence.h>
#include <hearth/engine/quality/segments.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>

#include "args.h"
#include "measure/speed.h"
#include "engine_setup.h"
#include "tokenizer_cli.h"
#include "compare/prompt_set.h"
#include "verbs.h"

namespace hearth::cli {

// bench and compare share one timing path (app/measure), which the app uses too.
using namespace hearth::measure;
namespace {

// Loads `path` with the engine flags of `args`.
Result<EngineSetup> load_model(const ParsedArgs& args, const std::string& path, int64_t n_ctx) {
  ParsedArgs with_model = args;
  with_model.values_["model"] = path;
  return setup_engine(with_model, n_ctx);
}

// What the base leaves for the models: the scored segments, its
// distributions, and (prompts) its greedy continuations.
struct BaseRun {
  std::vector<std::string> vocab;  // token texts: a model must share them
  std::vector<quality::Segment> segments;
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::vector<int32_t>> continuations;
  std::unique_ptr<quality::BaseRecord> record;
};

struct Inputs {
  std::optional<std::string> text;
  std::vector<std::string> prompts;
  int32_t n_ctx = 512;
  int32_t greedy_tokens = 64;
};

Result<BaseRun> run_base(const ParsedArgs& args, const std::string& path, const Inputs& in,
                         const quality::EvalOptions& eval_in) {
  HEARTH_TRY(auto setup, load_model(args, path, in.n_ctx));
  quality::EvalOptions eval = eval_in;
  eval.kv_type = setup.kv_type;
  HEARTH_TRY(auto tok, tokenizer::Tokenizer::from_gguf(setup.model->file()));
  BaseRun run;
  for (const auto& t : tok.vocab().tokens) run.vocab.push_back(t.text);
  if (in.text) {
    HEARTH_TRY(run.segments, quality::text_windows(quality::tokenize_text(tok, *in.text), in.n_ctx));
  } else {
    for (size_t i = 0; i < in.prompts.size(); ++i) {
      auto ids = quality::tokenize_text(tok, in.prompts[i]).tokens;
      if (ids.empty()) return make_error(ErrorCode::InvalidArgument, fmt::format("prompt {} is empty", i + 1));
      if (static_cast<int64_t>(ids.size()) + in.greedy_tokens > in.n_ctx) {
        return make_error(ErrorCode::InvalidArgument,
                          fmt::format("prompt {} has {} tokens; with {} greedy tokens it does not fit a context of {}",
                                      i + 1, ids.size(), in.greedy_tokens, in.n_ctx));
      }
      HEARTH_TRY(auto cont, quality::greedy_continuation(*setup.model, *setup.backend, ids, in.greedy_tokens, eval));
      run.segments.push_back(quality::continuation_segment(ids, cont));
      run.prompts.push_back(std::move(ids));
      run.continuations.push_back(std::move(cont));
    }
  }
  HEARTH_TRY(auto record, quality::record_base(*setup.model, *setup.backend, run.segments, eval));
  run.record = std::make_unique<quality::BaseRecord>(std::move(record));
  return run;
}

struct ModelFigures {
  std::string path;
  quality::KldResult kld;
  std::optional<double> greedy_same;  // mean leading tokens equal to the base's
  SpeedRuns speed;
};

Result<ModelFigures> run_model(const ParsedArgs& args, const std::string& path, const Inputs& in, const BaseRun& base,
                               const quality::EvalOptions& eval_in, const SpeedOptions& speed) {
  HEARTH_TRY(auto setup, load_model(args, path, std::max<int64_t>(in.n_ctx, speed_context(speed))));
  quality::EvalOptions eval = eval_in;
  eval.kv_type = setup.kv_type;
  {
    // Distributions over different vocabularies cannot be compared, even
    // when their sizes agree.
    HEARTH_TRY(auto tok, tokenizer::Tokenizer::from_gguf(setup.model->file()));
    const auto& tokens = tok.vocab().tokens;
    bool same = tokens.size() == base.vocab.size();
    for (size_t i = 0; same && i < tokens.size(); ++i) same = tokens[i].text == base.vocab[i];
    if (!same) return make_error(ErrorCode::InvalidArgument, "its vocabulary differs from the base's");
  }
  ModelFigures f;
  f.path = path;
  HEARTH_TRY(f.kld, quality::compare_with_base(*setup.model, *setup.backend, *base.record, base.segments, eval));
  if (!base.prompts.empty()) {
    double same = 0;
    for (size_t i = 0; i < base.prompts.size(); ++i) {
      HEARTH_TRY(auto cont, quality::greedy_continuation(*setup.model, *setup.backend, base.prompts[i],
                                                         in.greedy_tokens, eval));
      same += static_cast<double>(quality::common_prefix(cont, base.continuations[i]));
    }
    f.greedy_same = same / static_cast<double>(base.prompts.size());
  }
  HEARTH_TRY(f.speed, measure_speed(*setup.model, *setup.backend, setup.kv_type, speed));
  return f;
}

nlohmann::json to_json(const ModelFigures& f) {
  const Stats pp = stats(f.speed.pp_tps), tg = stats(f.speed.tg_tps);
  nlohmann::json j = {{"model", f.path},
                      {"kld_mean", f.kld.kld_mean},
                      {"kld_p99", f.kld.kld_p99},
                      {"top1", f.kld.top1},
                      {"ppl", f.kld.ppl.ppl},
                      {"bytes", f.speed.weight_bytes},
                      {"pp_tps", pp.mean},
                      {"tg_tps", tg.mean},
                      {"kld_sd", f.kld.kld_sd},
                      {"kld_median", f.kld.kld_median},
                      {"kld_max", f.kld.kld_max},
                      {"top1_percent", 100.0 * f.kld.top1},
                      {"ppl_sd", f.kld.ppl.ppl_sd},
                      {"positions", f.kld.positions},
                      {"memory_bytes", f.speed.memory_bytes()},
                      {"pp_tps_sd", pp.sd},
                      {"tg_tps_sd", tg.sd}};
  if (f.greedy_same) j["greedy_same_tokens"] = *f.greedy_same;
  return j;
}

void print_text(const ModelFigures& f, const Inputs& in) {
  const Stats pp = stats(f.speed.pp_tps), tg = stats(f.speed.tg_tps);
  std::printf("\nmodel      %s\n", f.path.c_str());
  std::printf("KLD        mean %.6f +- %.6f, p99 %.6f, median %.6f, max %.6f over %lld positions\n", f.kld.kld_mean,
              f.kld.kld_sd, f.kld.kld_p99, f.kld.kld_median, f.kld.kld_max, static_cast<long long>(f.kld.positions));
  std::printf("top-1      %.3f%% agree with the base\n", 100.0 * f.kld.top1);
  std::printf("ppl        %.4f +- %.5f\n", f.kld.ppl.ppl, f.kld.ppl.ppl_sd);
  if (f.greedy_same) {
    std::printf("greedy     %.2f of %d tokens equal the base's, on average\n", *f.greedy_same, in.greedy_tokens);
  }
  std::printf("memory     %.1f MB weights, %.1f MB with the KV cache\n", static_cast<double>(f.speed.weight_bytes) / 1e6,
              static_cast<double>(f.speed.memory_bytes()) / 1e6);
  std::printf("speed      pp %.2f +- %.2f tok/s, tg %.2f +- %.2f tok/s\n", pp.mean, pp.sd, tg.mean, tg.sd);
}

}  // namespace

int run_compare(const std::vector<std::string>& argv) {
  VerbSpec spec{"compare",
                "--base B.gguf --model A.gguf [--model C.gguf ...] (--text F | --prompts F.jsonl) [--ctx N] [--json]",
                "KL divergence, top-1 agreement, perplexity, memory and speed of models against a base model.",
                {{"base", FlagKind::Value, "the reference model (e.g. F16)", "", "B.gguf"},
                 {"model", FlagKind::Value, "a model to compare (repeatable)", "m", "M.gguf"},
                 {"text", FlagKind::Value, "text scored in windows of --ctx tokens, as perplexity", "f", "F"},
                 {"prompts", FlagKind::Value, "JSONL prompts: {\"prompt\": \"...\"} or a string per line", "", "F.jsonl"},
                 {"ctx", FlagKind::Value, "window length / context in tokens (default 512)", "c", "N"},
                 {"greedy-tokens", FlagKind::Value, "greedy tokens per prompt with --prompts (default 64)", "", "N"},
                 {"pp", FlagKind::Value, "speed: prompt tokens (default 512, as bench)", "p", "N"},
                 {"tg", FlagKind::Value, "speed: generated tokens (default 128, as bench)", "n", "N"},
                 {"reps", FlagKind::Value, "speed: repetitions (default 3, as bench)", "r", "N"},
                 {"json", FlagKind::Switch, "one JSON object on stdout", "", ""}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  const auto models = args->get_all("model");
  auto ctx = args->get_int("ctx", 512, 4, 1 << 20);
  auto greedy = args->get_int("greedy-tokens", 64, 1, 1 << 16);
  auto pp = args->get_int("pp", 512, 0, 1 << 16);
  auto tg = args->get_int("tg", 128, 0, 1 << 16);
  auto reps = args->get_int("reps", 3, 1, 100);
  if (!args->has("base") || models.empty() || args->has("text") == args->has("prompts")) {
    std::fprintf(stderr, "compare: --base, at least one --model, and one of --text or --prompts are required\n");
    return kExitUsage;
  }
  for (const auto* r : {&ctx, &greedy, &pp, &tg, &reps}) {
    if (!r->ok()) {
      std::fprintf(stderr, "compare: %s\n", r->error().message.c_str());
      return kExitUsage;
    }
  }
  Inputs in;
  in.n_ctx = static_cast<int32_t>(*ctx);
  in.greedy_tokens = static_cast<int32_t>(*greedy);
  const std::string input_path = args->has("text") ? *args->get("text") : *args->get("prompts");
  auto content = read_whole_file(input_path, args->has("text") ? "text file" : "prompts file");
  if (!content.ok()) {
    std::fprintf(stderr, "compare: %s\n", content.error().message.c_str());
    return kExitBadInput;
  }
  if (args->has("text")) {
    in.text = std::move(*content);
  } else {
    auto prompts = compare::parse_prompt_lines(input_path, *content);
    if (!prompts.ok()) {
      std::fprintf(stderr, "compare: %s\n", prompts.error().message.c_str());
      return kExitBadInput;
    }
    in.prompts = std::move(prompts->prompts);
  }
  const auto fail = [](const std::string& what, const Error& e) {
    std::fprintf(stderr, "compare: %s: %s\n", what.c_str(), e.message.c_str());
    return e.code == ErrorCode::InvalidArgument && e.message.rfind("--", 0) == 0 ? kExitUsage : kExitBadInput;
  };
  const quality::EvalOptions eval;
  const std::string base_path = *args->get("base");
  auto base = run_base(*args, base_path, in, eval);
  if (!base.ok()) return fail(base_path, base.error());
  const SpeedOptions speed{*pp, *tg, *reps};
  nlohmann::json out_models = nlohmann::json::array();
  if (!args->has("json")) {
    std::printf("base       %s: ppl %.4f +- %.5f over %lld positions\n", base_path.c_str(), base->record->ppl.ppl,
                base->record->ppl.ppl_sd, static_cast<long long>(base->record->ppl.scored));
  }
  for (const auto& path : models) {
    auto f = run_model(*args, path, in, *base, eval, speed);
    if (!f.ok()) return fail(path, f.error());
    if (args->has("json")) {
      out_models.push_back(to_json(*f));
    } else {
      print_text(*f, in);
    }
  }
  if (args->has("json")) {
    const nlohmann::json j = {{"base", base_path},
                              {"ctx", in.n_ctx},
                              {"base_ppl", base->record->ppl.ppl},
                              {"base_ppl_sd", base->record->ppl.ppl_sd},
                              {"positions", base->record->ppl.scored},
                              {"models", out_models}};
    std::printf("%s\n", j.dump().c_str());
  }
  return kExitOk;
}

}  // namespace hearth::cli
