// hearth-cli chat: a terminal conversation with the model's chat template,
// streaming replies. Each turn renders the whole conversation and prefills
// only what differs from the tokens already in the KV cache.
#include <fmt/format.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/tokenizer/stream_decoder.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "args.h"
#include "engine_setup.h"
#include "verbs.h"

namespace hearth::cli {

int run_chat(const std::vector<std::string>& argv) {
  VerbSpec spec{"chat", "--model M.gguf [--system S] [--ctx N] [--overflow stop] ...",
                "Interactive chat in the terminal; /reset starts over, /stats shows speed figures.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"system", FlagKind::Value, "system prompt", "", "TEXT"},
                 {"ctx", FlagKind::Value, "context size (default 2048)", "c", "N"},
                 {"overflow", FlagKind::Value, "what to do at the context limit: stop", "", "POLICY"},
                 {"n-predict", FlagKind::Value, "max tokens per reply (default 512)", "n", "N"},
                 {"temp", FlagKind::Value, "temperature (default 0.8)", "", "T"},
                 {"seed", FlagKind::Value, "random seed (default 0)", "", "S"}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  auto args = parse_args(spec, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "%s\n", args.error().message.c_str());
    return kExitUsage;
  }
  if (args->help_requested_) {
    std::fputs(help_text(spec).c_str(), stdout);
    return kExitOk;
  }
  const std::string overflow = args->get_or("overflow", "stop");
  if (overflow != "stop") {
    std::fprintf(stderr, "chat: --overflow %s is not available in this build (stop is)\n", overflow.c_str());
    return kExitUsage;
  }
  auto ctx = args->get_int("ctx", 2048, 16, 1 << 22);
  auto n = args->get_int("n-predict", 512, 1, 1 << 20);
  auto temp = args->get_double("temp", 0.8, 0.0, 100.0);
  auto seed = args->get_int("seed", 0, 0, INT64_MAX);
  if (!ctx.ok() || !n.ok() || !temp.ok() || !seed.ok() || !args->has("model")) {
    std::fprintf(stderr, "chat: --model is required; --ctx, -n, --temp, --seed take numbers\n");
    return kExitUsage;
  }
  auto setup = setup_engine(*args, *ctx);
  if (!setup.ok()) {
    std::fprintf(stderr, "chat: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  auto codec = TextCodec::from_model(*setup->model);
  if (!codec.ok()) {
    std::fprintf(stderr, "chat: %s\n", codec.error().message.c_str());
    return kExitBadInput;
  }
  auto session = runtime::Session::create(*setup->model, *setup->backend,
                                          runtime::SessionConfig{*ctx, setup->kv_type, 256});
  if (!session.ok()) {
    std::fprintf(stderr, "chat: %s\n", session.error().message.c_str());
    return kExitBadInput;
  }
  runtime::GenerateOptions opt;
  opt.max_tokens = static_cast<int32_t>(*n);
  opt.sampler.temperature = static_cast<float>(*temp);
  opt.sampler.seed = static_cast<uint64_t>(*seed);
  opt.end_of_generation = codec->end_of_generation();

  std::vector<ChatMessage> messages;
  if (args->has("system")) messages.push_back({"system", *args->get("system")});
  const size_t pinned = messages.size();
  runtime::Figures last;
  std::string line;
  while (true) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/reset") {
      messages.resize(pinned);
      (*session)->reset();
      continue;
    }
    if (line == "/stats") {
      std::printf("prompt %lld tok at %.1f tok/s, reply %lld tok at %.1f tok/s, ttft %.0f ms, "
                  "inter-token p50 %.1f ms p95 %.1f ms, context %lld/%lld\n",
                  static_cast<long long>(last.prompt_tokens), last.prefill_tps,
                  static_cast<long long>(last.generated_tokens), last.decode_tps, last.ttft_ms,
                  last.inter_token_p50_ms, last.inter_token_p95_ms, static_cast<long long>(last.context_tokens),
                  static_cast<long long>(*ctx));
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({"user", line});
    auto ids = codec->encode_chat(messages);
    if (!ids.ok()) {
      std::fprintf(stderr, "chat: %s\n", ids.error().message.c_str());
      return kExitBadInput;
    }
    // Reuse the longest common prefix with what the cache already holds.
    const auto& have = (*session)->context();
    size_t common = 0;
    while (common < have.size() && common + 1 < ids->size() && have[common] == (*ids)[common]) ++common;
    (void)(*session)->truncate(common);
    tokenizer::StreamDecoder stream(codec->tokenizer());
    auto r = (*session)->generate(std::span(*ids).subspan(common), opt, [&](int32_t t) { return stream.push(t); },
                                  [](const runtime::TokenEvent& e) {
                                    std::fwrite(e.text.data(), 1, e.text.size(), stdout);
                                    std::fflush(stdout);
                                  });
    if (!r.ok()) {
      std::fprintf(stderr, "\nchat: %s\n", r.error().message.c_str());
      if (r.error().code == ErrorCode::LimitExceeded) {
        std::fprintf(stderr, "chat: the conversation is full; /reset to start over\n");
        messages.pop_back();
        continue;
      }
      return kExitBadInput;
    }
    std::fputs(stream.flush().c_str(), stdout);
    std::fputc('\n', stdout);
    if (r->reason == runtime::StopReason::ContextFull) {
      std::fprintf(stderr, "[context full at %lld tokens: reply stopped; /reset to start over]\n",
                   static_cast<long long>(*ctx));
    }
    last = r->figures;
    messages.push_back({"assistant", r->text});
  }
  return kExitOk;
}

}  // namespace hearth::cli
