// hearth-cli bench-prefix: time to first token of a new conversation that
// starts with an N-token system prompt, three ways: cold (nothing cached),
// warm from the in-memory prefix index, and warm from the on-disk prefix cache
// after the engine is started again (new session, index and cache objects).
#include <fmt/format.h>
#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/kv/prefix_index.h>
#include <hearth/engine/runtime/prefix_persist.h>
#include <hearth/engine/runtime/prefix_reuse.h>

#include <hearth/engine/sampling/sampler.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "args.h"
#include "engine_setup.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Time to first token: the request's prefill (whatever is reused) and the
// choice of the first token.
template <typename Prefill>
Result<double> time_first_token(runtime::Session& session, Prefill&& prefill) {
  const auto t0 = Clock::now();
  HEARTH_CHECK(prefill());
  const auto logits = session.last_logits();
  volatile int32_t first = sampling::argmax(logits);
  (void)first;
  return ms_since(t0);
}

Status reuse(runtime::Session& s, kv::PrefixIndex* index, const std::vector<int32_t>& request) {
  HEARTH_TRY(const auto r, runtime::prefill_reusing(s, index, request));
  (void)r;
  return {};
}

// A system prompt of exactly `n` tokens from ordinary prose (BOS first).
Result<std::vector<int32_t>> system_prompt(const TextCodec& codec, int64_t n) {
  std::string text;
  std::vector<int32_t> ids;
  while (static_cast<int64_t>(ids.size()) < n) {
    text += "You are a careful assistant for a small bakery. Answer questions about opening hours, bread, "
            "cakes and orders politely and briefly, and say so when you do not know. ";
    HEARTH_TRY(ids, codec.encode(text, PromptMode::Raw));
  }
  ids.resize(static_cast<size_t>(n));
  return ids;
}

}  // namespace

int run_bench_prefix(const std::vector<std::string>& argv) {
  VerbSpec spec{"bench-prefix", "--model M.gguf --system-tokens N [--json]",
                "Time to first token with an N-token system prompt: cold, warm in memory, warm from disk.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"system-tokens", FlagKind::Value, "system prompt length in tokens", "", "N"},
                 {"json", FlagKind::Switch, "one JSON object on stdout", "", ""}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  auto n_system = args->get_int("system-tokens", 1000, 1, 1 << 20);
  if (!n_system.ok() || !args->has("model")) {
    std::fprintf(stderr, "bench-prefix: --model is required; --system-tokens takes a number\n");
    return kExitUsage;
  }
  const int64_t n_ctx = *n_system + 64;
  auto setup = setup_engine(*args, n_ctx);
  if (!setup.ok()) {
    std::fprintf(stderr, "bench-prefix: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "bench-prefix: %s\n", e.message.c_str());
    return kExitBadInput;
  };
  auto codec = TextCodec::from_model(*setup->model);
  if (!codec.ok()) return fail(codec.error());
  auto system = system_prompt(*codec, *n_system);
  if (!system.ok()) return fail(system.error());
  auto user_a = codec->encode(" What time do you open on Sunday?", PromptMode::Raw);
  auto user_b = codec->encode(" Do you make rye bread?", PromptMode::Raw);
  if (!user_a.ok() || !user_b.ok()) return fail(user_a.ok() ? user_b.error() : user_a.error());
  const auto drop_bos = [&](const std::vector<int32_t>& ids) {
    const bool bos = !ids.empty() && ids.front() == codec->tokenizer().vocab().special.bos;
    return std::vector<int32_t>(ids.begin() + (bos ? 1 : 0), ids.end());
  };
  auto request = [&](const std::vector<int32_t>& user) {
    std::vector<int32_t> r = *system;
    const auto u = drop_bos(user);
    r.insert(r.end(), u.begin(), u.end());
    return r;
  };
  const auto req_a = request(*user_a), req_b = request(*user_b);
  auto model_id = kv::identify_model_file(*args->get("model"));
  if (!model_id.ok()) return fail(model_id.error());

  const runtime::SessionConfig config{n_ctx, setup->kv_type, 256};
  auto new_session = [&]() { return runtime::Session::create(*setup->model, *setup->backend, config); };

  // Cold: nothing cached.
  auto cold_s = new_session();
  if (!cold_s.ok()) return fail(cold_s.error());
  auto cold = time_first_token(**cold_s, [&]() -> Status { return reuse(**cold_s, nullptr, req_a); });
  if (!cold.ok()) return fail(cold.error());

  // Warm in memory: the index holds the system prompt from the first conversation.
  kv::PrefixIndex index(model_id->content_hash, (*cold_s)->cache().bytes());
  if (auto st = index.store((*cold_s)->cache(), *system); !st.ok()) return fail(st.error());
  auto warm_s = new_session();
  if (!warm_s.ok()) return fail(warm_s.error());
  auto warm = time_first_token(**warm_s, [&]() -> Status { return reuse(**warm_s, &index, req_b); });
  if (!warm.ok()) return fail(warm.error());

  // Warm from disk: the prefix saved by the first conversation, loaded by a
  // new session, index and cache object as after a restart.
  const auto folder = std::filesystem::temp_directory_path() / fmt::format("hearth-bench-prefix-{}", ::getpid());
  std::error_code ec;
  std::filesystem::remove_all(folder, ec);
  std::filesystem::create_directories(folder, ec);
  {
    kv::PrefixDiskCache disk(folder, 4ull << 30);
    if (auto st = runtime::save_prefix(disk, *model_id, **cold_s, *n_system); !st.ok()) return fail(st.error());
  }
  cold_s->reset();
  warm_s->reset();
  auto disk_s = new_session();
  if (!disk_s.ok()) return fail(disk_s.error());
  int64_t from_disk = 0;
  auto disk_ms = time_first_token(**disk_s, [&]() -> Status {
    kv::PrefixDiskCache disk(folder, 4ull << 30);
    HEARTH_TRY(from_disk, runtime::restore_prefix(disk, *model_id, **disk_s, req_b));
    return (*disk_s)->prefill(std::span(req_b).subspan(static_cast<size_t>(from_disk)));
  });
  std::filesystem::remove_all(folder, ec);
  if (!disk_ms.ok()) return fail(disk_ms.error());

  if (args->has("json")) {
    nlohmann::json j = {{"model", *args->get("model")},   {"system_tokens", *n_system},
                        {"ttft_cold_ms", *cold},           {"ttft_warm_ms", *warm},
                        {"ttft_disk_ms", *disk_ms},        {"warm_fraction", *warm / *cold},
                        {"disk_fraction", *disk_ms / *cold}, {"disk_restored_tokens", from_disk},
                        {"request_tokens", req_b.size()}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("system prompt %lld tokens, request %zu tokens\n", static_cast<long long>(*n_system), req_b.size());
    std::printf("ttft cold %.1f ms, warm (memory) %.1f ms (%.1f%%), warm (disk) %.1f ms (%.1f%%, %lld tokens restored)\n",
                *cold, *warm, 100.0 * *warm / *cold, *disk_ms, 100.0 * *disk_ms / *cold,
                static_cast<long long>(from_disk));
  }
  return kExitOk;
}

}  // namespace hearth::cli
