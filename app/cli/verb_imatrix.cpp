// hearth-cli imatrix: runs a text through a model and writes the importance
// matrix (the per-column activation statistics of every weight product) in
// the reference engine's GGUF layout, for `quantize --imatrix`. The work is
// engine/imatrix; this verb parses arguments and reports progress on stderr.
#include <hearth/engine/imatrix/collector.h>
#include <hearth/engine/model/model.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "args.h"
#include "tokenizer_cli.h"
#include "verbs.h"

namespace hearth::cli {

int run_imatrix(const std::vector<std::string>& argv) {
  const VerbSpec spec{
      "imatrix", "--model M.gguf --text F -o OUT.imatrix [--ctx N] [--chunks N] [--threads N] [--process-output] [--json]",
      "Collects an importance matrix: the text is cut into chunks of --ctx tokens (at least two), each\n"
      "run from an empty cache, and the squared inputs of every weight product are summed per column\n"
      "(per expert for MoE stacks). Writes the reference engine's GGUF imatrix layout.",
      {{"model", FlagKind::Value, "model file (F32/F16 gives the best statistics)", "m", "M.gguf"},
       {"text", FlagKind::Value, "calibration text (plain UTF-8)", "f", "F"},
       {"output", FlagKind::Value, "importance matrix to write", "o", "OUT"},
       {"ctx", FlagKind::Value, "chunk length in tokens (default 512, as the reference)", "c", "N"},
       {"chunks", FlagKind::Value, "use at most N chunks (default: all)", "", "N"},
       {"threads", FlagKind::Value, "CPU threads (default: one per core)", "t", "N"},
       {"process-output", FlagKind::Switch, "also collect output.weight", "", ""},
       {"json", FlagKind::Switch, "one JSON summary object on stdout", "", ""}}};
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  auto ctx = args->get_int("ctx", 512, 4, 1 << 20);
  auto chunks = args->get_int("chunks", 0, 0, 1 << 30);
  auto threads = args->get_int("threads", 0, 0, 1024);
  if (!ctx.ok() || !chunks.ok() || !threads.ok() || !args->has("model") || !args->has("text") ||
      !args->has("output")) {
    std::fprintf(stderr, "imatrix: --model, --text and -o are required; --ctx takes a count of at least 4\n");
    return kExitUsage;
  }
  auto text = read_whole_file(*args->get("text"), "text file");
  if (!text.ok()) {
    std::fprintf(stderr, "imatrix: %s\n", text.error().message.c_str());
    return kExitBadInput;
  }
  auto model = model::Model::load(*args->get("model"));
  if (!model.ok()) {
    std::fprintf(stderr, "imatrix: %s\n", model.error().message.c_str());
    return kExitBadInput;
  }
  imatrix::CollectOptions options;
  options.n_ctx = static_cast<int32_t>(*ctx);
  options.max_chunks = static_cast<int32_t>(*chunks);
  options.threads = static_cast<int>(*threads);
  options.include_output = args->has("process-output");
  options.dataset = std::filesystem::path(*args->get("text")).filename().string();
  options.on_chunk = [](int32_t done, int32_t total) {
    std::fprintf(stderr, "\rimatrix: chunk %d of %d", done, total);
    if (done == total) std::fprintf(stderr, "\n");
    return true;
  };
  auto matrix = imatrix::collect_importance(**model, *text, options);
  if (!matrix.ok()) {
    std::fprintf(stderr, "imatrix: %s: %s\n", args->get("text")->c_str(), matrix.error().message.c_str());
    return kExitBadInput;
  }
  const std::string out = *args->get("output");
  if (auto st = imatrix::write_importance(*matrix, out); !st) {
    std::fprintf(stderr, "imatrix: %s\n", st.error().message.c_str());
    return kExitBadInput;
  }
  if (args->has("json")) {
    const nlohmann::json j = {{"model", *args->get("model")}, {"output", out},
                              {"entries", matrix->entries.size()}, {"chunks", matrix->chunk_count},
                              {"chunk_size", matrix->chunk_size}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::fprintf(stderr, "imatrix: %zu weight matrices over %u chunks of %u tokens -> %s\n", matrix->entries.size(),
                 matrix->chunk_count, matrix->chunk_size, out.c_str());
  }
  return kExitOk;
}

}  // namespace hearth::cli
