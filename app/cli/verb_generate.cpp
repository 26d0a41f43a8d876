// hearth-cli generate: plain completion (--raw) or one chat turn, streamed.
#include <fmt/format.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/tokenizer/stream_decoder.h>

#include <cstdio>
#include <optional>

#include "args.h"
#include "remote_cli.h"
#include "engine_setup.h"
#include "spec_setup.h"
#include "verbs.h"

namespace hearth::cli {

int run_generate(const std::vector<std::string>& argv) {
  VerbSpec spec{"generate", "(--model M.gguf | --endpoint URL --remote-model NAME) (--prompt P | --tokens IDS) [-n N] [--temp T] ...",
                "Prints the prompt's continuation as it streams.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"prompt", FlagKind::Value, "prompt text", "p", "TEXT"},
                 {"tokens", FlagKind::Value, "prompt as token ids instead of text", "", "IDS"},
                 {"n-predict", FlagKind::Value, "tokens to generate (default 128)", "n", "N"},
                 {"ctx", FlagKind::Value, "context size (default 2048)", "c", "N"},
                 {"raw", FlagKind::Switch, "plain completion, no chat template", "", ""},
                 {"stats", FlagKind::Switch, "print speed figures on stderr", "", ""},
                 {"print-ids", FlagKind::Switch, "print the generated token ids instead of text", "", ""}}};
  for (auto& f : sampling_flags()) spec.flags.push_back(f);
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  for (auto& f : speculation_flags()) spec.flags.push_back(f);
  for (auto& f : remote_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  if (args->has("endpoint")) return run_generate_remote(*args);
  for (const char* flag : {"remote-model", "api-key-env", "allow-lan", "remote-timeout"}) {
    if (args->has(flag)) {
      std::fprintf(stderr, "generate: --%s needs --endpoint\n", flag);
      return kExitUsage;
    }
  }
  if (!args->has("model") || (args->has("prompt") == args->has("tokens"))) {
    std::fprintf(stderr, "generate: --model and one of --prompt or --tokens are required\n");
    return kExitUsage;
  }
  runtime::GenerateOptions opt;
  auto n = args->get_int("n-predict", 128, 0, 1 << 20);
  auto ctx = args->get_int("ctx", 2048, 16, 1 << 22);
  auto sampler = parse_sampling(*args);
  for (const Error* e : {n.ok() ? nullptr : &n.error(), ctx.ok() ? nullptr : &ctx.error(),
                         sampler.ok() ? nullptr : &sampler.error()}) {
    if (e) {
      std::fprintf(stderr, "generate: %s\n", e->message.c_str());
      return kExitUsage;
    }
  }
  opt.max_tokens = static_cast<int32_t>(*n);
  opt.sampler = *sampler;

  auto setup = setup_engine(*args, *ctx);
  if (!setup.ok()) {
    std::fprintf(stderr, "generate: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  auto decoder = TextCodec::from_model(*setup->model);
  if (!decoder.ok()) {
    std::fprintf(stderr, "generate: %s\n", decoder.error().message.c_str());
    return kExitBadInput;
  }
  opt.end_of_generation = decoder->end_of_generation();
  auto speculation = setup_speculation(*args, *setup->model, *ctx, setup->threads);
  if (!speculation.ok()) {
    std::fprintf(stderr, "generate: %s\n", speculation.error().message.c_str());
    return speculation.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  opt.speculator = (*speculation)->speculator.get();

  std::vector<int32_t> prompt;
  std::string prompt_text;
  if (args->has("tokens")) {
    auto ids = parse_ids(*args->get("tokens"));
    if (!ids.ok()) {
      std::fprintf(stderr, "generate: %s\n", ids.error().message.c_str());
      return kExitUsage;
    }
    prompt = *ids;
    // Shown as the text it stands for: a leading BOS is dropped so the
    // SentencePiece space prefix of the first word goes with it.
    std::span<const int32_t> shown(prompt);
    if (!shown.empty() && shown.front() == decoder->tokenizer().vocab().special.bos) shown = shown.subspan(1);
    prompt_text = decoder->tokenizer().detokenize(shown);
  } else {
    auto ids = decoder->encode(*args->get("prompt"), args->has("raw") ? PromptMode::Raw : PromptMode::Chat);
    if (!ids.ok()) {
      std::fprintf(stderr, "generate: %s\n", ids.error().message.c_str());
      return kExitBadInput;
    }
    prompt = *ids;
    prompt_text = args->has("raw") ? *args->get("prompt") : std::string();
  }

  if (prompt.empty()) {
    // The session would refuse it too, in its own words ("generate: empty
    // context and empty prompt", printed after this verb's prefix).
    std::fprintf(stderr, "generate: the prompt has no tokens (an empty --prompt and a model that adds no BOS)\n");
    return kExitBadInput;
  }
  if (static_cast<int64_t>(prompt.size()) > *ctx) {
    std::fprintf(stderr, "generate: the prompt has %zu tokens but the context holds %lld; raise --ctx\n", prompt.size(),
                 static_cast<long long>(*ctx));
    return kExitBadInput;
  }
  auto session = runtime::Session::create(*setup->model, *setup->backend,
                                          runtime::SessionConfig{*ctx, setup->kv_type, 256});
  if (!session.ok()) {
    std::fprintf(stderr, "generate: %s\n", session.error().message.c_str());
    return kExitBadInput;
  }
  const bool print_ids = args->has("print-ids");
  if (!print_ids) std::fputs(prompt_text.c_str(), stdout);
  std::fflush(stdout);
  tokenizer::StreamDecoder stream(decoder->tokenizer());
  auto result = (*session)->generate(
      prompt, opt, [&](int32_t t) { return stream.push(t); },
      [print_ids](const runtime::TokenEvent& e) {
        if (print_ids) {
          std::printf("%d\n", e.token);
        } else {
          std::fwrite(e.text.data(), 1, e.text.size(), stdout);
        }
        std::fflush(stdout);
      });
  const std::string tail = stream.flush();
  if (!print_ids) {
    std::fputs(tail.c_str(), stdout);
    std::fputc('\n', stdout);
  }
  if (!result.ok()) {
    std::fprintf(stderr, "generate: %s\n", result.error().message.c_str());
    return kExitBadInput;
  }
  if (args->has("stats")) {
    const auto& f = result->figures;
    std::fprintf(stderr,
                 "prompt %lld tokens, %.1f tok/s; generated %lld tokens, %.1f tok/s; ttft %.1f ms; "
                 "inter-token p50 %.1f ms p95 %.1f ms; context %lld; stop: %s\n",
                 static_cast<long long>(f.prompt_tokens), f.prefill_tps, static_cast<long long>(f.generated_tokens),
                 f.decode_tps, f.ttft_ms, f.inter_token_p50_ms, f.inter_token_p95_ms,
                 static_cast<long long>(f.context_tokens), runtime::to_string(result->reason));
    if (opt.speculator) {
      const auto& sp = result->spec;
      std::fprintf(stderr,
                   "speculation %s: %lld verify passes, acceptance %.0f%% (%lld of %lld drafted), %.2f accepted per "
                   "pass, speed-up %.2fx, switched off %lld times\n",
                   opt.speculator->drafter().name(), static_cast<long long>(sp.verify_passes),
                   100.0 * sp.acceptance_rate(), static_cast<long long>(sp.accepted),
                   static_cast<long long>(sp.drafted), sp.mean_accepted(), sp.speedup(),
                   static_cast<long long>(sp.switch_offs));
      if (!opt.speculator->last_draft_error().empty()) {
        std::fprintf(stderr, "speculation: the drafter failed (%s); those steps were decoded plainly\n",
                     opt.speculator->last_draft_error().c_str());
      }
    }
  }
  return kExitOk;
}

}  // namespace hearth::cli
