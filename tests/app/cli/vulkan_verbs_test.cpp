// hearth-cli on the Vulkan backend (Mesa's lavapipe in CI): the fixture
// logits, the stories260K greedy text and bench --profile, as a user runs them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <hearth/engine/model/weight_memory.h>

#include "cli_process.h"

namespace {

using hearth::testing::data_path;
using hearth::testing::cli;
using hearth::testing::slurp;
using hearth::testing::tokens_arg;

class CliVulkanLogits : public ::testing::TestWithParam<hearth::testing::FixtureCase> {};

TEST_P(CliVulkanLogits, MatchReferenceWithinTolerance) {
  const auto& c = GetParam();
  // One output file per case: ctest runs the cases in parallel.
  const std::string out = ::testing::TempDir() + "hearth-cli-vk-logits-" + c.model + ".f32";
  const std::string err = ::testing::TempDir() + "hearth-cli-vk-logits-" + c.model + ".err";
  const std::string cmd = cli() + " logits --backend vulkan --model " + data_path(std::string("models/") + c.model) +
                          " --tokens \"" + tokens_arg(c.tokens) + "\" --out " + out + " 2>" + err;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  // It must really have run on Vulkan, not fallen back to the CPU.
  EXPECT_EQ(slurp(err).rfind("Vulkan: ", 0), 0u) << slurp(err);
  EXPECT_EQ(slurp(err).find("running on CPU"), std::string::npos) << slurp(err);
  const auto got = hearth::testing::read_f32(out);
  const auto ref = hearth::testing::read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
  ASSERT_EQ(got.size(), ref.size());
  const auto a = hearth::testing::compare_logits(got, ref, 512);
  hearth::testing::print_agreement("cli-vk", c.model, a);
  EXPECT_GE(hearth::testing::checked_cosine(a, c), c.min_cosine);
  EXPECT_GE(a.top1, c.min_top1);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CliVulkanLogits, ::testing::ValuesIn(hearth::testing::kFixtureCases),
                         [](const ::testing::TestParamInfo<hearth::testing::FixtureCase>& param_info) {
                           return hearth::testing::fixture_case_name(param_info.param);
                         });
INSTANTIATE_TEST_SUITE_P(MoeFixtures, CliVulkanLogits, ::testing::ValuesIn(hearth::testing::kMoeFixtureCases),
                         [](const ::testing::TestParamInfo<hearth::testing::FixtureCase>& param_info) {
                           return hearth::testing::fixture_case_name(param_info.param);
                         });

// Partial offload from the command line: the first layer on Vulkan, the rest
// (and the embedding and output head) on the CPU.
class CliPartialOffloadLogits : public ::testing::TestWithParam<hearth::testing::FixtureCase> {};

TEST_P(CliPartialOffloadLogits, OneLayerOnGpuMatchesReferenceWithinTolerance) {
  const auto& c = GetParam();
  const std::string out = ::testing::TempDir() + "hearth-cli-split-logits-" + c.model + ".f32";
  const std::string err = ::testing::TempDir() + "hearth-cli-split-logits-" + c.model + ".err";
  const std::string cmd = cli() + " logits --backend vulkan --gpu-layers 1 --model " +
                          data_path(std::string("models/") + c.model) + " --tokens \"" + tokens_arg(c.tokens) +
                          "\" --out " + out + " 2>" + err;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  // The description names the split: "Vulkan: <device>: 1 of N layers on GPU, rest on CPU".
  const std::string note = slurp(err);
  EXPECT_EQ(note.rfind("Vulkan: ", 0), 0u) << note;
  EXPECT_NE(note.find(": 1 of "), std::string::npos) << note;
  EXPECT_NE(note.find(" layers on GPU, rest on CPU"), std::string::npos) << note;
  const auto got = hearth::testing::read_f32(out);
  const auto ref = hearth::testing::read_f32(data_path(std::string("models/") + c.model + ".logits.f32"));
  ASSERT_EQ(got.size(), ref.size());
  const auto a = hearth::testing::compare_logits(got, ref, 512);
  hearth::testing::print_agreement("cli-split", c.model, a);
  EXPECT_GE(hearth::testing::checked_cosine(a, c), c.min_cosine);
  EXPECT_GE(a.top1, c.min_top1);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CliPartialOffloadLogits, ::testing::ValuesIn(hearth::testing::kFixtureCases),
                         [](const ::testing::TestParamInfo<hearth::testing::FixtureCase>& param_info) {
                           return hearth::testing::fixture_case_name(param_info.param);
                         });
INSTANTIATE_TEST_SUITE_P(MoeFixtures, CliPartialOffloadLogits, ::testing::ValuesIn(hearth::testing::kMoeFixtureCases),
                         [](const ::testing::TestParamInfo<hearth::testing::FixtureCase>& param_info) {
                           return hearth::testing::fixture_case_name(param_info.param);
                         });

TEST(CliGpuLayers, RejectsBadValuesAndTheCpuBackend) {
  const std::string model = data_path("models/stories260K.gguf");
  const std::string base = cli() + " logits --model " + model + " --tokens \"1 2\" --out " + ::testing::TempDir() +
                           "hearth-cli-gpu-layers.f32";
  EXPECT_EQ(WEXITSTATUS(std::system((base + " --backend vulkan --gpu-layers lots 2>/dev/null").c_str())), 1);
  EXPECT_EQ(WEXITSTATUS(std::system((base + " --backend vulkan --gpu-layers -2 2>/dev/null").c_str())), 1);
  EXPECT_EQ(WEXITSTATUS(std::system((base + " --backend cpu --gpu-layers 1 2>/dev/null").c_str())), 1);
}

// stories260K greedy on Vulkan: the reference story text and its first 50 ids.
TEST(CliVulkanGenerate, StoriesGreedyMatchesReferenceTextAndIds) {
  const std::string out = ::testing::TempDir() + "hearth-cli-vk-generate.txt";
  const std::string cmd = cli() + " generate --backend vulkan --model " + data_path("models/stories260K.gguf") +
                          " --prompt \"Once upon a time\" --raw --temp 0 -n 60 > " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string expected = slurp(data_path("models/stories260K.greedy-text.txt"));
  EXPECT_EQ(slurp(out).substr(0, expected.size()), expected);

  // Ids: the first 50 greedy ids after the prompt's ids are the reference's.
  std::ifstream ref_in(data_path("models/stories260K.gguf.greedy.txt"));
  std::vector<int> reference;
  for (int id; ref_in >> id;) reference.push_back(id);
  ASSERT_GE(reference.size(), 50u);
  const std::string ids_out = ::testing::TempDir() + "hearth-cli-vk-ids.txt";
  const std::string generate_ids = cli() + " generate --backend vulkan --model " +
                                   data_path("models/stories260K.gguf") +
                                   " --tokens \"1 403 407 261 378\" --temp 0 -n 50 --print-ids > " + ids_out +
                                   " 2>/dev/null";
  ASSERT_EQ(std::system(generate_ids.c_str()), 0) << generate_ids;
  std::ifstream ids_in(ids_out);
  std::vector<int> got;
  for (int id; ids_in >> id;) got.push_back(id);
  ASSERT_GE(got.size(), 50u);
  for (size_t i = 0; i < 50; ++i) EXPECT_EQ(got[i], reference[i]) << "id " << i;
}

// bench --profile: per-op GPU times for pp and tg in the JSON, each positive,
// adding up to no more than the profiled steps' wall time.
TEST(CliVulkanBench, ProfilePrintsPerOpGpuTime) {
  const std::string out = ::testing::TempDir() + "hearth-cli-vk-bench.json";
  const std::string cmd = cli() + " bench --backend vulkan --model " + data_path("models/stories260K.gguf") +
                          " -p 8 -n 3 -r 1 --profile --json > " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto j = nlohmann::json::parse(slurp(out), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << slurp(out);
  ASSERT_TRUE(j.contains("profile")) << slurp(out);
  for (const char* phase : {"pp", "tg"}) {
    const auto& p = j["profile"][phase];
    EXPECT_EQ(p["steps"].get<int>(), phase == std::string("pp") ? 1 : 3) << phase;
    ASSERT_FALSE(p["ops"].empty()) << phase;
    double sum = 0;
    for (const auto& op : p["ops"]) {
      EXPECT_GT(op["count"].get<int>(), 0) << phase << " " << op["op"];
      EXPECT_GT(op["ms"].get<double>(), 0.0) << phase << " " << op["op"];
      sum += op["ms"].get<double>();
    }
    EXPECT_LE(sum, p["wall_ms"].get<double>()) << phase;
  }
}

// Where the weights live follows where the layers run: with every layer on
// the GPU the CPU never reads them again, so "auto" keeps the file mapping
// (pages the kernel may drop) instead of holding a copy; a split keeps the
// machine's choice for the CPU's layers, and an explicit --weights is obeyed.
TEST(CliVulkanBench, WeightsStayMappedWhenEveryLayerRunsOnTheGpu) {
  struct Case {
    const char* extra;
    std::string want;
  };
  const std::string host_choice =
      hearth::model::resolve(hearth::model::WeightMemory::Auto) == hearth::model::WeightMemory::HugePageCopy ? "copy"
                                                                                                           : "mapped";
  for (const Case& c : {Case{"", "mapped"}, Case{"--gpu-layers 1", host_choice}, Case{"--weights copy", "copy"}}) {
    const std::string out = ::testing::TempDir() + "hearth-cli-vk-weights.json";
    const std::string cmd = cli() + " bench --backend vulkan --model " + data_path("models/tiny-llama-q8_0.gguf") +
                            " -p 0 -n 2 -r 1 " + c.extra + " --json > " + out + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto j = nlohmann::json::parse(slurp(out), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << slurp(out);
    EXPECT_EQ(j["weight_memory"], c.want) << c.extra;
  }
}

// --gpu-path forces the matrix-vector path and bench names the one that ran
// (the logits of each path: test_vulkan_model_logits). Bad values, and the
// flag without Vulkan, are refused.
TEST(CliVulkanGpuPath, EachPathRunsAndIsNamedAndBadValuesAreRefused) {
  const std::string model = data_path("models/tiny-llama-q4_k_m.gguf");
  for (const char* path : {"plain", "int-dot"}) {
    const std::string out = ::testing::TempDir() + "hearth-cli-vk-path-" + path + ".json";
    const std::string cmd = cli() + " bench --backend vulkan --model " + model + " -p 8 -n 4 -r 1 --gpu-path " + path +
                            " --json > " + out + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto j = nlohmann::json::parse(slurp(out), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << slurp(out);
    EXPECT_EQ(j["backend"], "vulkan") << path;
    EXPECT_EQ(j["pipeline"]["matvec"], path);
    EXPECT_GT(j["tg_tps"].get<double>(), 0.0) << path;
  }

  const std::string err = ::testing::TempDir() + "hearth-cli-vk-path.err";
  const std::string base = cli() + " logits --model " + model + " --tokens \"1 2\" --out " + ::testing::TempDir() +
                           "hearth-cli-gpu-path.f32";
  EXPECT_EQ(WEXITSTATUS(std::system((base + " --backend vulkan --gpu-path fast 2>" + err).c_str())), 1);
  EXPECT_NE(slurp(err).find("--gpu-path 'fast' is not one of auto, plain, int-dot"), std::string::npos) << slurp(err);
  EXPECT_EQ(WEXITSTATUS(std::system((base + " --backend cpu --gpu-path int-dot 2>" + err).c_str())), 1);
  EXPECT_NE(slurp(err).find("--gpu-path needs --backend vulkan"), std::string::npos) << slurp(err);
}

}  // namespace
