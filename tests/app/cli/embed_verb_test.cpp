// hearth-cli embed as a user runs it: the JSON contract ({"model", "dim",
// "embeddings"}) with the reference engine's vectors, texts from --file and
// repeated --text, the Vulkan backend flag, and the errors of bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>

#include "../../engine/runtime/embed_fixture.h"
#include "cli_process.h"

namespace {

using hearth::testing::cli;
using hearth::testing::embed_path;
using hearth::testing::slurp;

// A file name of this test's own: ctest runs the tests of this file (two
// programs) in parallel, each in its own process.
std::string temp_file(const std::string& stem) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + stem + "-" + info->test_suite_name() + "-" + info->name();
}

// Runs `args` through hearth-cli embed --json; returns the exit status and the JSON.
int run_embed(const std::string& args, nlohmann::json& out) {
  const std::string path = temp_file("hearth-cli-embed") + ".json";
  const std::string cmd = cli() + " embed " + args + " --json > " + path + " 2>/dev/null";
  const int status = WEXITSTATUS(std::system(cmd.c_str()));
  if (status == 0) out = nlohmann::json::parse(slurp(path));
  return status;
}

std::string texts_file() {
  const std::string path = temp_file("hearth-cli-embed-texts") + ".txt";
  std::ofstream f(path, std::ios::binary);
  for (const auto& t : hearth::testing::read_embed_texts()) f << t << "\n";
  return path;
}

void expect_reference(const hearth::testing::EmbedCase& c, const nlohmann::json& j, const std::string& how) {
  ASSERT_TRUE(j.contains("model") && j.contains("dim") && j.contains("embeddings")) << j.dump();
  hearth::runtime::Embeddings e;
  e.dim = j["dim"].get<int64_t>();
  for (const auto& v : j["embeddings"]) e.vectors.push_back(v.get<std::vector<float>>());
  hearth::testing::expect_matches_reference(c, e, 0, how.c_str());
}

TEST(CliEmbed, FileOfTextsGivesTheReferenceVectorsAsJson) {
  for (const auto& c : hearth::testing::kEmbedCases) {
    nlohmann::json j;
    ASSERT_EQ(run_embed("--model " + embed_path(c.model) + " --file " + texts_file(), j), 0) << c.model;
    EXPECT_EQ(j["embeddings"].size(), 12u);
    EXPECT_EQ(j["model"], embed_path(c.model));
    expect_reference(c, j, "cli");
  }
}

TEST(CliEmbed, RepeatedTextFlagsEmbedEachText) {
  const auto& c = hearth::testing::kEmbedCases[0];
  const auto texts = hearth::testing::read_embed_texts();
  nlohmann::json j;
  ASSERT_EQ(run_embed("--model " + embed_path(c.model) + " --text '" + texts[0] + "' --text '" + texts[1] + "'", j), 0);
  ASSERT_EQ(j["embeddings"].size(), 2u);
  EXPECT_EQ(j["dim"], 128);
  expect_reference(c, j, "cli-text");
}

TEST(CliEmbed, BadInputIsAnErrorExit) {
  nlohmann::json j;
  // Not an embedding model, a missing file, no text, an oversized text.
  EXPECT_EQ(run_embed("--model " + hearth::testing::data_path("models/tiny-llama-f32.gguf") + " --text hi", j), 2);
  EXPECT_EQ(run_embed("--model " + embed_path("tiny-bert-f32.gguf") + " --file /nonexistent/texts.txt", j), 2);
  EXPECT_EQ(run_embed("--model " + embed_path("tiny-bert-f32.gguf"), j), 1);
  std::string longest;
  for (int i = 0; i < 300; ++i) longest += "dog ";
  EXPECT_EQ(run_embed("--model " + embed_path("tiny-bert-f32.gguf") + " --text '" + longest + "'", j), 2);
}

TEST(CliEmbedVulkan, VulkanBackendGivesTheReferenceVectors) {
  for (const auto& c : {hearth::testing::kEmbedCases[0], hearth::testing::kEmbedCases[3]}) {
    nlohmann::json j;
    ASSERT_EQ(run_embed("--model " + embed_path(c.model) + " --backend vulkan --file " + texts_file(), j), 0) << c.model;
    expect_reference(c, j, "cli-vk");
  }
}

}  // namespace
