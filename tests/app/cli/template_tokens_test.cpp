// hearth-cli template --tokens, run as a user runs it, on the fixture
// vocabularies that carry a chat template (Qwen3's ChatML, Llama 3): with
// every control token of the vocabulary spelled in the system, user and
// assistant messages, the printed ids hold exactly the control ids the
// template writes for the same conversation without those spellings; a
// conversation without them encodes as the rendered prompt (`template`
// without --tokens) tokenized with special tokens parsed.
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli_process.h"

namespace hearth::testing {
namespace {

struct CliRun {
  int status = -1;
  std::string out, err;
};

// Files named after the running test (with its parameter): ctest runs the
// tests of this file at once.
std::string scratch(const std::string& suffix) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  return ::testing::TempDir() + "hearth-tt-" + name + suffix;
}

CliRun run_cli(const std::string& args) {
  const std::string cmd = cli() + " " + args + " > " + scratch(".out") + " 2> " + scratch(".err");
  CliRun r;
  r.status = std::system(cmd.c_str());
  r.out = slurp(scratch(".out"));
  r.err = slurp(scratch(".err"));
  return r;
}

std::string write_messages(const std::string& name, const std::string& system, const std::string& user,
                           const std::string& assistant) {
  const nlohmann::json messages = nlohmann::json::array({{{"role", "system"}, {"content", system}},
                                                         {{"role", "user"}, {"content", user}},
                                                         {{"role", "assistant"}, {"content", assistant}},
                                                         {{"role", "user"}, {"content", "Go on."}}});
  const std::string path = scratch("-" + name);
  std::ofstream(path, std::ios::binary) << messages.dump();
  return path;
}

std::vector<int32_t> ids_of(const CliRun& r) {
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out).get<std::vector<int32_t>>();
}

class TemplateTokens : public ::testing::TestWithParam<const char*> {};

TEST_P(TemplateTokens, NoControlIdComesFromMessageText) {
  const std::string vocab_path = data_path("vocab/" + std::string(GetParam()));
  auto file = gguf::GgufFile::open(vocab_path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf(*file);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  const auto& vocab = tok->vocab();
  auto is_control = [&](int32_t id) {
    return tokenizer::has_any(vocab.tokens[static_cast<size_t>(id)].attr,
                              tokenizer::TokenAttr::Control | tokenizer::TokenAttr::Unknown);
  };
  std::string spelled;
  int n_controls = 0;
  for (size_t id = 0; id < vocab.size(); ++id) {
    if (!is_control(static_cast<int32_t>(id)) || vocab.tokens[id].text.empty()) continue;
    spelled += " " + vocab.tokens[id].text + "x";
    ++n_controls;
  }
  ASSERT_GT(n_controls, 2);
  const std::string hostile = write_messages("tt-hostile.json", "Obey." + spelled, "Hi" + spelled, "Ok" + spelled);
  const std::string benign = write_messages("tt-benign.json", "Obey.", "Hi", "Ok");
  const std::string common = " template --model " + vocab_path + " --add-generation-prompt --messages ";

  auto control_counts = [&](const std::vector<int32_t>& ids) {
    std::map<int32_t, int> out;
    for (int32_t id : ids) {
      if (is_control(id)) ++out[id];
    }
    return out;
  };
  const auto hostile_ids = ids_of(run_cli(common + hostile + " --tokens"));
  const auto benign_ids = ids_of(run_cli(common + benign + " --tokens"));
  EXPECT_GT(hostile_ids.size(), benign_ids.size() + static_cast<size_t>(n_controls));
  EXPECT_EQ(control_counts(hostile_ids), control_counts(benign_ids));

  // Without such text: the rendered prompt tokenized with specials parsed.
  const CliRun text = run_cli(common + benign);
  ASSERT_EQ(text.status, 0) << text.err;
  const std::string bos = vocab.valid(vocab.special.bos) ? vocab.tokens[static_cast<size_t>(vocab.special.bos)].text
                                                         : std::string();
  const bool has_bos = !bos.empty() && text.out.rfind(bos, 0) == 0;
  EXPECT_EQ(benign_ids, tok->tokenize(text.out, has_bos ? tokenizer::AddSpecial::No : tokenizer::AddSpecial::AsVocab,
                                      tokenizer::ParseSpecial::Yes));
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, TemplateTokens, ::testing::Values("vocab-qwen3.gguf", "vocab-llama3.gguf"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(TemplateTokensUsage, TokensNeedAModelVocabulary) {
  const std::string messages = write_messages("tt-usage.json", "s", "u", "a");
  const CliRun r = run_cli("template --template-file " + data_path("jinja/README.md") + " --messages " + messages +
                        " --tokens");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--tokens needs --model"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hearth::testing
