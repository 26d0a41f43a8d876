// hearth-cli perplexity and compare as a user runs them: the JSON contract,
// the figures against the reference engine's perplexity tool
// (tests/data/quality/expected.json), a base compared with itself, and the
// usage and input errors.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include "cli_process.h"

namespace {

using hearth::testing::cli;
using hearth::testing::data_path;
using hearth::testing::slurp;

nlohmann::json expected() { return nlohmann::json::parse(slurp(data_path("quality/expected.json"))); }

// Runs `args` with stdout to a file; returns the exit code.
int run_cli(const std::string& args, const std::string& out, const std::string& err = "/dev/null") {
  const std::string cmd = cli() + " " + args + " > " + out + " 2> " + err;
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

uint64_t tensor_bytes(const std::string& path) {
  auto file = hearth::gguf::GgufFile::open(path);
  EXPECT_TRUE(file.ok());
  uint64_t total = 0;
  if (file.ok()) {
    for (const auto& t : file->tensors()) total += t.bytes;
  }
  return total;
}

TEST(CliQuality, PerplexityMatchesTheReference) {
  const auto exp = expected();
  const std::string ctx = std::to_string(exp["ctx"].get<int>());
  for (const auto& c : exp["perplexity"]) {
    const std::string model = data_path(c["model"]), out = ::testing::TempDir() + "ppl.json";
    ASSERT_EQ(run_cli("perplexity --model " + model + " --text " + data_path(c["text"]) + " --ctx " + ctx + " --json",
                      out),
              0)
        << model;
    const auto j = nlohmann::json::parse(slurp(out));
    for (const char* key : {"model", "tokens", "ppl", "ppl_sd"}) EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["model"], model);
    EXPECT_GE(j["tokens"].get<int>(), 2 * exp["ctx"].get<int>());
    const double ppl = c["ppl"];
    EXPECT_NEAR(j["ppl"].get<double>(), ppl, 0.01 * ppl) << model;
    const double sd = c["ppl_sd"];
    EXPECT_NEAR(j["ppl_sd"].get<double>(), sd, 0.02 * sd) << model;
  }
}

TEST(CliQuality, CompareOverATextMatchesTheReference) {
  const auto exp = expected();
  const auto& cases = exp["kl_divergence"];
  std::string args = "compare --base " + data_path(cases[0]["base"]) + " --text " + data_path(cases[0]["text"]) +
                     " --ctx " + std::to_string(exp["ctx"].get<int>()) + " -p 16 -n 8 -r 1 --json";
  for (const auto& c : cases) args += " --model " + data_path(c["model"]);
  const std::string out = ::testing::TempDir() + "compare.json";
  ASSERT_EQ(run_cli(args, out), 0) << args;
  const auto j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["base"], data_path(cases[0]["base"]));
  ASSERT_EQ(j["models"].size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& m = j["models"][i];
    const auto& c = cases[i];
    SCOPED_TRACE(c["model"].get<std::string>());
    for (const char* key : {"model", "kld_mean", "kld_p99", "top1", "ppl", "bytes", "pp_tps", "tg_tps"}) {
      EXPECT_TRUE(m.contains(key)) << key;
    }
    EXPECT_EQ(m["model"], data_path(c["model"]));
    const double kld = c["kld_mean"];
    const bool q8 = c["model"].get<std::string>().find("q8_0") != std::string::npos;
    EXPECT_NEAR(m["kld_mean"].get<double>(), kld, std::max(0.02 * kld, q8 ? 2e-5 : 0.0));
    EXPECT_NEAR(100.0 * m["top1"].get<double>(), c["top1_percent"].get<double>(), 1.0);
    EXPECT_NEAR(m["ppl"].get<double>(), c["ppl"].get<double>(), 0.01 * c["ppl"].get<double>());
    // The weights as loaded: every tensor of the file.
    EXPECT_EQ(m["bytes"].get<uint64_t>(), tensor_bytes(data_path(c["model"])));
    EXPECT_GT(m["pp_tps"].get<double>(), 0.0);
    EXPECT_GT(m["tg_tps"].get<double>(), 0.0);
  }
}

TEST(CliQuality, TheBaseComparedWithItselfAgreesEverywhere) {
  const std::string prompts = ::testing::TempDir() + "prompts.jsonl";
  {
    std::ofstream f(prompts);
    f << "{\"prompt\": \"Once upon a time\"}\n\n\"The little girl saw\"\n";
  }
  const std::string base = data_path("models/stories260K.gguf"), out = ::testing::TempDir() + "self.json";
  ASSERT_EQ(run_cli("compare --base " + base + " --model " + base + " --prompts " + prompts +
                        " --ctx 64 --greedy-tokens 24 -p 8 -n 8 -r 1 --json",
                    out),
            0);
  const auto j = nlohmann::json::parse(slurp(out));
  ASSERT_EQ(j["models"].size(), 1u);
  const auto& m = j["models"][0];
  EXPECT_EQ(m["positions"].get<int>(), 2 * 24);
  EXPECT_EQ(m["top1"].get<double>(), 1.0);
  // Only the base's 16-bit rounding separates the two distributions.
  EXPECT_LT(std::abs(m["kld_mean"].get<double>()), 1e-4);
  EXPECT_EQ(m["greedy_same_tokens"].get<double>(), 24.0);
  // The same logits; the comparison sums its log-likelihoods from float
  // terms (as the reference's KL pass does), the base's from double ones.
  EXPECT_NEAR(m["ppl"].get<double>(), j["base_ppl"].get<double>(), 1e-6 * j["base_ppl"].get<double>());
}

TEST(CliQuality, UsageAndInputErrors) {
  const std::string model = data_path("models/stories260K.gguf"), out = ::testing::TempDir() + "q.out",
                    err = ::testing::TempDir() + "q.err";
  EXPECT_EQ(run_cli("compare --base " + model + " --model " + model + " --text " + data_path("quality/story.txt") +
                        " --prompts x.jsonl",
                    out),
            1);
  EXPECT_EQ(run_cli("perplexity --model " + model, out), 1);
  // story.txt is ~6700 tokens: two windows of 4096 do not fit in it.
  EXPECT_EQ(run_cli("perplexity --model " + model + " --text " + data_path("quality/story.txt") + " --ctx 4096", out, err),
            2);
  EXPECT_NE(slurp(err).find("needs at least 8192"), std::string::npos) << slurp(err);
  const std::string bad = ::testing::TempDir() + "bad.jsonl";
  {
    std::ofstream f(bad);
    f << "{\"prompt\": \"fine\"}\n{\"text\": 3}\n";
  }
  EXPECT_EQ(run_cli("compare --base " + model + " --model " + model + " --prompts " + bad, out, err), 2);
  EXPECT_NE(slurp(err).find("line 2"), std::string::npos) << slurp(err);
  EXPECT_EQ(run_cli("compare --base " + model + " --model " + data_path("models/tiny-llama-q8_0.gguf") + " --text " +
                        data_path("quality/story.txt") + " --ctx 128 -p 8 -n 8 -r 1",
                    out, err),
            2);
  EXPECT_NE(slurp(err).find("vocabulary differs"), std::string::npos) << slurp(err);
}

}  // namespace
