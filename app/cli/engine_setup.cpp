#include "engine_setup.h"

#include <fmt/format.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/backend_choice.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/tools/model_info.h>

#include <unistd.h>

#include <cstdio>
#include <sstream>

namespace hearth::cli {

std::vector<FlagSpec> engine_flags() {
  return {
      {"backend", FlagKind::Value, "cpu or vulkan (default cpu)", "", "NAME"},
      {"threads", FlagKind::Value, "CPU threads (default 2)", "t", "N"},
      {"kv-type", FlagKind::Value, "KV cache type: f16 or q8_0 (default f16)", "", "TYPE"},
      {"gpu-layers", FlagKind::Value, "layers on the GPU with --backend vulkan: N, auto (from free VRAM) or all (default)", "", "N"},
      {"gpu-path", FlagKind::Value,
       "Vulkan products (matrix-vector and prefill tiles): plain (f32 activations), int-dot (8-bit activations, "
       "packed integer dot products) or auto (int-dot where the GPU accelerates it; default)", "", "PATH"},
      {"cpu-kernels", FlagKind::Value,
       "highest CPU kernel level: scalar, neon, neon-dotprod, neon-i8mm (ARM), avx2, avx-vnni or avx512 (x86) (default: the "
       "best this CPU has)", "", "LEVEL"},
      {"weights", FlagKind::Value,
       "where the weights live: copy (huge pages), mapped (the file, in place) or auto (copy where the kernel has "
       "transparent huge pages; default)", "", "MODE"},
  };
}

std::vector<FlagSpec> sampling_flags() {
  return {
      {"temp", FlagKind::Value, "temperature, 0 = greedy (default 0.8)", "", "T"},
      {"top-k", FlagKind::Value, "top-k (default 40, 0 = off)", "", "K"},
      {"top-p", FlagKind::Value, "top-p (default 0.95)", "", "P"},
      {"min-p", FlagKind::Value, "min-p (default 0.05)", "", "P"},
      {"repeat-penalty", FlagKind::Value, "repetition penalty (default 1.0 = off)", "", "X"},
      {"seed", FlagKind::Value, "random seed (default 0)", "", "S"},
  };
}

Result<sampling::SamplerConfig> parse_sampling(const ParsedArgs& args) {
  sampling::SamplerConfig c;
  HEARTH_TRY(const double temp, args.get_double("temp", 0.8, 0.0, 100.0));
  HEARTH_TRY(const int64_t top_k, args.get_int("top-k", 40, 0, 1 << 20));
  HEARTH_TRY(const double top_p, args.get_double("top-p", 0.95, 0.0, 1.0));
  HEARTH_TRY(const double min_p, args.get_double("min-p", 0.05, 0.0, 1.0));
  HEARTH_TRY(const double repeat, args.get_double("repeat-penalty", 1.0, 0.0, 10.0));
  HEARTH_TRY(const int64_t seed, args.get_int("seed", 0, 0, INT64_MAX));
  c.temperature = static_cast<float>(temp);
  c.top_k = static_cast<int32_t>(top_k);
  c.top_p = static_cast<float>(top_p);
  c.min_p = static_cast<float>(min_p);
  c.repeat_penalty = static_cast<float>(repeat);
  c.seed = static_cast<uint64_t>(seed);
  return c;
}

Result<EngineSetup> setup_engine(const ParsedArgs& args, int64_t n_ctx) {
  EngineSetup s;
  HEARTH_TRY(const int64_t threads, args.get_int("threads", 2, 1, 256));
  s.threads = static_cast<int>(threads);
  const std::string kv = args.get_or("kv-type", "f16");
  const auto kv_type = dtype_from_name(kv);
  if (!kv_type || !kv::is_supported_kv_type(*kv_type)) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("--kv-type '{}' is not one of f16, q8_0", kv));
  }
  s.kv_type = *kv_type;
  const std::string backend = args.get_or("backend", "cpu");
  if (backend != "cpu" && backend != "vulkan") {
    return make_error(ErrorCode::InvalidArgument, fmt::format("--backend '{}' is not one of cpu, vulkan", backend));
  }
  runtime::BackendRequest request;
  request.preference = backend == "vulkan" ? runtime::BackendPreference::Vulkan : runtime::BackendPreference::Cpu;
  request.cpu_threads = s.threads;
  if (const auto level = args.get("cpu-kernels")) {
    bool known = false;
    for (auto l : {quant::KernelLevel::Scalar, quant::KernelLevel::Neon, quant::KernelLevel::NeonDotprod,
                   quant::KernelLevel::NeonI8mm, quant::KernelLevel::Avx2, quant::KernelLevel::AvxVnni, quant::KernelLevel::Avx512}) {
      if (quant::to_string(l) == *level) {
        request.cpu_max_level = l;
        known = true;
      }
    }
    if (!known) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("--cpu-kernels '{}' is not one of scalar, neon, neon-dotprod, neon-i8mm, avx2, avx-vnni, avx512", *level));
    }
  }
  if (const auto path = args.get("gpu-path")) {
    if (backend != "vulkan") return make_error(ErrorCode::InvalidArgument, "--gpu-path needs --backend vulkan");
    const auto parsed = vulkan::parse_matvec_path(*path);
    if (!parsed) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("--gpu-path '{}' is not one of auto, plain, int-dot", *path));
    }
    request.gpu_matvec_path = *parsed;
  }
  // Only bench declares --profile; other verbs never have it set.
  if (args.has("profile")) request.profiling = runtime::BackendProfiling::OpTimes;
  if (const auto layers = args.get("gpu-layers")) {
    if (backend != "vulkan") {
      return make_error(ErrorCode::InvalidArgument, "--gpu-layers needs --backend vulkan");
    }
    auto parsed = runtime::parse_gpu_layers(*layers);
    if (!parsed.ok()) return make_error(ErrorCode::InvalidArgument, fmt::format("--gpu-layers: {}", parsed.error().message));
    request.gpu_layers = *parsed;
  }

  const auto path = args.get("model");
  if (!path) return make_error(ErrorCode::InvalidArgument, "--model is required");
  // KV bytes for the memory check; the hyperparameters are read by the load
  // itself, so estimate from the file once it is open (see below).
  model::LoadOptions opts;
  {
    auto weights = model::parse_weight_memory(args.get_or("weights", "auto"));
    if (!weights.ok()) return make_error(ErrorCode::InvalidArgument, fmt::format("--weights: {}", weights.error().message));
    opts.weights = *weights;
  }
  if (isatty(2)) opts.progress = [last = -1](const model::LoadProgress& p) mutable {
    const int pct = p.total_bytes ? static_cast<int>(100 * p.done_bytes / p.total_bytes) : 100;
    if (pct / 10 != last / 10) {
      std::fprintf(stderr, "\rloading %3d%%", pct);
      if (pct == 100) std::fputc('\n', stderr);
      last = pct;
    }
  };
  {
    // The KV cache and scratch join the memory check made before the weights
    // are touched (a cheap header parse).
    HEARTH_TRY(auto header, gguf::GgufFile::open(*path, gguf::LoadMode::Mmap));
    HEARTH_TRY(opts.extra_bytes, tools::memory_beyond_weights(header, n_ctx, s.kv_type));
    // Partial offload places layers by the same estimate the model picker uses,
    // with sliding-window layers as rings: that is what every backend allocates.
    HEARTH_TRY(const tools::ModelSummary summary, tools::summarize_model(header));
    HEARTH_TRY(const kv::MemoryEstimate estimate,
               kv::estimate_memory(summary.dims, summary.file_bytes, n_ctx, s.kv_type, kv::kScratchBatchTokens,
                                   kv::WindowedLayers::Ring));
    request.model = runtime::ModelFootprint{summary.dims.n_layer, estimate};
    // Said in terms of the context, which is what the user can change; the
    // load's own check (weights + extra_bytes) would only name the file.
    if (opts.memory_check == model::MemoryCheck::Enforce) {
      HEARTH_CHECK(tools::check_context_memory(n_ctx, estimate.kv_bytes, summary.file_bytes + estimate.scratch_bytes,
                                               model::available_memory_bytes()));
    }
  }
  auto choice = runtime::choose_backend(request);
  s.backend = std::move(choice.backend);
  s.backend_note = std::move(choice.description);
  std::fprintf(stderr, "%s\n", s.backend_note.c_str());
  opts.weights = model::weights_for(opts.weights, choice.cpu_computes);
  opts.cpu_kernels = request.cpu_max_level;
  HEARTH_TRY(s.model, model::Model::load(*path, opts));
  return s;
}

Result<std::vector<int32_t>> parse_ids(const std::string& text) {
  std::string t = text;
  for (char& c : t) {
    if (c == ',') c = ' ';
  }
  std::istringstream in(t);
  std::vector<int32_t> ids;
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    const long v = std::strtol(word.c_str(), &end, 10);
    if (*end != '\0' || v < 0 || v > INT32_MAX) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("'{}' is not a token id", word));
    }
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) return make_error(ErrorCode::InvalidArgument, "no token ids given");
  return ids;
}

Result<TextCodec> TextCodec::from_model(const model::Model& model) {
  HEARTH_TRY(auto tok, tokenizer::Tokenizer::from_gguf(model.file()));
  auto owned = std::make_unique<tokenizer::Tokenizer>(std::move(tok));
  auto format = std::make_unique<runtime::ChatFormat>(runtime::ChatFormat::from_model(model.file(), *owned));
  if (format->origin() != runtime::TemplateOrigin::Model) {
    std::fprintf(stderr, "chat format: %s\n", format->note().c_str());
  }
  return TextCodec(std::move(owned), std::move(format));
}

Result<std::vector<int32_t>> TextCodec::encode(const std::string& text, PromptMode mode) const {
  if (mode == PromptMode::Chat) return format_->encode({ChatMessage{"user", text, {}}}, chat::GenerationPrompt::Add);
  return tokenizer_->tokenize(text, tokenizer::AddSpecial::AsVocab, tokenizer::ParseSpecial::No);
}

}  // namespace hearth::cli
