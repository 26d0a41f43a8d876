// hearth-cli embed: pooled, L2-normalized sentence embeddings of texts given
// with --text (repeatable) or --file (one text per line), as JSON
// {"model", "dim", "embeddings": [[...]], "tokens": [...]} with --json, or one
// line of numbers per text.
#include <fmt/format.h>
#include <hearth/core/file_io.h>
#include <hearth/engine/runtime/embedder.h>

#include <chrono>
#include <cstdio>
#include <numeric>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "args.h"
#include "engine_setup.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

// One text per line; a trailing '\r' is dropped and empty lines are skipped.
// Capped like the other corpora (docs/cli.md).
Result<std::vector<std::string>> read_lines(const std::string& path) {
  HEARTH_TRY(const std::string text, read_regular_file(path, 256ull << 20, "text files"));
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

}  // namespace

int run_embed(const std::vector<std::string>& argv) {
  VerbSpec spec{"embed",
                "--model M.gguf (--text T [--text T ...] | --file F) [--as document|query] [--query TASK] [--json]",
                "Pooled, L2-normalized sentence embeddings from an embedding model.",
                {{"model", FlagKind::Value, "embedding model file", "m", "M.gguf"},
                 {"text", FlagKind::Value, "a text to embed (may be given several times)", "t", "T"},
                 {"file", FlagKind::Value, "a file with one text per line (empty lines are skipped)", "f", "F"},
                 {"as", FlagKind::Value,
                  "what the texts are: document or query (the model's retrieval prefixes); default: as they are", "",
                  "ROLE"},
                 {"query", FlagKind::Value,
                  "embed the texts as queries for this task (\"Instruct: TASK\\nQuery: text\", Qwen3-Embedding)", "",
                  "TASK"},
                 {"json", FlagKind::Switch, "one JSON object on stdout", "", ""}}};
  for (auto& f : engine_flags()) spec.flags.push_back(f);
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  if (!args->has("model") || (args->has("text") == args->has("file"))) {
    std::fprintf(stderr, "embed: --model and one of --text or --file are required\n");
    return kExitUsage;
  }
  runtime::EmbedOptions options;
  options.query_instruction = args->get_or("query", "");
  const std::string role = args->get_or("as", "");
  if (role == "query") {
    options.role = runtime::TextRole::Query;
  } else if (role == "document") {
    options.role = runtime::TextRole::Document;
  } else if (!role.empty()) {
    std::fprintf(stderr, "embed: --as '%s' is not one of document, query\n", role.c_str());
    return kExitUsage;
  }
  std::vector<std::string> texts;
  if (args->has("file")) {
    auto lines = read_lines(*args->get("file"));
    if (!lines.ok()) {
      std::fprintf(stderr, "embed: %s\n", lines.error().message.c_str());
      return kExitBadInput;
    }
    texts = std::move(*lines);
  } else {
    texts = args->get_all("text");
  }
  auto setup = setup_engine(*args, 512);
  if (!setup.ok()) {
    std::fprintf(stderr, "embed: %s\n", setup.error().message.c_str());
    return setup.error().code == ErrorCode::InvalidArgument ? kExitUsage : kExitBadInput;
  }
  auto embedder = runtime::Embedder::create(std::move(setup->model), *setup->backend);
  if (!embedder.ok()) {
    std::fprintf(stderr, "embed: %s\n", embedder.error().message.c_str());
    return kExitBadInput;
  }
  const auto start = std::chrono::steady_clock::now();
  auto result = (*embedder)->embed(texts, options);
  if (!result.ok()) {
    std::fprintf(stderr, "embed: %s\n", result.error().message.c_str());
    return kExitBadInput;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t tokens = std::accumulate(result->token_counts.begin(), result->token_counts.end(), int64_t{0});
  std::fprintf(stderr, "embedded %zu texts, %lld tokens in %.3f s (%.0f tokens/s)\n", result->vectors.size(),
               static_cast<long long>(tokens), seconds, seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0);
  if (args->has("json")) {
    nlohmann::json vectors = nlohmann::json::array();
    for (const auto& v : result->vectors) vectors.push_back(v);
    const nlohmann::json j = {{"model", *args->get("model")},
                              {"dim", result->dim},
                              {"pooling", model::to_string((*embedder)->pooling())},
                              {"tokens", result->token_counts},
                              {"embeddings", vectors}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    for (const auto& v : result->vectors) {
      std::string line;
      for (size_t i = 0; i < v.size(); ++i) line += fmt::format("{}{:.7g}", i ? " " : "", v[i]);
      std::printf("%s\n", line.c_str());
    }
  }
  return kExitOk;
}

}  // namespace hearth::cli
