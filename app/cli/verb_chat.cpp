// hearth-cli chat: a terminal conversation through the engine's chat layer
// (runtime::ChatContext, the one the app and the server use), streaming
// replies. Each turn prefills only what the template adds to the tokens
// already in the KV cache; at the context limit the conversation's overflow
// policy (stop, evict, summarize) acts and its events are printed. A turn
// that cannot be taken (too long, no room) is refused and the chat goes on.
#include <fmt/format.h>
#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/prefix_index.h>
#include <hearth/engine/runtime/chat_context.h>
#include <hearth/engine/runtime/session.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "args.h"
#include "remote_cli.h"
#include "engine_setup.h"
#include "spec_setup.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

// Disk budget of --prefix-cache; the least recently used entries go first.
constexpr uint64_t kPrefixCacheBudget = 1ull << 30;
// One message read from the terminal or a pipe; longer lines are refused.
constexpr size_t kMaxLineBytes = 1u << 20;

// Reads one line (without its newline) of at most `cap` bytes. False at the
// end of the input; an error for an over-long line, whose rest is skipped.
Result<bool> read_line(std::istream& in, std::string& line, size_t cap) {
  line.clear();
  bool any = false;
  bool too_long = false;
  for (int c = in.get(); c != EOF; c = in.get()) {
    any = true;
    if (c == '\n') break;
    if (line.size() < cap) {
      line.push_back(static_cast<char>(c));
    } else {
      too_long = true;
    }
  }
  if (too_long) {
    line.clear();
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("a message line is longer than the {} MiB limit; it was skipped", cap >> 20));
  }
  return any;
}

}  // namespace

int run_chat(const std::vector<std::string>& argv) {
  VerbSpec spec{"chat", "--model M.gguf [--system S] [--ctx N] [--overflow stop|evict|summarize] [--prefix-cache DIR] ...",
                "Interactive chat in the terminal; /reset starts over, /stats shows speed figures.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"system", FlagKind::Value, "system prompt", "", "TEXT"},
                 {"ctx", FlagKind::Value, "context size (default 2048)", "c", "N"},
                 {"overflow", FlagKind::Value, "at the context limit: stop, evict or summarize (default stop)", "", "POLICY"},
                 {"prefix-cache", FlagKind::Value, "folder of saved system-prompt KV (a second run starts warm)", "", "DIR"},
                 {"reasoning", FlagKind::Value, "a reasoning model's switch: default, off, on, low, medium, high", "",
                  "CHOICE"},
                 {"n-predict", FlagKind::Value, "max tokens per reply (default 512)", "n", "N"}}};
  for (auto& f : sampling_flags()) spec.flags.push_back(f);
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  for (auto& f : speculation_flags()) spec.flags.push_back(f);
  for (auto& f : remote_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  if (args->has("endpoint")) return run_chat_remote(*args);
  for (const char* flag : {"remote-model", "api-key-env", "allow-lan", "remote-timeout"}) {
    if (args->has(flag)) {
      std::fprintf(stderr, "chat: --%s needs --endpoint\n", flag);
      return kExitUsage;
    }
  }
  const std::string overflow = args->get_or("overflow", "stop");
  if (!runtime::parse_overflow_policy(overflow).ok()) {
    std::fprintf(stderr, "chat: --overflow takes stop, evict or summarize, not '%s'\n", overflow.c_str());
    return kExitUsage;
  }
  const auto reasoning = chat::parse_reasoning_choice(args->get_or("reasoning", "default"));
  if (!reasoning) {
    std::fprintf(stderr, "chat: --reasoning takes default, off, on, low, medium or high\n");
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
  auto speculation = setup_speculation(*args, *setup->model, *ctx, setup->threads);
  if (!speculation.ok()) {
    std::fprintf(stderr, "chat: %s\n", speculation.error().message.c_str());
    return speculation.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  runtime::Speculator* speculator = (*speculation)->speculator.get();
  opt.speculator = speculator;

  auto policy = runtime::parse_overflow_policy(overflow);
  // /reset (and a new conversation) reuses the system prompt's blocks.
  auto identity = kv::identify_model_file(*args->get("model"));
  kv::PrefixIndex prefixes(identity.ok() ? identity->content_hash : 0, (*session)->cache().bytes());
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
  // The chat layer the app and the server use: the same template rule, the
  // same token accounting, the same overflow policies.
  runtime::ChatParts parts;
  parts.session = session->get();
  parts.model = setup->model.get();
  parts.backend = setup->backend.get();
  parts.format = &codec->format();
  parts.can_shift = (*session)->cache().layer_view(0).k != nullptr;
  parts.prefixes = parts.can_shift ? &prefixes : nullptr;
  if (disk) {
    parts.disk = &*disk;
    parts.model_identity = *identity;
  }
  runtime::ChatContext chat(std::move(parts));

  runtime::ChatRequest request;
  request.policy = *policy;
  request.options = opt;
  request.conversation_id = 1;
  request.reasoning = *reasoning;
  if (const auto& style = codec->format().reasoning(); style.syntax != chat::ReasoningSyntax::None) {
    // Reasoning is shown apart, on stderr, so stdout holds the answers only.
    std::fprintf(stderr, "[reasoning model (%s)%s]\n", chat::to_string(style.syntax),
                 style.offers(*reasoning) || *reasoning == chat::ReasoningChoice::Default
                     ? ""
                     : "; its template has no such switch, --reasoning is ignored");
  }
  const std::string system = args->get_or("system", "");
  auto restart = [&] {
    request.messages.clear();
    if (!system.empty()) request.messages.push_back({"system", system, {}});
    chat.forget();
    if (speculator) speculator->reset();  // its rates describe the conversation that ended
    ++request.conversation_id;
  };
  restart();
  bool reported_prefix = false;
  auto print_event = [&](const runtime::ChatEvent& e) {
    const std::string range = fmt::format("{}-{}", e.first_message, e.last_message);
    if (e.kind == runtime::ChatEvent::Kind::Dropped) {
      std::fprintf(stderr, "[overflow: evicted turns %s (%lld tokens) in %.1f ms]\n", range.c_str(),
                   static_cast<long long>(e.tokens_freed), e.pause_ms);
    } else {
      std::fprintf(stderr, "[overflow: summarized turns %s (%lld tokens freed), pause %.0f ms: \"%s\"]\n",
                   range.c_str(), static_cast<long long>(e.tokens_freed), e.pause_ms, e.summary.c_str());
    }
  };
  runtime::Figures last;
  int64_t turns = 0;
  std::string line;
  while (true) {
    std::fputs("> ", stdout);
    std::fflush(stdout);
    auto read = read_line(std::cin, line, kMaxLineBytes);
    if (!read.ok()) {
      // The rest of an over-long line is skipped; the chat goes on.
      std::fprintf(stderr, "chat: %s\n", read.error().message.c_str());
      continue;
    }
    if (!*read) break;
    if (line == "/reset") {
      restart();
      continue;
    }
    if (line == "/stats") {
      std::printf("prompt %lld tok at %.1f tok/s, reply %lld tok at %.1f tok/s, ttft %.0f ms, "
                  "inter-token p50 %.1f ms p95 %.1f ms, context %zu/%lld, turns %lld (%zu messages), overflow %s\n",
                  static_cast<long long>(last.prompt_tokens), last.prefill_tps,
                  static_cast<long long>(last.generated_tokens), last.decode_tps, last.ttft_ms,
                  last.inter_token_p50_ms, last.inter_token_p95_ms, (*session)->context().size(),
                  static_cast<long long>(*ctx), static_cast<long long>(turns), request.messages.size(),
                  runtime::to_string(*policy));
      if (speculator) {
        const auto& sp = speculator->figures();
        std::printf("speculation %s: acceptance %.0f%%, %.2f accepted per pass, speed-up %.2fx%s\n",
                    speculator->drafter().name(), 100.0 * sp.acceptance_rate(), sp.mean_accepted(), sp.speedup(),
                    speculator->switched_off() ? " (switched off for now: it did not pay)" : "");
      }
      continue;
    }
    if (line.empty()) continue;
    request.messages.push_back({"user", line, {}});
    bool thinking = false;
    runtime::ReplyStreams streams;
    streams.on_text = [&](std::string_view piece) {
      if (thinking) std::fputs("\n[/thinking]\n", stderr);
      thinking = false;
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    };
    streams.on_reasoning = [&](std::string_view piece) {
      if (!thinking) std::fputs("[thinking] ", stderr);
      thinking = true;
      std::fwrite(piece.data(), 1, piece.size(), stderr);
    };
    streams.on_event = print_event;
    auto reply = chat.reply(request, streams);
    if (thinking) std::fputs("\n[/thinking]\n", stderr);
    if (!reply.ok() || !reply->stopped.empty()) {
      // The turn is not taken; the conversation stays as it was (the context
      // is rebuilt from it next time), so the session goes on.
      request.messages.pop_back();
      if (!reply.ok()) {
        std::fprintf(stderr, "chat: %s\n", reply.error().message.c_str());
      } else {
        std::fprintf(stderr, "[overflow: stopped: %s; /reset to start over]\n", reply->stopped.c_str());
      }
      continue;
    }
    std::fputc('\n', stdout);
    if (disk && !reported_prefix && request.messages.size() > 1 && request.messages.front().role == "system") {
      reported_prefix = true;
      const int64_t whole = chat.pinned_tokens();
      if (reply->prefix_restored_tokens + 1 < whole) {
        std::fprintf(stderr, "[prefix cache: system prompt (%lld tokens) computed and saved]\n",
                     static_cast<long long>(whole));
      } else {
        std::fprintf(stderr, "[prefix cache: %lld of %lld system prompt tokens restored from disk]\n",
                     static_cast<long long>(reply->prefix_restored_tokens), static_cast<long long>(whole));
      }
    }
    ++turns;
    last = reply->result.figures;
    request.messages.push_back({"assistant", reply->shown, {}, reply->reasoning});
    // Lower-priority work: a due summary runs as resumable steps between
    // turns (the app interleaves them with the GUI); its event is printed.
    while (chat.has_background_work()) {
      if (auto st = chat.background_step(print_event); !st.ok()) {
        std::fprintf(stderr, "chat: summary failed: %s\n", st.error().message.c_str());
        break;
      }
    }
  }
  return kExitOk;
}

}  // namespace hearth::cli
