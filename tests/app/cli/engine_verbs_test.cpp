// hearth-cli logits and generate as a user runs them, against the fixtures.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "cli_process.h"

namespace {

using hearth::testing::data_path;
using hearth::testing::cli;
using hearth::testing::slurp;
using hearth::testing::tokens_arg;

TEST(CliLogits, MatchesTheReferenceLogits) {
  struct C { const char* model; double cos; double top1; };
  for (const C& c : {C{"tiny-llama-f32.gguf", 0.99999, 1.0}, C{"tiny-qwen2-q4_k_m.gguf", 0.998, 0.85}}) {
    const std::string out = ::testing::TempDir() + "hearth-cli-logits.f32";
    const std::string cmd = cli() + " logits --model " + data_path(std::string("models/") + c.model) + " --tokens \"" +
                            tokens_arg("tokens.txt") + "\" --out " + out + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto got = hearth::testing::read_f32(out);
    const auto ref = hearth::testing::read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
    ASSERT_EQ(got.size(), ref.size());
    const auto a = hearth::testing::compare_logits(got, ref, 512);
    EXPECT_GE(a.min_cosine, c.cos) << c.model;
    EXPECT_GE(a.top1, c.top1) << c.model;
  }
}

// --cpu-kernels caps the kernel level (what a CPU without AVX-512 runs) and
// --weights picks where the weights live; every combination still gives the
// reference logits (levels above what this CPU has fall back to its best).
TEST(CliLogits, EveryKernelLevelAndWeightPlacementMatchesTheReference) {
  const std::string model = "tiny-qwen2-q4_k_m.gguf";
  const auto ref = hearth::testing::read_f32(data_path("models/" + model + ".logits.f32"));
  for (const char* level : {"scalar", "avx2", "avx-vnni", "avx512"}) {
    for (const char* weights : {"mapped", "copy"}) {
      const std::string out = ::testing::TempDir() + "hearth-cli-logits-" + level + "-" + weights + ".f32";
      const std::string cmd = cli() + " logits --model " + data_path("models/" + model) + " --tokens \"" +
                              tokens_arg("tokens.txt") + "\" --cpu-kernels " + level + " --weights " + weights +
                              " --out " + out + " 2>/dev/null";
      ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
      const auto got = hearth::testing::read_f32(out);
      ASSERT_EQ(got.size(), ref.size());
      const auto a = hearth::testing::compare_logits(got, ref, 512);
      EXPECT_GE(a.min_cosine, 0.998) << level << " " << weights;
      EXPECT_GE(a.top1, 0.85) << level << " " << weights;
    }
  }
  const std::string err = ::testing::TempDir() + "hearth-cli-bad-level.err";
  const std::string bad = cli() + " logits --model " + data_path("models/" + model) +
                          " --tokens 1 --cpu-kernels sse2 --out /dev/null 2> " + err;
  const int rc = std::system(bad.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 1);
  EXPECT_NE(slurp(err).find("--cpu-kernels 'sse2' is not one of scalar, neon, neon-dotprod, neon-i8mm, avx2, avx-vnni, avx512"), std::string::npos)
      << slurp(err);
}

TEST(CliGenerate, StoriesGreedyBeginsWithTheReferenceText) {
  const std::string out = ::testing::TempDir() + "hearth-cli-generate.txt";
  const std::string cmd = cli() + " generate --model " + data_path("models/stories260K.gguf") + " --tokens \"" +
                          tokens_arg("stories260K.prompt-tokens.txt") + "\" --temp 0 -n 100 > " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string expected = slurp(data_path("models/stories260K.greedy-text.txt"));
  EXPECT_EQ(slurp(out).substr(0, expected.size()), expected);
}

// The issue's own words: "Once upon a time", greedy, raw, text in and text out.
TEST(CliGenerate, StoriesTextPromptBeginsWithTheReferenceText) {
  const std::string out = ::testing::TempDir() + "hearth-cli-generate-text.txt";
  const std::string cmd = cli() + " generate --model " + data_path("models/stories260K.gguf") +
                          " --prompt \"Once upon a time\" --raw --temp 0 -n 100 > " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string expected = slurp(data_path("models/stories260K.greedy-text.txt"));
  EXPECT_EQ(slurp(out).substr(0, expected.size()), expected);
}

// Every fixture model through `hearth-cli logits` on the CPU, within the
// fixture README's tolerances for its weight type.
class CliLogitsAllModels : public ::testing::TestWithParam<hearth::testing::FixtureCase> {};

TEST_P(CliLogitsAllModels, MatchReferenceWithinTolerance) {
  const auto& c = GetParam();
  // One output file per case: ctest runs the cases in parallel.
  const std::string out = ::testing::TempDir() + "hearth-cli-logits-cpu-" + c.model + ".f32";
  const std::string cmd = cli() + " logits --backend cpu --model " + data_path(std::string("models/") + c.model) +
                          " --tokens \"" + tokens_arg(c.tokens) + "\" --out " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto got = hearth::testing::read_f32(out);
  const auto ref = hearth::testing::read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
  ASSERT_EQ(got.size(), ref.size());
  const auto a = hearth::testing::compare_logits(got, ref, 512);
  hearth::testing::print_agreement("cli-cpu", c.model, a);
  EXPECT_GE(hearth::testing::checked_cosine(a, c), c.min_cosine);
  EXPECT_GE(a.top1, c.min_top1);
}

INSTANTIATE_TEST_SUITE_P(Cpu, CliLogitsAllModels, ::testing::ValuesIn(hearth::testing::kFixtureCases),
                         [](const ::testing::TestParamInfo<hearth::testing::FixtureCase>& param_info) {
                           return "cpu_" + hearth::testing::fixture_case_name(param_info.param);
                         });
INSTANTIATE_TEST_SUITE_P(CpuMoe, CliLogitsAllModels, ::testing::ValuesIn(hearth::testing::kMoeFixtureCases),
                         [](const ::testing::TestParamInfo<hearth::testing::FixtureCase>& param_info) {
                           return "cpu_" + hearth::testing::fixture_case_name(param_info.param);
                         });

TEST(CliLogits, BadInputIsExitCodeTwoWithOneLine) {
  const std::string cmd = cli() + " logits --model " + data_path("models/tokens.txt") + " --tokens 1 --out /dev/null 2>/dev/null";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 2);
}

}  // namespace
