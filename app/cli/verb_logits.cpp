// hearth-cli logits: evaluates token ids at positions 0..n-1 and writes every
// position's logits (n x n_vocab float32, little-endian, position-major).
#include <fmt/format.h>
#include <hearth/engine/kv/kv_cache.h>

#include <cstdio>
#include <numeric>

#include "args.h"
#include "engine_setup.h"
#include "verbs.h"

namespace hearth::cli {

int run_logits(const std::vector<std::string>& argv) {
  VerbSpec spec{"logits", "--model M.gguf --tokens \"1 2 3\" --out OUT.f32",
                "Evaluates the tokens and writes every position's logits as float32.",
                {{"model", FlagKind::Value, "model file", "m", "M.gguf"},
                 {"tokens", FlagKind::Value, "token ids, space-separated", "", "IDS"},
                 {"out", FlagKind::Value, "output file (n x n_vocab float32)", "o", "OUT"}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  if (!args->has("model") || !args->has("tokens") || !args->has("out")) {
    std::fprintf(stderr, "logits: --model, --tokens and --out are required\n");
    return kExitUsage;
  }
  auto ids = parse_ids(*args->get("tokens"));
  if (!ids.ok()) {
    std::fprintf(stderr, "logits: %s\n", ids.error().message.c_str());
    return kExitUsage;
  }
  auto setup = setup_engine(*args, static_cast<int64_t>(ids->size()));
  if (!setup.ok()) {
    std::fprintf(stderr, "logits: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  const auto& model = *setup->model;
  auto cache = kv::KvCache::create(*setup->backend, model.kv_config(static_cast<int64_t>(ids->size()), setup->kv_type));
  if (!cache.ok()) {
    std::fprintf(stderr, "logits: %s\n", cache.error().message.c_str());
    return kExitBadInput;
  }
  std::vector<int32_t> pos(ids->size());
  std::iota(pos.begin(), pos.end(), 0);
  std::vector<float> logits;
  auto st = model.forward(*setup->backend, **cache, model::Batch{*ids, pos}, model::LogitsRows::All, logits);
  if (!st.ok()) {
    std::fprintf(stderr, "logits: %s\n", st.error().message.c_str());
    return kExitBadInput;
  }
  const std::string out = *args->get("out");
  std::FILE* f = std::fopen(out.c_str(), "wb");
  if (!f || std::fwrite(logits.data(), sizeof(float), logits.size(), f) != logits.size() || std::fclose(f) != 0) {
    std::fprintf(stderr, "logits: cannot write %s\n", out.c_str());
    return kExitBadInput;
  }
  std::fprintf(stderr, "wrote %zu x %lld logits to %s\n", ids->size(), static_cast<long long>(model.hparams().n_vocab),
               out.c_str());
  return kExitOk;
}

}  // namespace hearth::cli
