// hearth-cli template: prints exactly the reference rendering, and reports
// bad input with the documented exit codes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/verbs.h"

namespace hearth::cli {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

class TemplateVerb : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hearth_template_verb_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int run(const std::vector<std::string>& args, std::string& out) {
    ::testing::internal::CaptureStdout();
    const int rc = run_template(args);
    std::fflush(stdout);
    out = ::testing::internal::GetCapturedStdout();
    return rc;
  }

  std::filesystem::path dir_;
};

TEST_F(TemplateVerb, PrintsTheReferenceRenderingExactly) {
  for (const char* name : {"llama-3.1-8b-instruct.json", "mistral-nemo-instruct.json", "phi-3.5-mini-instruct.json"}) {
    const auto fixture = nlohmann::ordered_json::parse(read_file(std::string(HEARTH_TEST_DATA_DIR) + "/templates/" + name));
    write_file(dir_ / "t.jinja", fixture.at("template").get<std::string>());
    for (const auto& c : fixture.at("cases")) {
      if (!c.contains("output")) continue;
      write_file(dir_ / "m.json", c.at("messages").dump());
      std::vector<std::string> args = {"--template-file", (dir_ / "t.jinja").string(), "--messages",
                                       (dir_ / "m.json").string(), "--bos", fixture.at("bos_token").get<std::string>(),
                                       "--eos", fixture.at("eos_token").get<std::string>()};
      if (c.at("add_generation_prompt").get<bool>()) args.push_back("--add-generation-prompt");
      std::string out;
      ASSERT_EQ(run(args, out), kExitOk) << name;
      EXPECT_EQ(out, c.at("output").get<std::string>()) << name;
    }
  }
}

// --model: the template stored in the GGUF file and BOS/EOS texts from its
// vocabulary, against the reference's renderings of those same templates
// (tests/data/jinja/gguf_template_cases.json).
TEST_F(TemplateVerb, ModelTemplatesMatchReference) {
  const auto data =
      nlohmann::ordered_json::parse(read_file(std::string(HEARTH_TEST_DATA_DIR) + "/jinja/gguf_template_cases.json"));
  ASSERT_GE(data.at("cases").size(), 40u);
  for (const auto& c : data.at("cases")) {
    const std::string model = std::string(HEARTH_TEST_DATA_DIR) + "/" + c.at("gguf").get<std::string>();
    SCOPED_TRACE(model + " with " + std::to_string(c.at("messages").size()) + " messages");
    write_file(dir_ / "m.json", c.at("messages").dump());
    std::vector<std::string> args = {"--model", model, "--messages", (dir_ / "m.json").string()};
    if (c.at("add_generation_prompt").get<bool>()) args.push_back("--add-generation-prompt");
    if (c.contains("tools")) {
      write_file(dir_ / "tools.json", c.at("tools").dump());
      args.push_back("--tools");
      args.push_back((dir_ / "tools.json").string());
    }
    std::string out;
    if (c.contains("error")) {
      EXPECT_EQ(run(args, out), kExitBadInput);
      continue;
    }
    ASSERT_EQ(run(args, out), kExitOk);
    EXPECT_EQ(out, c.at("output").get<std::string>());
  }
}

// A model without a template gets the engine's rule: the built-in format its
// vocabulary's chat markers point to, else plain text (a completion model:
// no system role, each reply continuing its message, messages on new lines).
// The Llama 2 SentencePiece vocabulary has no chat marker tokens ([INST] is
// plain text there), so alone it says nothing about a chat format.
TEST_F(TemplateVerb, ModelWithoutTemplateOrChatMarkersIsPlainText) {
  write_file(dir_ / "m.json", R"([{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"},
                                  {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Bye"}])");
  std::string out;
  ASSERT_EQ(run({"--model", std::string(HEARTH_TEST_DATA_DIR) + "/vocab/ggml-vocab-llama-spm.gguf", "--messages",
                 (dir_ / "m.json").string()},
                out),
            kExitOk);
  EXPECT_EQ(out, "Hi Hello!\nBye");
}

TEST_F(TemplateVerb, BadInputAndUsageExitCodes) {
  write_file(dir_ / "t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  write_file(dir_ / "broken.jinja", "{% for m in messages %}");
  write_file(dir_ / "m.json", R"([{"role": "user", "content": "hi"}])");
  write_file(dir_ / "bad.json", R"([{"role": "user", "content": )");
  const std::string t = (dir_ / "t.jinja").string();
  const std::string m = (dir_ / "m.json").string();
  std::string out;
  EXPECT_EQ(run({"--template-file", t, "--messages", m}, out), kExitOk);
  EXPECT_EQ(out, "hi");
  EXPECT_EQ(run({"--messages", m}, out), kExitUsage);
  EXPECT_EQ(run({"--template-file", t}, out), kExitUsage);
  EXPECT_EQ(run({"--template-file", t, "--model", "x.gguf", "--messages", m}, out), kExitUsage);
  EXPECT_EQ(run({"--model", (dir_ / "missing.gguf").string(), "--messages", m}, out), kExitBadInput);
  EXPECT_EQ(run({"--model", t, "--messages", m}, out), kExitBadInput);  // not a GGUF file
  EXPECT_EQ(run({"--template-file", t, "--messages", m, "--bogus"}, out), kExitUsage);
  EXPECT_EQ(run({"--template-file", (dir_ / "missing.jinja").string(), "--messages", m}, out), kExitBadInput);
  EXPECT_EQ(run({"--template-file", (dir_ / "broken.jinja").string(), "--messages", m}, out), kExitBadInput);
  EXPECT_EQ(run({"--template-file", t, "--messages", (dir_ / "bad.json").string()}, out), kExitBadInput);
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace hearth::cli
