// hearth-cli chat --overflow and bench-prefix as a user runs them: turns piped
// on stdin (not a terminal), a context far smaller than the chat.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_process.h"

namespace {

using hearth::testing::data_path;
using hearth::testing::cli;
using hearth::testing::slurp;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct ChatRun {
  int status = -1;
  std::string out, err;
};

ChatRun chat(const std::string& policy, int ctx, int turns) {
  const std::string dir = ::testing::TempDir();
  const std::string in = dir + "hearth-chat-" + policy + ".in";
  {
    std::ofstream f(in);
    for (int i = 1; i <= turns; ++i) f << "Tell me about the little dog number " << i << "\n";
    f << "/stats\n";
  }
  ChatRun r;
  const std::string cmd = cli() + " chat --model " + data_path("models/stories260K.gguf") + " --ctx " +
                          std::to_string(ctx) + " --overflow " + policy + " --temp 0 -n 24 < " + in + " > " + dir +
                          "hearth-chat-" + policy + ".out 2> " + dir + "hearth-chat-" + policy + ".err";
  r.status = std::system(cmd.c_str());
  r.out = slurp(dir + "hearth-chat-" + policy + ".out");
  r.err = slurp(dir + "hearth-chat-" + policy + ".err");
  return r;
}

TEST(CliChat, SummarizeKeepsChattingPastTwentyTurnsAndReportsTheSummaries) {
  const ChatRun r = chat("summarize", 256, 24);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(count(r.err, "chat:"), 0u) << r.err;
  EXPECT_GE(count(r.err, "[overflow: summarized turns"), 1u) << r.err;
  EXPECT_NE(r.out.find("turns 24 "), std::string::npos) << r.out;  // /stats: every turn was answered
}

TEST(CliChat, EvictDropsWholeTurnsAndKeepsGoing) {
  const ChatRun r = chat("evict", 256, 24);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GE(count(r.err, "[overflow: evicted turns"), 1u) << r.err;
  EXPECT_NE(r.out.find("turns 24 "), std::string::npos) << r.out;
}

TEST(CliChat, StopSaysWhyAtTheLimit) {
  const ChatRun r = chat("stop", 256, 8);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_GE(count(r.err, "[overflow: stopped: context full"), 1u) << r.err;
}

TEST(CliChat, UnknownPolicyIsAUsageError) {
  const std::string cmd = cli() + " chat --model " + data_path("models/stories260K.gguf") +
                          " --overflow truncate < /dev/null > /dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

// --prefix-cache: the first run computes the system prompt and saves it, the
// second restores all of it from disk (all but the last token, which is
// prefilled for fresh logits) and says so.
TEST(CliChat, PrefixCacheMakesTheSecondRunStartWarm) {
  const std::string dir = ::testing::TempDir() + "hearth-chat-prefix-cache";
  std::filesystem::remove_all(dir);
  const std::string in = ::testing::TempDir() + "hearth-chat-prefix.in";
  {
    std::ofstream f(in);
    f << "Tell me about the dog\n";
  }
  const std::string system = "Once upon a time there was a little girl who liked to tell stories about animals";
  auto run = [&](const std::string& tag) {
    const std::string err = ::testing::TempDir() + "hearth-chat-prefix-" + tag + ".err";
    // A model with a chat template: the system prompt is part of its pinned start.
    const std::string cmd = cli() + " chat --model " + data_path("models/tiny-llama-f32.gguf") + " --system '" + system +
                            "' --prefix-cache " + dir + " --temp 0 -n 8 < " + in + " > /dev/null 2> " + err;
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return slurp(err);
  };
  const std::string first = run("first");
  EXPECT_NE(first.find("[prefix cache: system prompt ("), std::string::npos) << first;
  EXPECT_NE(first.find("computed and saved]"), std::string::npos) << first;
  const std::string second = run("second");
  // Restored: every token but the last of the pinned start, whose length the first run printed.
  const auto at = first.find("system prompt (") + 15;
  const long long whole = std::stoll(first.substr(at));
  EXPECT_NE(second.find("[prefix cache: " + std::to_string(whole - 1) + " of " + std::to_string(whole) +
                        " system prompt tokens restored from disk]"),
            std::string::npos)
      << second;
  std::filesystem::remove_all(dir);
}

TEST(CliBenchPrefix, JsonHasTheContractKeysAndRestoresTheSystemPromptFromDisk) {
  const std::string out = ::testing::TempDir() + "bench-prefix.json";
  const std::string cmd = cli() + " bench-prefix --model " + data_path("models/stories260K.gguf") +
                          " --system-tokens 100 --json > " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto j = nlohmann::json::parse(slurp(out));
  for (const char* key : {"model", "system_tokens", "ttft_cold_ms", "ttft_warm_ms", "ttft_disk_ms"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["system_tokens"], 100);
  EXPECT_EQ(j["disk_restored_tokens"], 100);
  EXPECT_GT(j["ttft_cold_ms"].get<double>(), 0.0);
}

}  // namespace
