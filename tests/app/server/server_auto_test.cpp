// hearth-cli serve with a second, large model over real HTTP: the "auto"
// model answers each request with the small model (the bundled TinyStories
// model) or the large one (the tiny llama fixture), as the app's Auto model
// decides: rules first, then the small model's probe. The reply routed to a
// model equals what that model says when named directly; the X-Hearth-Route
// header and /health say where requests went.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "serve_process.h"

namespace hearth::testing {
namespace {

using nlohmann::json;

class AutoServer : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServeProcess>(std::vector<std::string>{
        "--large-model", model_path("tiny-llama-f32.gguf"), "--route-min-familiarity", "-4", "--route-min-confidence",
        "-2.5"});
    ASSERT_TRUE(server_->ok()) << server_->stderr_text();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(60, 0);
    c.set_connection_timeout(30, 0);
    return c;
  }
  httplib::Headers auth() const { return {{"Authorization", "Bearer " + server_->key()}}; }
  struct Reply {
    std::string model;
    std::string text;
    std::string route;  // X-Hearth-Route
  };
  Reply ask(const std::string& model, const std::string& message) {
    const json body = {{"model", model},
                       {"max_tokens", 16},
                       {"temperature", 0},
                       {"messages", json::array({{{"role", "user"}, {"content", message}}})}};
    auto c = client();
    auto r = c.Post("/v1/chat/completions", auth(), body.dump(), "application/json");
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << r->body;
    const json j = json::parse(r->body, nullptr, false);
    if (!j.is_object() || !j.contains("choices")) return {};
    return {j["model"], j["choices"][0]["message"]["content"], r->get_header_value("X-Hearth-Route")};
  }
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(AutoServer, ListsBothModelsAndAuto) {
  auto c = client();
  auto r = c.Get("/v1/models", auth());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const auto j = json::parse(r->body);
  ASSERT_EQ(j["data"].size(), 3u);
  EXPECT_EQ(j["data"][0]["id"], "stories260K");
  EXPECT_EQ(j["data"][1]["id"], "tiny-llama-f32");
  EXPECT_EQ(j["data"][2]["id"], "auto");
  // A model that is not served is refused with the list.
  const json body = {{"model", "gpt-4"}, {"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}};
  auto refused = c.Post("/v1/chat/completions", auth(), body.dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 404);
  EXPECT_NE(refused->body.find("'stories260K', 'tiny-llama-f32', 'auto'"), std::string::npos) << refused->body;
}

TEST_F(AutoServer, AScriptedMixGoesToTheExpectedModelsAndEachAnswersAsItself) {
  struct Case {
    std::string message;
    std::string model;
    std::string why;
  };
  const Case cases[] = {
      {"Once upon a time, there was a little girl named Lily.", "stories260K", "small model confident"},
      {"Lily saw a big dog in the park.", "stories260K", "small model confident"},
      {"qzv xjw kpq 8841 vvxq zzkj wqpx jjq 0x7f3e qqzx", "tiny-llama-f32", "question unfamiliar"},
      {"Der Quantencomputer berechnet die Eigenwerte der Matrix.", "tiny-llama-f32", "question unfamiliar"},
      {"Fix this:\n```python\nprint(1\n```", "tiny-llama-f32", "code block"},
  };
  int large = 0;
  for (const Case& c : cases) {
    const Reply routed = ask("auto", c.message);
    std::printf("[ route ] %s  <- %s\n", routed.route.c_str(), c.message.substr(0, 40).c_str());
    EXPECT_EQ(routed.model, c.model) << c.message;
    EXPECT_NE(routed.route.find(c.why), std::string::npos) << routed.route;
    // The routed reply is the chosen model's own reply to the same request.
    const Reply direct = ask(c.model, c.message);
    EXPECT_EQ(routed.text, direct.text) << c.message;
    EXPECT_TRUE(direct.route.empty());  // named directly: no routing
    large += c.model == "tiny-llama-f32";
  }
  auto cl = client();
  auto health = cl.Get("/health", auth());
  ASSERT_TRUE(health);
  const json h = json::parse(health->body);
  EXPECT_EQ(h["routed"]["large"], large);
  EXPECT_EQ(h["routed"]["small"], static_cast<int>(std::size(cases)) - large);
}

}  // namespace
}  // namespace hearth::testing
