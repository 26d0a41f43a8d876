// The hearth-cli verbs (contract: docs/cli.md). Each verb lives in its own
// file, app/cli/verb_<name>.cpp, and is listed once in verbs.cpp.
#pragma once

#include <string>
#include <vector>

namespace hearth::cli {

// Exit codes shared by every verb.
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,     // bad flags or arguments
  kExitBadInput = 2,  // a malformed file, a wrong checksum, an unusable model, ...
};

struct VerbEntry {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

const std::vector<VerbEntry>& all_verbs();

int run_catalog(const std::vector<std::string>& args);
int run_pull(const std::vector<std::string>& args);
int run_logits(const std::vector<std::string>& args);
int run_embed(const std::vector<std::string>& args);
int run_generate(const std::vector<std::string>& args);
int run_gen_model(const std::vector<std::string>& args);
int run_bench(const std::vector<std::string>& args);
int run_chat(const std::vector<std::string>& args);
int run_bench_prefix(const std::vector<std::string>& args);
int run_bench_serve(const std::vector<std::string>& args);
int run_template(const std::vector<std::string>& args);
int run_tokenize(const std::vector<std::string>& args);
int run_detokenize(const std::vector<std::string>& args);
int run_info(const std::vector<std::string>& args);
int run_quantize(const std::vector<std::string>& args);
int run_serve(const std::vector<std::string>& args);
int run_perplexity(const std::vector<std::string>& args);
int run_imatrix(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);

}  // namespace hearth::cli
