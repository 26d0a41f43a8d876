// hearth-cli info: a model file's summary and the memory estimate the app
// shows (weights + KV cache + scratch, from kv::estimate_memory). Reads only
// metadata and tensor infos.
#include <fmt/format.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tools/model_info.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

#include "args.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

std::string human_bytes(uint64_t b) {
  const double v = static_cast<double>(b);
  if (v >= 1e9) return fmt::format("{:.2f} GB", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.1f} MB", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} kB", v / 1e3);
  return fmt::format("{} B", b);
}

std::string kv_type_name(DType t) { return t == DType::Q8_0 ? "q8_0" : "f16"; }

void print_text(const std::string& path, const tools::ModelSummary& s, const kv::MemoryEstimate& m) {
  std::printf("file:           %s (%s)\n", path.c_str(), human_bytes(s.file_bytes).c_str());
  std::printf("architecture:   %s\n", s.architecture.c_str());
  const double p = static_cast<double>(s.parameters);
  const std::string short_count = p >= 1e9 ? fmt::format("{:.2f} B", p / 1e9) : fmt::format("{:.2f} M", p / 1e6);
  std::printf("parameters:     %llu (%s)\n", static_cast<unsigned long long>(s.parameters), short_count.c_str());
  std::printf("context length: %lld\n", static_cast<long long>(s.context_length));
  std::printf("layers %lld, heads %lld, KV heads %lld, head dim %lld, embedding %lld\n",
              static_cast<long long>(s.dims.n_layer), static_cast<long long>(s.dims.n_head),
              static_cast<long long>(s.dims.n_head_kv), static_cast<long long>(s.dims.head_dim),
              static_cast<long long>(s.dims.n_embd));
  const auto windowed = std::count_if(s.dims.layer_windows.begin(), s.dims.layer_windows.end(),
                                      [](int32_t w) { return w > 0; });
  if (windowed > 0) {
    const int32_t window = *std::max_element(s.dims.layer_windows.begin(), s.dims.layer_windows.end());
    std::printf("sliding window: %d tokens on %lld of %lld layers (their KV holds %lld positions)\n", window,
                static_cast<long long>(windowed), static_cast<long long>(s.dims.n_layer),
                static_cast<long long>(kv::windowed_positions(m.n_ctx, window, m.n_batch)));
  }
  if (s.dims.n_expert > 0) {
    std::printf("experts:        %lld, %lld used per token, expert FFN %lld; expert tensors %s\n",
                static_cast<long long>(s.dims.n_expert), static_cast<long long>(s.dims.n_expert_used),
                static_cast<long long>(s.dims.n_ff_exp), human_bytes(s.expert_bytes).c_str());
    std::printf("active weights: %s per token (of %s)\n", human_bytes(s.active_bytes).c_str(),
                human_bytes(s.tensor_bytes).c_str());
  }
  std::printf("chat template:  %s\n", s.chat_template ? "yes" : "no");
  std::printf("tensor types:\n");
  for (const auto& [type, bytes] : s.bytes_by_type) std::printf("  %-8s %s\n", type.c_str(), human_bytes(bytes).c_str());
  std::printf("memory for %lld tokens, %s KV cache: %s (weights %s, KV %s, scratch %s)\n",
              static_cast<long long>(m.n_ctx), kv_type_name(m.kv_type).c_str(), human_bytes(m.total_bytes).c_str(),
              human_bytes(m.weights_bytes).c_str(), human_bytes(m.kv_bytes).c_str(),
              human_bytes(m.scratch_bytes).c_str());
}

std::string to_json(const tools::ModelSummary& s, const kv::MemoryEstimate& m) {
  nlohmann::json types = nlohmann::json::object();
  for (const auto& [type, bytes] : s.bytes_by_type) types[type] = bytes;
  nlohmann::json j = {
      {"architecture", s.architecture},
      {"parameters", s.parameters},
      {"file_bytes", s.file_bytes},
      {"context_length", s.context_length},
      {"n_layer", s.dims.n_layer},
      {"n_head", s.dims.n_head},
      {"n_head_kv", s.dims.n_head_kv},
      {"head_dim", s.dims.head_dim},
      {"n_embd", s.dims.n_embd},
      {"layer_windows", s.dims.layer_windows},
      {"n_expert", s.dims.n_expert},
      {"n_expert_used", s.dims.n_expert_used},
      {"n_ff_exp", s.dims.n_ff_exp},
      {"expert_bytes", s.expert_bytes},
      {"active_bytes", s.active_bytes},
      {"tensor_types", types},
      {"chat_template", s.chat_template},
      {"memory",
       {{"weights_bytes", m.weights_bytes},
        {"kv_bytes", m.kv_bytes},
        {"scratch_bytes", m.scratch_bytes},
        {"total_bytes", m.total_bytes},
        {"n_ctx", m.n_ctx},
        {"kv_type", kv_type_name(m.kv_type)}}},
  };
  return j.dump();
}

}  // namespace

int run_info(const std::vector<std::string>& argv) {
  const VerbSpec spec{
      "info", "MODEL.gguf [--ctx N] [--kv-type f16|q8_0] [--json]",
      "Architecture, parameter count, bytes per tensor type, context length, chat template presence,\n"
      "and the memory estimate the app shows: weights + KV cache (N tokens at the KV type) + scratch.\n"
      "--ctx defaults to the model's context length, capped at 4096.",
      {{"ctx", FlagKind::Value, "context tokens for the KV estimate", "c", "N"},
       {"kv-type", FlagKind::Value, "KV cache precision: f16 (default) or q8_0", "", "T"},
       {"json", FlagKind::Switch, "print one JSON object", "", ""}},
      1,
      1,
      "model file"};
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  const std::string kv_name = args->get_or("kv-type", "f16");
  DType kv_type = DType::F16;
  if (kv_name == "q8_0" || kv_name == "Q8_0") {
    kv_type = DType::Q8_0;
  } else if (kv_name != "f16" && kv_name != "F16") {
    std::fprintf(stderr, "info: --kv-type must be f16 or q8_0, not '%s'\n", kv_name.c_str());
    return kExitUsage;
  }
  auto ctx_flag = args->get_int("ctx", 0, 1, int64_t{1} << 24);
  if (!ctx_flag.ok()) {
    std::fprintf(stderr, "info: %s\n", ctx_flag.error().message.c_str());
    return kExitUsage;
  }

  const std::string& path = args->positionals()[0];
  auto file = gguf::GgufFile::open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "info: %s\n", file.error().message.c_str());
    return kExitBadInput;
  }
  auto summary = tools::summarize_model(*file);
  if (!summary.ok()) {
    std::fprintf(stderr, "info: %s\n", summary.error().message.c_str());
    return kExitBadInput;
  }
  constexpr int64_t kDefaultCtx = 4096;
  const int64_t n_ctx = args->has("ctx") ? *ctx_flag
                        : summary->context_length > 0 ? std::min(summary->context_length, kDefaultCtx)
                                                      : kDefaultCtx;
  auto memory = kv::estimate_memory(summary->dims, summary->file_bytes, n_ctx, kv_type);
  if (!memory.ok()) {
    std::fprintf(stderr, "info: %s: %s\n", path.c_str(), memory.error().message.c_str());
    return kExitBadInput;
  }
  if (args->has("json")) {
    std::printf("%s\n", to_json(*summary, *memory).c_str());
  } else {
    print_text(path, *summary, *memory);
  }
  return kExitOk;
}

}  // namespace hearth::cli
