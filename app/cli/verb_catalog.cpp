// hearth-cli catalog: the catalog's models and variants with sizes and the
// memory estimate for this machine.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <hearth/engine/runtime/backend_choice.h>

#include "args.h"
#include <hearth/models/catalog.h>
#include <hearth/models/machine_info.h>
#include <hearth/models/memory_fit.h>
#include "verbs.h"

namespace hearth::cli {
namespace {

const VerbSpec& spec() {
  static const VerbSpec s{
      "catalog",
      "[--json] [--ctx N] [--kv-type f16|q8_0] [--vram-free BYTES] [--catalog FILE]",
      "Lists the catalog's models and their quant variants with sizes and whether each fits this\n"
      "machine (all on the GPU, partial offload, CPU only, or not at all) for the given context.",
      {
          {"json", FlagKind::Switch, "print one JSON object on stdout", "", ""},
          {"ctx", FlagKind::Value, "context length for the estimate (default 4096)", "", "N"},
          {"kv-type", FlagKind::Value, "KV cache precision: f16 (default) or q8_0", "", "T"},
          {"vram-free", FlagKind::Value, "free GPU memory in bytes (default: asked of the GPU a load would use; 0 without one)", "", "BYTES"},
          {"catalog", FlagKind::Value, "read this catalog file instead of the built-in one", "", "FILE"},
      },
      0,
      0};
  return s;
}

Result<models::Catalog> load_catalog(const ParsedArgs& args) {
  if (auto file = args.get("catalog")) {
    return models::load_catalog_file(*file);
  }
  return models::load_builtin_catalog();
}

}  // namespace

int run_catalog(const std::vector<std::string>& argv) {
  int exit_code = kExitOk;
  auto parsed = parse_verb_args(spec(), argv, exit_code);
  if (!parsed) return exit_code;
  const ParsedArgs& args = *parsed;
  auto ctx = args.get_int("ctx", 4096, 1, 1 << 24);
  auto vram = args.get_int("vram-free", 0, 0, INT64_MAX);
  if (!ctx.ok() || !vram.ok()) {
    std::fprintf(stderr, "catalog: %s\n", (!ctx.ok() ? ctx.error() : vram.error()).message.c_str());
    return kExitUsage;
  }
  const auto kv_type = models::kv_type_from_string(args.get_or("kv-type", "f16"));
  if (!kv_type) {
    std::fprintf(stderr, "catalog: --kv-type must be f16 or q8_0\n");
    return kExitUsage;
  }
  auto catalog = load_catalog(args);
  if (!catalog.ok()) {
    std::fprintf(stderr, "catalog: %s\n", catalog.error().message.c_str());
    return kExitBadInput;
  }
  models::MachineBudget machine;
  machine.ram_available_bytes = models::available_ram_bytes().value_or(0);
  machine.vram_free_bytes = static_cast<uint64_t>(vram.value());
  if (!args.get("vram-free")) {
    // The device the app would load onto (hardware Vulkan only), asked without loading a model.
    if (const auto gpu = runtime::probe_gpu(runtime::BackendRequest{})) machine.vram_free_bytes = gpu->device.memory_free;
  }
  const models::KvSettings kv{static_cast<uint32_t>(ctx.value()), *kv_type};

  nlohmann::json out_models = nlohmann::json::array();
  std::string text;
  bool any_estimate = false, any_unpublished = false;
  for (const auto& model : catalog->models) {
    const auto fits = models::fit_variants(*catalog, model, kv, machine);
    const auto best = models::recommend_variant(fits);
    nlohmann::json variants = nlohmann::json::array();
    text += fmt::format("{}  ({}, {:.1f}B parameters, {}, context {})\n", model.id, model.name,
                        static_cast<double>(model.parameters) / 1e9, model.license, model.context_length);
    for (size_t i = 0; i < model.variants.size(); ++i) {
      const auto& v = model.variants[i];
      const auto& fit = fits[i].fit;
      const bool recommended = best && *best == i;
      variants.push_back({{"quant", v.quant},
                          {"url", v.url},
                          {"size_bytes", v.size_bytes},
                          {"size_is_estimate", v.size_is_estimate},
                          {"sha256", v.sha256 ? nlohmann::json(*v.sha256) : nlohmann::json(nullptr)},
                          {"fits", models::to_string(fit.kind)},
                          {"gpu_layers", fit.gpu_layers},
                          {"estimated_bytes", fit.estimate.total_bytes},
                          {"kv_bytes", fit.estimate.kv_bytes},
                          {"scratch_bytes", fit.estimate.scratch_bytes},
                          {"sha256_source", v.sha256 ? "catalog" : "hugging_face_at_download"},
                          {"recommended", recommended}});
      std::string where = models::to_string(fit.kind);
      if (fit.kind == models::FitKind::Partial) where = fmt::format("partial {}/{}", fit.gpu_layers, fit.n_layer);
      any_estimate = any_estimate || v.size_is_estimate;
      any_unpublished = any_unpublished || !v.sha256;
      // "≈": the size is an estimate; "*": the SHA-256 is not in the catalog.
      text += fmt::format("  {:<7} {}{:>9}{}  needs {}{:>9}  {:<14}{}\n", v.quant, v.size_is_estimate ? "≈" : " ",
                          models::format_bytes(v.size_bytes), v.sha256 ? " " : "*",
                          v.size_is_estimate ? "≈" : " ", models::format_bytes(fit.estimate.total_bytes), where,
                          recommended ? "  <- recommended" : "");
    }
    out_models.push_back({{"id", model.id},
                          {"name", model.name},
                          {"family", model.family},
                          {"parameters", model.parameters},
                          {"license", model.license},
                          {"context_length", model.context_length},
                          {"description", model.description},
                          {"variants", std::move(variants)}});
  }
  if (args.has("json")) {
    nlohmann::json root = {{"models", std::move(out_models)},
                           {"machine",
                            {{"ram_available_bytes", machine.ram_available_bytes},
                             {"vram_free_bytes", machine.vram_free_bytes}}},
                           {"n_ctx", kv.n_ctx},
                           {"kv_type", models::to_string(kv.kv_type)}};
    std::printf("%s\n", root.dump().c_str());
  } else {
    std::printf("Memory estimates for %u tokens of context, %s KV cache; %s RAM available, %s VRAM free\n\n%s",
                kv.n_ctx, models::to_string(kv.kv_type), models::format_bytes(machine.ram_available_bytes).c_str(),
                models::format_bytes(machine.vram_free_bytes).c_str(), text.c_str());
    if (any_estimate) {
      std::printf("\n≈ size estimated from the parameter count and quant level; the exact size is verified at "
                  "download\n");
    }
    if (any_unpublished) {
      std::printf("* SHA-256 not in the catalog: `pull` takes the file's published SHA-256 (its Hugging Face LFS "
                  "object id) and verifies the download against it\n");
    }
  }
  return kExitOk;
}

}  // namespace hearth::cli
