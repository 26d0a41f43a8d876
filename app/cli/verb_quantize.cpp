// hearth-cli quantize: IN.gguf (F32/F16/BF16) -> OUT.gguf at a target type,
// with the reference's per-tensor mix. The work is engine/tools; this verb
// parses arguments and prints the per-tensor error report on stderr.
#include <hearth/engine/imatrix/importance.h>
#include <hearth/engine/tools/quantize_model.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <cstdio>
#include <thread>

#include "args.h"
#include "verbs.h"

namespace hearth::cli {

int run_quantize(const std::vector<std::string>& argv) {
  const VerbSpec spec{
      "quantize", "IN.gguf OUT.gguf TYPE [--imatrix F] [--threads N] [--no-error-report]",
      "Quantizes an F32/F16/BF16 model. TYPE: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_M, Q4_K_M,\n"
      "Q5_K_M, Q6_K, IQ4_NL, IQ4_XS, F16, BF16. Prints one line per tensor on stderr: name, type,\n"
      "RMS error against the source and relative error (RMS error / RMS of the source).\n"
      "--imatrix weighs each weight's rounding error by its column's importance (hearth-cli imatrix,\n"
      "or the reference engine's imatrix file, GGUF or legacy .dat).",
      {{"imatrix", FlagKind::Value, "importance matrix for the block searches", "", "F"},
       {"threads", FlagKind::Value, "worker threads (default: all cores, at least 2)", "t", "N"},
       {"no-error-report", FlagKind::Switch, "skip measuring the error (faster)", "", ""}},
      3,
      3};
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  const auto& pos = args->positionals();
  auto target = tools::quant_target_from_name(pos[2]);
  if (!target.ok()) {
    std::fprintf(stderr, "quantize: %s\n", target.error().message.c_str());
    return kExitUsage;
  }
  const int64_t cores = std::max<int64_t>(2, std::thread::hardware_concurrency());
  auto threads = args->get_int("threads", cores, 1, 1024);
  if (!threads.ok()) {
    std::fprintf(stderr, "quantize: %s\n", threads.error().message.c_str());
    return kExitUsage;
  }

  tools::QuantizeOptions options;
  options.target = *target;
  options.threads = static_cast<int>(*threads);
  options.error_report = args->has("no-error-report") ? tools::ErrorReport::Skip : tools::ErrorReport::Compute;
  if (auto file = args->get("imatrix")) {
    auto matrix = imatrix::read_importance(*file);
    if (!matrix.ok()) {
      std::fprintf(stderr, "quantize: %s\n", matrix.error().message.c_str());
      return kExitBadInput;
    }
    auto importance = std::make_shared<tools::QuantImportance>();
    importance->weights = imatrix::quant_weights(*matrix);
    importance->file = *file;
    if (!matrix->datasets.empty()) importance->dataset = matrix->datasets.front();
    importance->chunks = matrix->chunk_count;
    std::fprintf(stderr, "quantize: %zu importance entries from %s (%u chunks)\n", importance->weights.size(),
                 file->c_str(), matrix->chunk_count);
    options.importance = std::move(importance);
  }
  const bool report = options.error_report == tools::ErrorReport::Compute;
  options.on_tensor = [report](const tools::TensorReport& t) {
    if (report) {
      std::fprintf(stderr, "%-32s %-6s -> %-6s rms_err %.6g  rel_err %.4f%%\n", t.name.c_str(),
                   std::string(traits(t.source_type).name).c_str(), std::string(traits(t.type).name).c_str(),
                   t.rms_error, 100.0 * t.relative_error());
    } else {
      std::fprintf(stderr, "%-32s %-6s -> %-6s\n", t.name.c_str(), std::string(traits(t.source_type).name).c_str(),
                   std::string(traits(t.type).name).c_str());
    }
  };
  const auto start = std::chrono::steady_clock::now();
  auto result = tools::quantize_model(pos[0], pos[1], options);
  if (!result.ok()) {
    std::fprintf(stderr, "quantize: %s\n", result.error().message.c_str());
    return kExitBadInput;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "quantize: %s -> %s (%s): %zu tensors, %.1f MB -> %.1f MB in %.2f s (%.0f MB/s of input)\n",
               pos[0].c_str(), pos[1].c_str(), pos[2].c_str(), result->tensors.size(),
               static_cast<double>(result->input_bytes) / 1e6, static_cast<double>(result->output_bytes) / 1e6,
               seconds, seconds > 0 ? static_cast<double>(result->input_bytes) / 1e6 / seconds : 0.0);
  return kExitOk;
}

}  // namespace hearth::cli
