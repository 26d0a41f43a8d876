// hearth-cli tokenize: text to token ids with a model's tokenizer, for one
// text or a whole corpus (each case followed by a line `__case__`).
#include <hearth/engine/tokenizer/tokenizer.h>

#include <cstdio>

#include "args.h"
#include "tokenizer_cli.h"
#include "verbs.h"

namespace hearth::cli {

int run_tokenize(const std::vector<std::string>& argv) {
  const VerbSpec spec{
      "tokenize", "--model M.gguf (--text T | --corpus IN --out OUT) [--parse-special] [--no-add-special]",
      "Prints the token ids of T, space-separated on one line; or writes one line of ids per corpus case.\n"
      "BOS/EOS are added as the vocabulary says. Special-token text in the input stays text unless\n"
      "--parse-special is given.",
      {{"model", FlagKind::Value, "model or vocabulary file", "m", "M.gguf"},
       {"text", FlagKind::Value, "text to tokenize", "t", "T"},
       {"corpus", FlagKind::Value, "cases, each followed by a line __case__", "", "IN"},
       {"out", FlagKind::Value, "output file for --corpus: one line of ids per case", "o", "OUT"},
       {"parse-special", FlagKind::Switch, "turn control-token text into control tokens", "", ""},
       {"no-add-special", FlagKind::Switch, "do not add BOS/EOS", "", ""}}};
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  const bool corpus = args->has("corpus");
  if (!args->has("model") || corpus == args->has("text") || corpus != args->has("out")) {
    std::fprintf(stderr, "tokenize: needs --model and either --text, or --corpus with --out\n");
    return kExitUsage;
  }
  const std::string model = *args->get("model");
  auto tok = load_cli_tokenizer(model);
  if (!tok.ok()) {
    std::fprintf(stderr, "tokenize: %s\n", tok.error().message.c_str());
    return kExitBadInput;
  }
  const auto add = args->has("no-add-special") ? tokenizer::AddSpecial::No : tokenizer::AddSpecial::AsVocab;
  const auto parse = args->has("parse-special") ? tokenizer::ParseSpecial::Yes : tokenizer::ParseSpecial::No;

  if (!corpus) {
    const std::string line = ids_line(tok->tokenize(*args->get("text"), add, parse)) + "\n";
    std::fputs(line.c_str(), stdout);
    return kExitOk;
  }
  const std::string in = *args->get("corpus");
  auto content = read_whole_file(in, "corpus files");
  if (!content.ok()) {
    std::fprintf(stderr, "tokenize: %s\n", content.error().message.c_str());
    return kExitBadInput;
  }
  std::string out;
  const auto cases = split_corpus(*content);
  for (const auto& text : cases) {
    out += ids_line(tok->tokenize(text, add, parse));
    out += '\n';
  }
  if (auto st = write_whole_file(*args->get("out"), out); !st.ok()) {
    std::fprintf(stderr, "tokenize: %s\n", st.error().message.c_str());
    return kExitBadInput;
  }
  std::fprintf(stderr, "tokenize: %zu cases from %s\n", cases.size(), in.c_str());
  return kExitOk;
}

}  // namespace hearth::cli
