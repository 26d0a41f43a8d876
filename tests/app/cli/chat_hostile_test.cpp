// hearth-cli against hostile chat input, as a user runs it: a GGUF whose chat
// template would exhaust memory, time or the parser loads with a warning and
// the vocabulary's built-in format (never hangs; each run is held to 10 s and
// a 4 GB address space), and `chat` survives an over-long line and a prompt
// that does not fit after /reset, answering the turns that follow.
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include "../../engine/model/model_rewrite.h"
#include "cli_process.h"

namespace hearth::testing {
namespace {

namespace fs = std::filesystem;

// A copy of a fixture model whose tokenizer.chat_template is `source`.
std::string model_with_template(const std::string& name, const std::string& source) {
  return rewrite_model_with(data_path("models/tiny-llama-f32.gguf"), name, "tokenizer.chat_template",
                            gguf::make_string(source));
}

struct Outcome {
  int exit_code = -1;  // 137: killed at the time limit
  std::string out, err;
};

// Runs hearth-cli under a 4 GB address-space cap and a 10 s limit.
// Files named after the running test: ctest runs the tests of this file at once.
std::string scratch(const std::string& suffix) {
  return ::testing::TempDir() + "hearth-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
}

Outcome run_capped(const std::string& args, const std::string& input) {
  std::ofstream(scratch(".in"), std::ios::binary) << input;
  const std::string cmd = "prlimit --as=4000000000 timeout -s KILL 10 " + cli() + " " + args + " < " +
                          scratch(".in") + " > " + scratch(".out") + " 2> " + scratch(".err");
  Outcome o;
  const int status = std::system(cmd.c_str());
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(scratch(".out"));
  o.err = slurp(scratch(".err"));
  return o;
}

std::string chained_comparisons(int n) {
  std::string s = "{{ 1";
  for (int i = 0; i < n; ++i) s += "<1";
  return s + " }}";
}

TEST(CliHostileTemplate, AModelWhoseTemplateCannotBeUsedChatsInTheBuiltInFormat) {
  const std::pair<const char*, std::string> cases[] = {
      {"memory", "{% set s = 'x' * 8000000 %}{% set l = s|list %}{% for m in messages %}{{ l|join }}{% endfor %}"},
      {"time", "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}"},
      {"parse", chained_comparisons(200000)},
      {"syntax", "{% for message in messages %}{{ message.content }"},
  };
  for (const auto& [kind, source] : cases) {
    const std::string model = model_with_template(std::string("hostile-template-") + kind + ".gguf", source);
    const Outcome gen = run_capped("generate --model " + model + " --prompt hello -n 4 --temp 0", "");
    EXPECT_EQ(gen.exit_code, 0) << kind << ": " << gen.err;
    EXPECT_NE(gen.err.find("cannot be used"), std::string::npos) << kind << ": " << gen.err;
    const Outcome chat = run_capped("chat --model " + model + " -n 4 --temp 0", "hello\n/stats\n");
    EXPECT_EQ(chat.exit_code, 0) << kind << ": " << chat.err;
    EXPECT_NE(chat.out.find("turns 1 "), std::string::npos) << kind << ": " << chat.out;
    fs::remove(model);
  }
}

TEST(CliChatInput, AnOverLongLineAndAPromptTooLongAfterResetDoNotEndTheChat) {
  const std::string model = data_path("models/stories260K.gguf");
  std::string input = std::string(2u << 20, 'a') + "\n";  // over the 1 MiB line limit
  input += "Once upon a time\n/reset\n";
  for (int i = 0; i < 40; ++i) input += "The little dog ran to the big park with the ball. ";
  input += "\nLily went home\n/stats\n";
  const Outcome o = run_capped("chat --model " + model + " --ctx 64 -n 4 --temp 0", input);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("longer than the 1 MiB limit"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("[overflow: stopped:"), std::string::npos) << o.err;
  // "Once upon a time" and "Lily went home" were answered; the long turns were not.
  EXPECT_NE(o.out.find("turns 2 "), std::string::npos) << o.out;
}

}  // namespace
}  // namespace hearth::testing
