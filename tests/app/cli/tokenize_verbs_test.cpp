// The tokenize/detokenize verbs' corpus mode against the reference ids of
// every fixture vocabulary (tests/data/vocab), and their usage errors.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/tokenizer_cli.h"
#include "cli/verbs.h"

namespace hearth::cli {
namespace {

namespace fs = std::filesystem;

fs::path vocab_dir() { return fs::path(HEARTH_TEST_DATA_DIR) / "vocab"; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class TokenizeVerbs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hearth_cli_tok_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TokenizeVerbs, CorpusModeMatchesReferenceIdsForEveryVocabulary) {
  const fs::path corpus = vocab_dir() / "corpus.txt";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(vocab_dir())) {
    const std::string file = entry.path().filename().string();
    if (file.size() < 12 || file.substr(file.size() - 12) != ".tokens.json") continue;
    const auto json = nlohmann::json::parse(slurp(entry.path()));
    // Goldens of a vocabulary variant (a key removed at run time) are the
    // engine conformance test's; the verb reads the files as they are.
    if (json.contains("without_keys")) continue;
    const fs::path model = vocab_dir() / json.at("vocab").get<std::string>();
    ASSERT_TRUE(json.at("add_special").get<bool>());
    ASSERT_FALSE(json.at("parse_special").get<bool>());

    const fs::path ids_out = dir_ / (file + ".ids");
    ASSERT_EQ(run_tokenize({"--model", model.string(), "--corpus", corpus.string(), "--out", ids_out.string()}),
              kExitOk)
        << file;
    const auto lines = lines_of(slurp(ids_out));
    const auto& cases = json.at("cases");
    ASSERT_EQ(lines.size(), cases.size()) << file;
    for (size_t i = 0; i < cases.size(); ++i) {
      EXPECT_EQ(lines[i], ids_line(cases[i].at("ids").get<std::vector<int32_t>>()))
          << file << " case " << i << " '" << cases[i].at("text").get<std::string>() << "'";
    }

    // And back: the id lines decode to the corpus again.
    const fs::path back = dir_ / (file + ".txt");
    ASSERT_EQ(run_detokenize({"--model", model.string(), "--corpus", ids_out.string(), "--out", back.string(),
                              "--remove-special", "--raw"}),
              kExitOk)
        << file;
    EXPECT_EQ(slurp(back), slurp(corpus)) << file;
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

TEST(CorpusFormat, SplitsOnMarkerLines) {
  EXPECT_EQ(split_corpus("\n__case__\na\nb\n__case__\n"), (std::vector<std::string>{"", "a\nb"}));
  EXPECT_EQ(split_corpus("x\r\n\n__case__\n"), (std::vector<std::string>{"x\r\n"}));
  // Marker text inside a line is text; a missing final marker still ends a case.
  EXPECT_EQ(split_corpus("a __case__\n__case__\ntail"), (std::vector<std::string>{"a __case__", "tail"}));
  EXPECT_EQ(join_corpus({"", "a\nb"}), "\n__case__\na\nb\n__case__\n");
}

TEST_F(TokenizeVerbs, TextModePrintsOneLine) {
  const fs::path model = vocab_dir() / "ggml-vocab-gpt-2.gguf";
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_tokenize({"--model", model.string(), "--text", "Hello world"}), kExitOk);
  // GPT-2: "Hello" = 15496, " world" = 995 (the tokens.json fixture agrees).
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "15496 995\n");

  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_detokenize({"--model", model.string(), "--ids", "15496 995"}), kExitOk);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "Hello world");
}

TEST_F(TokenizeVerbs, ParseSpecialFlag) {
  const fs::path model = vocab_dir() / "vocab-qwen3.gguf";
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_tokenize({"--model", model.string(), "--text", "<|im_end|>", "--parse-special"}), kExitOk);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "151645\n");  // tokenizer.ggml.eos_token_id
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run_tokenize({"--model", model.string(), "--text", "<|im_end|>"}), kExitOk);
  EXPECT_NE(::testing::internal::GetCapturedStdout(), "151645\n");
}

TEST_F(TokenizeVerbs, UsageAndInputErrors) {
  const std::string model = (vocab_dir() / "ggml-vocab-gpt-2.gguf").string();
  EXPECT_EQ(run_tokenize({"--text", "x"}), kExitUsage);
  EXPECT_EQ(run_tokenize({"--model", model}), kExitUsage);
  EXPECT_EQ(run_tokenize({"--model", model, "--corpus", "in.txt"}), kExitUsage);  // no --out
  EXPECT_EQ(run_tokenize({"--model", (dir_ / "missing.gguf").string(), "--text", "x"}), kExitBadInput);
  EXPECT_EQ(run_tokenize({"--model", model, "--corpus", (dir_ / "missing.txt").string(), "--out",
                          (dir_ / "o").string()}),
            kExitBadInput);
  EXPECT_EQ(run_detokenize({"--model", model, "--ids", "1 x"}), kExitUsage);
  EXPECT_EQ(run_detokenize({"--model", model, "--ids", "99999999"}), kExitBadInput);
  const fs::path not_gguf = dir_ / "not.gguf";
  std::ofstream(not_gguf) << "plain text";
  EXPECT_EQ(run_detokenize({"--model", not_gguf.string(), "--ids", "1"}), kExitBadInput);
}

}  // namespace
}  // namespace hearth::cli
