// hearth-cli serve --backend vulkan --parallel N (lavapipe in CI): the
// Vulkan backend decodes requests together in one forward pass per step
// (continuous batching), and a greedy reply inside such a batch equals the
// reference engine's continuation (tests/data/models/stories260K.greedy-text.txt),
// with the whole model on the GPU and with part of it (partial offload: the
// split pass runs the first layers on Vulkan and the rest on the CPU).
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <future>

#include "serve_process.h"

namespace hearth::testing {
namespace {

using nlohmann::json;

json post(const ServeProcess& server, const json& body) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(300, 0);
  c.set_write_timeout(60, 0);
  c.set_connection_timeout(60, 0);
  auto r = c.Post("/v1/completions", {{"Authorization", "Bearer " + server.key()}}, body.dump(), "application/json");
  if (!r) return {};
  return json::parse(r->body, nullptr, false);
}

void expect_greedy_inside_a_batch(const std::vector<std::string>& args) {
  ServeProcess server(args);
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  // The batched server, not the one-at-a-time fallback.
  EXPECT_NE(server.stderr_text().find("decoded together"), std::string::npos) << server.stderr_text();
  EXPECT_EQ(server.stderr_text().find("one at a time"), std::string::npos) << server.stderr_text();
  const std::string golden = slurp(std::string(HEARTH_TEST_DATA_DIR) + "/models/stories260K.greedy-text.txt");
  const std::string prompt = "Once upon a time";
  const std::vector<std::string> others_prompts = {"Tom had a red ball. He", "The little dog ran to the park and",
                                                   "Anna saw a bird"};
  std::vector<std::future<json>> others;
  for (size_t i = 0; i < others_prompts.size(); ++i) {
    others.push_back(std::async(std::launch::async, [&, i] {
      return post(server, {{"prompt", others_prompts[i]}, {"max_tokens", 58}, {"temperature", 0.8},
                           {"seed", static_cast<int>(i)}});
    }));
  }
  const json j = post(server, {{"prompt", prompt}, {"max_tokens", 58}, {"temperature", 0}});
  ASSERT_TRUE(j.is_object() && j.contains("choices")) << j.dump();
  EXPECT_EQ(j["choices"][0]["text"], golden.substr(prompt.size())) << j.dump();
  EXPECT_EQ(j["usage"]["completion_tokens"], 58);
  for (auto& o : others) EXPECT_EQ(o.get()["usage"]["completion_tokens"], 58);
}

TEST(VulkanBatchedServer, GreedyCompletionEqualsTheReferenceEngineInsideABatch) {
  expect_greedy_inside_a_batch({"--backend", "vulkan", "--parallel", "4"});
}

TEST(VulkanBatchedServer, PartialOffloadBatchesToo) {
  expect_greedy_inside_a_batch({"--backend", "vulkan", "--gpu-layers", "2", "--parallel", "4"});
}

}  // namespace
}  // namespace hearth::testing
