// The official OpenAI SDK (npm 'openai', run with node) against hearth-cli
// serve: it lists the model and streams a greedy chat completion whose text
// equals the engine's chat layer (hearth-cli chat) on the same conversation.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve_process.h"

namespace hearth::testing {
namespace {

const std::string kNodeDir = std::string(HEARTH_SOURCE_DIR) + "/tests/app/server/node";

TEST(OpenAiSdk, ListsModelsAndStreamsAChatCompletion) {
  ASSERT_TRUE(std::filesystem::exists(kNodeDir + "/node_modules/openai/package.json"))
      << "the OpenAI SDK is not installed; run packaging/install-deps.sh (npm ci in " << kNodeDir << ")";
  ServeProcess server;
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  const std::string message = "Tom had a red ball.";
  const auto [out, status] =
      run_command("cd '" + kNodeDir + "' && HEARTH_BASE_URL='" + server.base_url() + "/v1' HEARTH_API_KEY='" +
                  server.key() + "' HEARTH_MESSAGE='" + message + "' node sdk_test.mjs");
  ASSERT_EQ(status, 0) << out;
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_EQ(j["models"], nlohmann::json::array({"stories260K"}));
  EXPECT_EQ(j["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 40);
  EXPECT_GT(j["chunks"].get<int>(), 2);
  EXPECT_EQ(j["bad_key_status"], 401);

  // The engine's chat layer on the same conversation, greedy.
  const auto [chat, chat_status] = run_command("printf '%s\\n' '" + message + "' | " + cli() + " chat --model " +
                                               model_path("stories260K.gguf") + " --temp 0 -n 40 --ctx 512 2>/dev/null");
  ASSERT_EQ(chat_status, 0);
  ASSERT_EQ(chat.rfind("> ", 0), 0u) << chat;
  EXPECT_EQ(j["text"], chat.substr(2, chat.rfind("\n> ") - 2));
}

}  // namespace
}  // namespace hearth::testing
