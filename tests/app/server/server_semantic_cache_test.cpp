// hearth-cli serve with the semantic cache over real HTTP: a question the
// embedding model (the tiny BERT fixture, which lowercases) sees as the same as
// one answered before gets the stored reply at once, streamed or not, marked
// by X-Hearth-Cache; another system prompt, another question, a sampled request
// or a model file that changed is answered by the model.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "serve_process.h"

namespace hearth::testing {
namespace {

using nlohmann::json;

std::string embedding_model() { return std::string(HEARTH_TEST_DATA_DIR) + "/embeddings/tiny-bert-f32.gguf"; }

struct Reply {
  std::string text;
  std::string cache;  // X-Hearth-Cache
  int64_t completion_tokens = -1;
};

Reply ask(const ServeProcess& server, const std::string& system, const std::string& question,
          double temperature = 0) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(60, 0);
  const json body = {{"model", "stories260K"},
                     {"max_tokens", 12},
                     {"temperature", temperature},
                     {"messages", json::array({{{"role", "system"}, {"content", system}},
                                               {{"role", "user"}, {"content", question}}})}};
  auto r = c.Post("/v1/chat/completions", {{"Authorization", "Bearer " + server.key()}}, body.dump(),
                  "application/json");
  EXPECT_TRUE(r);
  if (!r) return {};
  EXPECT_EQ(r->status, 200) << r->body;
  const json j = json::parse(r->body, nullptr, false);
  if (!j.is_object() || !j.contains("choices")) return {};
  return {j["choices"][0]["message"]["content"], r->get_header_value("X-Hearth-Cache"),
          j["usage"]["completion_tokens"]};
}

class SemanticCacheServer : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hearth-semantic-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    model_ = dir_ / "stories260K.gguf";
    std::filesystem::copy_file(model_path("stories260K.gguf"), model_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<ServeProcess> start() {
    auto server = std::make_unique<ServeProcess>(
        std::vector<std::string>{"--semantic-cache", (dir_ / "semantic.sqlite3").string(), "--embedding-model",
                                 embedding_model(), "--semantic-threshold", "0.999"},
        model_.string());
    EXPECT_TRUE(server->ok()) << server->stderr_text();
    return server;
  }
  std::filesystem::path dir_;
  std::filesystem::path model_;
};

TEST_F(SemanticCacheServer, TheSameQuestionInOtherWordsIsAnsweredFromTheCacheOnlyInItsContext) {
  auto server = start();
  ASSERT_TRUE(server->ok());
  const Reply first = ask(*server, "Be brief.", "What is the capital of France?");
  EXPECT_TRUE(first.cache.empty());
  ASSERT_FALSE(first.text.empty());
  // Other capitals and spaces: the same tokens to the lowercasing embedder.
  const Reply again = ask(*server, "Be brief.", "what is the CAPITAL of france?");
  EXPECT_EQ(again.cache.rfind("semantic; similarity 1.0", 0), 0u) << again.cache;
  EXPECT_EQ(again.text, first.text);
  EXPECT_EQ(again.completion_tokens, first.completion_tokens);

  // Another system prompt, another question, a sampled request: the model answers.
  EXPECT_TRUE(ask(*server, "Answer in French.", "What is the capital of France?").cache.empty());
  EXPECT_TRUE(ask(*server, "Be brief.", "Tell me about dogs.").cache.empty());
  EXPECT_TRUE(ask(*server, "Be brief.", "What is the capital of France?", 0.8).cache.empty());

  // Streamed: the stored reply as one chunk, then [DONE].
  httplib::Client c("127.0.0.1", server->port());
  const json body = {{"model", "stories260K"}, {"max_tokens", 12}, {"temperature", 0}, {"stream", true},
                     {"messages", json::array({{{"role", "system"}, {"content", "Be brief."}},
                                               {{"role", "user"}, {"content", "What is the capital of France?"}}})}};
  auto r = c.Post("/v1/chat/completions", {{"Authorization", "Bearer " + server->key()}}, body.dump(),
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(r->get_header_value("X-Hearth-Cache").empty());
  std::string streamed;
  size_t at = 0;
  while ((at = r->body.find("data: ", at)) != std::string::npos) {
    const size_t end = r->body.find("\n\n", at);
    const std::string payload = r->body.substr(at + 6, end - at - 6);
    at = end;
    if (payload == "[DONE]") break;
    const json chunk = json::parse(payload, nullptr, false);
    if (chunk.is_object() && chunk["choices"][0]["delta"].contains("content")) {
      streamed += chunk["choices"][0]["delta"]["content"].get<std::string>();
    }
  }
  EXPECT_EQ(streamed, first.text);
  EXPECT_NE(r->body.find("data: [DONE]"), std::string::npos);
}

TEST_F(SemanticCacheServer, AModelFileThatChangedNeverAnswersFromTheCache) {
  {
    auto server = start();
    ASSERT_TRUE(server->ok());
    ask(*server, "Be brief.", "What is the capital of France?");
    EXPECT_FALSE(ask(*server, "Be brief.", "What is the capital of France?").cache.empty());
  }
  // The same file, touched: another version of the model as far as anyone can tell.
  std::filesystem::last_write_time(model_, std::filesystem::last_write_time(model_) + std::chrono::hours(1));
  auto server = start();
  ASSERT_TRUE(server->ok());
  EXPECT_TRUE(ask(*server, "Be brief.", "What is the capital of France?").cache.empty());
}

}  // namespace
}  // namespace hearth::testing
