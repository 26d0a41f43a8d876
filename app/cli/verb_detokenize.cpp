// hearth-cli detokenize: token ids back to text with a model's tokenizer, for
// one id list or a file of id lines (the output of `tokenize --corpus`).
#include <hearth/engine/tokenizer/tokenizer.h>

#include <cstdio>

#include "args.h"
#include "engine_setup.h"
#include "tokenizer_cli.h"
#include "verbs.h"

namespace hearth::cli {

namespace {

// With --remove-special the BOS/EOS the vocabulary adds are dropped and the
// rest is decoded as a text on its own, so that (for SentencePiece) the space
// prefix tokenization added is removed again and the round trip is exact.
std::string decode(const tokenizer::Tokenizer& tok, std::vector<int32_t> ids, bool remove_special,
                   const tokenizer::DetokenizeOptions& options) {
  const auto& v = tok.vocab();
  if (remove_special) {
    if (v.add_bos && !ids.empty() && ids.front() == v.special.bos) ids.erase(ids.begin());
    if (v.add_eos && !ids.empty() && ids.back() == v.special.eos) ids.pop_back();
  }
  return tok.detokenize(ids, options);
}

}  // namespace

int run_detokenize(const std::vector<std::string>& argv) {
  const VerbSpec spec{
      "detokenize", "--model M.gguf (--ids \"1 2 3\" | --corpus IDS --out OUT) [--show-special] [--remove-special] [--raw]",
      "Prints the text of the ids exactly (no newline added); or turns a file of id lines (one case per\n"
      "line) into a corpus, each case followed by a line __case__.",
      {{"model", FlagKind::Value, "model or vocabulary file", "m", "M.gguf"},
       {"ids", FlagKind::Value, "token ids, space-separated", "", "IDS"},
       {"corpus", FlagKind::Value, "file with one line of ids per case", "", "IDS"},
       {"out", FlagKind::Value, "output corpus for --corpus", "o", "OUT"},
       {"show-special", FlagKind::Switch, "render control tokens as their text", "", ""},
       {"remove-special", FlagKind::Switch, "drop the BOS/EOS the vocabulary adds", "", ""},
       {"raw", FlagKind::Switch, "no clean-up of spaces before punctuation", "", ""}}};
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  const bool corpus = args->has("corpus");
  if (!args->has("model") || corpus == args->has("ids") || corpus != args->has("out")) {
    std::fprintf(stderr, "detokenize: needs --model and either --ids, or --corpus with --out\n");
    return kExitUsage;
  }
  tokenizer::DetokenizeOptions options;
  options.show_special = args->has("show-special") ? tokenizer::ShowSpecial::Yes : tokenizer::ShowSpecial::No;
  options.cleanup = args->has("raw") ? tokenizer::SpaceCleanup::None : tokenizer::SpaceCleanup::AsVocab;
  const bool remove_special = args->has("remove-special");

  std::vector<std::vector<int32_t>> lists;
  std::string source = "--ids";
  if (!corpus) {
    auto ids = parse_ids(*args->get("ids"));
    if (!ids.ok()) {
      std::fprintf(stderr, "detokenize: %s\n", ids.error().message.c_str());
      return kExitUsage;
    }
    lists.push_back(std::move(ids).value());
  } else {
    source = *args->get("corpus");
    auto content = read_whole_file(source, "token id files");
    if (!content.ok()) {
      std::fprintf(stderr, "detokenize: %s\n", content.error().message.c_str());
      return kExitBadInput;
    }
    std::string_view rest = *content;
    size_t line_no = 0;
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      const std::string line(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      ++line_no;
      std::vector<int32_t> ids;
      if (line.find_first_not_of(" \t\r") != std::string::npos) {
        auto parsed = parse_ids(line);
        if (!parsed.ok()) {
          std::fprintf(stderr, "detokenize: %s line %zu: %s\n", source.c_str(), line_no,
                       parsed.error().message.c_str());
          return kExitBadInput;
        }
        ids = std::move(parsed).value();
      }
      lists.push_back(std::move(ids));
    }
  }

  auto tok = load_cli_tokenizer(*args->get("model"));
  if (!tok.ok()) {
    std::fprintf(stderr, "detokenize: %s\n", tok.error().message.c_str());
    return kExitBadInput;
  }
  for (size_t i = 0; i < lists.size(); ++i) {
    for (const int32_t id : lists[i]) {
      if (!tok->vocab().valid(id)) {
        std::fprintf(stderr, "detokenize: %s: token id %d is outside the vocabulary of %zu tokens\n",
                     corpus ? fmt::format("{} line {}", source, i + 1).c_str() : "--ids", id, tok->vocab().size());
        return kExitBadInput;
      }
    }
  }
  if (!corpus) {
    const std::string text = decode(*tok, lists.front(), remove_special, options);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  std::vector<std::string> cases;
  cases.reserve(lists.size());
  for (auto& ids : lists) cases.push_back(decode(*tok, std::move(ids), remove_special, options));
  if (auto st = write_whole_file(*args->get("out"), join_corpus(cases)); !st.ok()) {
    std::fprintf(stderr, "detokenize: %s\n", st.error().message.c_str());
    return kExitBadInput;
  }
  std::fprintf(stderr, "detokenize: %zu cases from %s\n", cases.size(), source.c_str());
  return kExitOk;
}

}  // namespace hearth::cli
