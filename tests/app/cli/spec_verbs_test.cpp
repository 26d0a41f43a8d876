// Speculative decoding from the terminal: generate with n-gram drafts and
// with a draft model prints the reference's greedy text, chat and bench take
// the flags, and a draft model with another vocabulary is refused with the
// reason (exit 2).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>
#include <sys/wait.h>

#include "cli_process.h"

namespace {

using hearth::testing::cli;
using hearth::testing::data_path;
using hearth::testing::slurp;
using hearth::testing::tokens_arg;

int run(const std::string& cmd) {
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string story_generate(const std::string& flags, const std::string& name, std::string* err_text = nullptr) {
  const std::string out = ::testing::TempDir() + "hearth-cli-spec-" + name + ".txt";
  const std::string err = out + ".err";
  const std::string cmd = cli() + " generate --model " + data_path("models/stories260K.gguf") + " --tokens \"" +
                          tokens_arg("stories260K.prompt-tokens.txt") + "\" --temp 0 -n 100 --stats " + flags + " > " +
                          out + " 2> " + err;
  EXPECT_EQ(run(cmd), 0) << cmd << "\n" << slurp(err);
  if (err_text) *err_text = slurp(err);
  return slurp(out);
}

TEST(CliSpeculation, NgramDraftsPrintTheReferenceGreedyText) {
  std::string err;
  const std::string text = story_generate("--spec ngram --draft-max 4 --draft-fixed", "ngram", &err);
  const std::string expected = slurp(data_path("models/stories260K.greedy-text.txt"));
  EXPECT_EQ(text.substr(0, expected.size()), expected);
  EXPECT_NE(err.find("speculation ngram:"), std::string::npos) << err;
}

TEST(CliSpeculation, ADraftModelPrintsTheReferenceGreedyText) {
  // The story model drafting for itself: every draft is kept.
  std::string err;
  const std::string text = story_generate(
      "--draft-model " + data_path("models/stories260K.gguf") + " --draft-max 5 --draft-fixed", "draft", &err);
  const std::string expected = slurp(data_path("models/stories260K.greedy-text.txt"));
  EXPECT_EQ(text.substr(0, expected.size()), expected);
  EXPECT_NE(err.find("acceptance 100%"), std::string::npos) << err;
}

TEST(CliSpeculation, ADraftModelWithAnotherVocabularyIsRefused) {
  const std::string err = ::testing::TempDir() + "hearth-cli-spec-vocab.err";
  const std::string cmd = cli() + " generate --model " + data_path("models/stories260K.gguf") +
                          " --prompt hi --spec draft --draft-model " + data_path("models/tiny-llama-f32.gguf") +
                          " > /dev/null 2> " + err;
  EXPECT_EQ(run(cmd), 2);
  const std::string text = slurp(err);
  EXPECT_NE(text.find("tiny-llama-f32.gguf"), std::string::npos) << text;
  EXPECT_NE(text.find("vocabulary differs"), std::string::npos) << text;
}

TEST(CliSpeculation, UsageErrorsAreExitCodeOne) {
  const std::string model = data_path("models/stories260K.gguf");
  EXPECT_EQ(run(cli() + " generate --model " + model + " --prompt hi --spec fast 2>/dev/null"), 1);
  EXPECT_EQ(run(cli() + " generate --model " + model + " --prompt hi --spec draft 2>/dev/null"), 1);
  EXPECT_EQ(run(cli() + " generate --model " + model + " --prompt hi --spec ngram --draft-max 0 2>/dev/null"), 1);
}

TEST(CliSpeculation, BenchReportsAcceptanceBesideThePlainSpeed) {
  const std::string out = ::testing::TempDir() + "hearth-cli-spec-bench.json";
  const std::string cmd = cli() + " bench --model " + data_path("models/stories260K.gguf") +
                          " -p 16 -n 48 -r 1 --spec ngram --json > " + out + " 2>/dev/null";
  ASSERT_EQ(run(cmd), 0) << cmd;
  const auto j = nlohmann::json::parse(slurp(out));
  for (const char* key : {"spec", "acceptance_rate", "mean_accepted", "tg_tps_nospec", "tg_tps", "verify_cost_ratio",
                          "modeled_speedup", "roofline_fraction"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["spec"], "ngram");
  EXPECT_EQ(j["verify_ms"].size(), 9u);
  EXPECT_EQ(j["verify_cost_ratio"].size(), 8u);
  EXPECT_GE(j["acceptance_rate"].get<double>(), 0.0);
  EXPECT_LE(j["acceptance_rate"].get<double>(), 1.0);
}

TEST(CliSpeculation, ChatTakesTheFlags) {
  const std::string out = ::testing::TempDir() + "hearth-cli-spec-chat.txt";
  const std::string cmd = "printf 'Once upon a time\\n/stats\\n' | " + cli() + " chat --model " +
                          data_path("models/stories260K.gguf") + " --temp 0 -n 40 --spec ngram > " + out +
                          " 2>/dev/null";
  ASSERT_EQ(run(cmd), 0) << cmd;
  EXPECT_NE(slurp(out).find("speculation ngram:"), std::string::npos) << slurp(out);
}

}  // namespace
