// hearth-cli chat: a terminal conversation with the model's chat template,
// streaming replies. Each turn prefills only what the template adds to the
// tokens already in the KV cache; at the context limit the conversation's
// overflow policy (stop, evict, summarize) acts and its events are printed.
#include <fmt/format.h>
#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/prefix_index.h>
#include <hearth/engine/runtime/conversation.h>
#include <hearth/engine/runtime/prefix_persist.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/tokenizer/stream_decoder.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "args.h"
#include "chat_tokens.h"
#include "engine_setup.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

// Disk budget of --prefix-cache; the least recently used entries go first.
constexpr uint64_t kPrefixCacheBudget = 1ull << 30;

}  // namespace

int run_chat(const std::vector<std::string>& argv) {
  VerbSpec spec{"chat", "--model M.gguf [--system S] [--ctx N] [--overflow stop|evict|summarize] [--prefix-cache DIR] ...",
                "Interactive chat in the terminal; /reset starts over, /stats shows speed figures.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"system", FlagKind::Value, "system prompt", "", "TEXT"},
                 {"ctx", FlagKind::Value, "context size (default 2048)", "c", "N"},
                 {"overflow", FlagKind::Value, "at the context limit: stop, evict or summarize (default stop)", "", "POLICY"},
                 {"prefix-cache", FlagKind::Value, "folder of saved system-prompt KV (a second run starts warm)", "", "DIR"},
                 {"n-predict", FlagKind::Value, "max tokens per reply (default 512)", "n", "N"}}};
  for (auto& f : sampling_flags()) spec.flags.push_back(f);
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  const std::string overflow = args->get_or("overflow", "stop");
  if (!runtime::parse_overflow_policy(overflow).ok()) {
    std::fprintf(stderr, "chat: --overflow takes stop, evict or summarize, not '%s'\n", overflow.c_str());
    return kExitUsage;
  }
  auto ctx = args->get_int("ctx", 2048, 16, 1 << 22);
  auto n = args->get_int("n-predict", 512, 1, 1 << 20);
  auto sampler = parse_sampling(*args);
  if (!sampler.ok()) {
    std::fprintf(stderr, "chat: %s\n", sampler.error().message.c_str());
    return kExitUsage;
  }
  if (!ctx.ok() || !n.ok() || !args->has("model")) {
    std::fprintf(stderr, "chat: --model is required; --ctx and -n take numbers\n");
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
  opt.sampler = *sampler;
  opt.end_of_generation = codec->end_of_generation();

  auto policy = runtime::parse_overflow_policy(overflow);
  ChatTokens chat(*codec, args->get_or("system", ""));
  auto request = chat.summary_request();
  auto note = chat.note_prefix();
  if (!request.ok() || !note.ok()) {
    std::fprintf(stderr, "chat: %s\n", (request.ok() ? note.error() : request.error()).message.c_str());
    return kExitBadInput;
  }
  runtime::ConversationConfig conv_config;
  conv_config.policy = *policy;
  conv_config.summary_request = std::move(*request);
  conv_config.note_prefix = std::move(*note);
  conv_config.summary_max_tokens = static_cast<int32_t>(std::min<int64_t>(48, *ctx / 8));
  // At 80% of the context, or earlier when the request and the summary would
  // no longer fit in what is left.
  const double tail = static_cast<double>(conv_config.summary_request.size()) + conv_config.summary_max_tokens + 8;
  conv_config.summarize_at = std::clamp(1.0 - tail / static_cast<double>(*ctx), 0.1, 0.8);
  conv_config.end_of_generation = opt.end_of_generation;
  // /reset (and a new conversation) reuses the system prompt's blocks.
  auto identity = kv::identify_model_file(*args->get("model"));
  kv::PrefixIndex prefixes(identity.ok() ? identity->content_hash : 0, (*session)->cache().bytes());
  runtime::Conversation conv(**session, *setup->model, *setup->backend, conv_config,
                             [&](int32_t t) { return codec->tokenizer().token_to_piece(t); }, &prefixes);
  // A reply may use at most a quarter of the context, so evicting or
  // summarising always leaves it room.
  opt.max_tokens = static_cast<int32_t>(std::min<int64_t>(*n, std::max<int64_t>(8, *ctx / 4)));
  // --prefix-cache: the system prompt's K/V is loaded from the folder when a
  // previous run saved it, and saved when it had to be computed.
  std::optional<kv::PrefixDiskCache> disk;
  if (args->has("prefix-cache")) {
    if (!identity.ok()) {
      std::fprintf(stderr, "chat: %s\n", identity.error().message.c_str());
      return kExitBadInput;
    }
    std::error_code ec;
    std::filesystem::create_directories(*args->get("prefix-cache"), ec);
    disk.emplace(*args->get("prefix-cache"), kPrefixCacheBudget);
  }
  auto restart = [&]() -> Status {
    HEARTH_TRY(const auto pinned, chat.start());
    int64_t restored = 0;
    if (disk && pinned.size() > 1) {
      // A stale or corrupt file is deleted by the cache and simply not used.
      HEARTH_TRY(restored, runtime::restore_prefix(*disk, *identity, **session, pinned));
    }
    HEARTH_CHECK(conv.set_system(pinned));
    if (disk && pinned.size() > 1) {
      // restore_prefix looks up all but the last token (which is prefilled
      // for fresh logits), so that is what is saved and a complete hit.
      const auto whole = static_cast<int64_t>(pinned.size());
      if (restored + 1 < whole) {
        HEARTH_CHECK(runtime::save_prefix(*disk, *identity, **session, whole - 1));
        std::fprintf(stderr, "[prefix cache: system prompt (%lld tokens) computed and saved]\n",
                     static_cast<long long>(whole));
      } else {
        std::fprintf(stderr, "[prefix cache: %lld of %lld system prompt tokens restored from disk]\n",
                     static_cast<long long>(restored), static_cast<long long>(whole));
      }
    }
    return {};
  };
  if (auto st = restart(); !st.ok()) {
    std::fprintf(stderr, "chat: %s\n", st.error().message.c_str());
    return kExitBadInput;
  }
  auto print_events = [&]() {
    for (const auto& e : conv.take_events()) {
      std::string ids;
      for (int64_t id : e.turn_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
      switch (e.action) {
        case runtime::OverflowAction::Stopped:
          std::fprintf(stderr, "[overflow: stopped: %s; /reset to start over]\n", e.reason.c_str());
          break;
        case runtime::OverflowAction::Evicted:
          std::fprintf(stderr, "[overflow: evicted turns %s (%lld tokens) in %.1f ms]\n", ids.c_str(),
                       static_cast<long long>(e.tokens_freed), e.pause_ms);
          break;
        case runtime::OverflowAction::Summarized:
          std::fprintf(stderr, "[overflow: summarized turns %s (%lld tokens freed), pause %.0f ms: \"%s\"]\n",
                       ids.c_str(), static_cast<long long>(e.tokens_freed), e.pause_ms, e.summary.c_str());
          break;
      }
    }
  };
  runtime::Figures last;
  int64_t turns = 0;
  bool turn_open = false;
  std::string line;
  while (true) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line == "/reset") {
      turn_open = false;
      if (auto st = restart(); !st.ok()) {
        std::fprintf(stderr, "chat: %s\n", st.error().message.c_str());
        return kExitBadInput;
      }
      continue;
    }
    if (line == "/stats") {
      std::printf("prompt %lld tok at %.1f tok/s, reply %lld tok at %.1f tok/s, ttft %.0f ms, "
                  "inter-token p50 %.1f ms p95 %.1f ms, context %zu/%lld, turns %lld (%zu kept), overflow %s\n",
                  static_cast<long long>(last.prompt_tokens), last.prefill_tps,
                  static_cast<long long>(last.generated_tokens), last.decode_tps, last.ttft_ms,
                  last.inter_token_p50_ms, last.inter_token_p95_ms, (*session)->context().size(),
                  static_cast<long long>(*ctx), static_cast<long long>(turns), conv.turns().size(),
                  runtime::to_string(*policy));
      continue;
    }
    if (line.empty()) continue;
    auto next = chat.user_turn(line);
    if (!next.ok()) {
      std::fprintf(stderr, "chat: %s\n", next.error().message.c_str());
      return kExitBadInput;
    }
    // The previous turn ends where this one's tokens start; a reply tail the
    // template renders differently is replaced, never more than that turn.
    const auto& ctx_tokens = (*session)->context();
    if (turn_open && next->rollback > 0 && next->rollback < ctx_tokens.size()) {
      (void)(*session)->truncate(ctx_tokens.size() - next->rollback);
    }
    if (turn_open) conv.end_turn();
    turn_open = false;
    auto room = conv.make_room(static_cast<int64_t>(next->append.size()) + opt.max_tokens);
    print_events();
    if (!room.ok() || !*room) {
      if (!room.ok()) std::fprintf(stderr, "chat: %s\n", room.error().message.c_str());
      continue;
    }
    conv.begin_turn();
    turn_open = true;
    ++turns;
    tokenizer::StreamDecoder stream(codec->tokenizer());
    auto r = (*session)->generate(next->append, opt, [&](int32_t t) { return stream.push(t); },
                                  [](const runtime::TokenEvent& e) {
                                    std::fwrite(e.text.data(), 1, e.text.size(), stdout);
                                    std::fflush(stdout);
                                  });
    if (!r.ok()) {
      std::fprintf(stderr, "\nchat: %s\n", r.error().message.c_str());
      return kExitBadInput;
    }
    std::fputs(stream.flush().c_str(), stdout);
    std::fputc('\n', stdout);
    if (r->reason == runtime::StopReason::ContextFull) {
      std::fprintf(stderr, "[context full at %lld tokens: reply stopped]\n", static_cast<long long>(*ctx));
    }
    last = r->figures;
    // generate() leaves the last sampled token undecoded; the context holds the rest.
    const auto& now = (*session)->context();
    const size_t kept = std::min(r->tokens.size(), now.size());
    chat.reply(r->text, std::vector<int32_t>(now.end() - static_cast<std::ptrdiff_t>(kept), now.end()));
    // Lower-priority work: a due summary runs as resumable steps between
    // turns; the pause is reported with the event.
    // The next turn is expected to be about as long as this one.
    const auto upcoming = static_cast<int64_t>((*session)->context().size()) -
                          (conv.turns().empty() ? 0 : conv.turns().back().end);
    if (conv.summary_due(upcoming)) {
      conv.end_turn();
      turn_open = false;
      auto job = conv.start_summary();
      if (!job.ok()) {
        std::fprintf(stderr, "chat: %s\n", job.error().message.c_str());
        return kExitBadInput;
      }
      if (*job) {
        Status st;
        while (st.ok()) {
          auto done = (*job)->step();
          if (!done.ok()) st = done.error();
          else if (*done) break;
        }
        if (st.ok()) st = (*job)->finish();
        if (!st.ok()) std::fprintf(stderr, "chat: summary failed: %s\n", st.error().message.c_str());
      }
      print_events();
    }
  }
  return kExitOk;
}

}  // namespace hearth::cli
