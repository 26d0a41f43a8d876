// hearth-cli serve --parallel N: requests decoded together by the engine's
// continuous-batching scheduler. Greedy replies of concurrent, staggered
// streams equal what the same prompts get alone from the one-at-a-time
// server (a separate code path: one runtime::Session), and equal the
// reference engine's continuation; stop strings, logprobs, the JSON grammar
// and a client hanging up behave per request inside a shared batch.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <future>
#include <thread>

#include "serve_process.h"

namespace hearth::testing {
namespace {

using nlohmann::json;

json post(const ServeProcess& server, const std::string& path, const json& body, int* status = nullptr) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_read_timeout(300, 0);
  c.set_write_timeout(60, 0);
  c.set_connection_timeout(60, 0);
  auto r = c.Post(path, {{"Authorization", "Bearer " + server.key()}}, body.dump(), "application/json");
  if (status) *status = r ? r->status : -1;
  if (!r) return {};
  return json::parse(r->body, nullptr, false);
}

json health(const ServeProcess& server) {
  httplib::Client c("127.0.0.1", server.port());
  auto r = c.Get("/health", {{"Authorization", "Bearer " + server.key()}});
  return r && r->status == 200 ? json::parse(r->body) : json();
}

// Eight story openings of different lengths (different prompt lengths put
// the sequences at different positions in every batch).
const std::vector<std::string> kPrompts = {
    "Once upon a time",
    "Tom had a red ball. He",
    "The little dog ran to the park and",
    "One day, Lily found a big box in her room. She",
    "Sam and his mom went to the store",
    "There was a cat who liked to sleep in the sun. One day",
    "Anna saw a bird",
    "The sun was hot and the kids wanted to play in the water, so they",
};

json completion_request(const std::string& prompt, int max_tokens) {
  return {{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"logprobs", 0}};
}

std::vector<std::string> tokens_of(const json& reply) {
  std::vector<std::string> out;
  for (const auto& t : reply["choices"][0]["logprobs"]["tokens"]) out.push_back(t.get<std::string>());
  return out;
}

TEST(BatchedServer, StaggeredConcurrentStreamsEqualTheirSoloRuns) {
  constexpr int kTokens = 64;
  // Solo: the one-at-a-time server, each prompt alone.
  std::vector<json> solo;
  {
    ServeProcess single({"--parallel", "1"});
    ASSERT_TRUE(single.ok()) << single.stderr_text();
    for (const auto& p : kPrompts) {
      int status = 0;
      solo.push_back(post(single, "/v1/completions", completion_request(p, kTokens), &status));
      ASSERT_EQ(status, 200) << solo.back().dump();
    }
  }
  ServeProcess batched({"--parallel", "8", "--max-batch-tokens", "64"});
  ASSERT_TRUE(batched.ok()) << batched.stderr_text();
  EXPECT_NE(batched.stderr_text().find("decoded together"), std::string::npos) << batched.stderr_text();
  std::vector<std::future<json>> replies;
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    // Staggered: later requests join a batch that is already decoding.
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
    replies.push_back(std::async(std::launch::async, [&, i] {
      return post(batched, "/v1/completions", completion_request(kPrompts[i], kTokens));
    }));
  }
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    SCOPED_TRACE(kPrompts[i]);
    const json got = replies[i].get();
    ASSERT_TRUE(got.is_object() && got.contains("choices")) << got.dump();
    EXPECT_EQ(tokens_of(got), tokens_of(solo[i]));
    EXPECT_EQ(got["choices"][0]["text"], solo[i]["choices"][0]["text"]);
    EXPECT_EQ(got["choices"][0]["finish_reason"], solo[i]["choices"][0]["finish_reason"]);
    EXPECT_EQ(got["usage"]["completion_tokens"], solo[i]["usage"]["completion_tokens"]);
    EXPECT_EQ(got["usage"]["prompt_tokens"], solo[i]["usage"]["prompt_tokens"]);
  }
  EXPECT_EQ(health(batched)["pending"], 0);
}

// A plain request (no logprobs, no grammar) is drawn by the scheduler's own
// sampler, which masks ignore_eos's end tokens in its logits row; the
// one-at-a-time server draws through TokenChooser, which masks them in a
// copy. With the same seed both draw the same reply, to max_tokens.
TEST(BatchedServer, PlainSampledRepliesEqualTheSoloServers) {
  constexpr int kTokens = 200;
  const json request = {{"prompt", "Once upon a time"}, {"max_tokens", kTokens}, {"temperature", 1.0},
                        {"seed", 11},           {"ignore_eos", true}};
  json solo;
  {
    ServeProcess single({"--parallel", "1"});
    ASSERT_TRUE(single.ok()) << single.stderr_text();
    int status = 0;
    solo = post(single, "/v1/completions", request, &status);
    ASSERT_EQ(status, 200) << solo.dump();
  }
  ServeProcess batched({"--parallel", "4"});
  ASSERT_TRUE(batched.ok()) << batched.stderr_text();
  int status = 0;
  const json got = post(batched, "/v1/completions", request, &status);
  ASSERT_EQ(status, 200) << got.dump();
  EXPECT_EQ(got["usage"]["completion_tokens"], kTokens);
  EXPECT_EQ(solo["usage"]["completion_tokens"], kTokens);
  EXPECT_EQ(got["choices"][0]["text"], solo["choices"][0]["text"]);
  // A different seed draws a different reply (the seed is what matched them).
  json other = request;
  other["seed"] = 12;
  const json differs = post(batched, "/v1/completions", other, &status);
  ASSERT_EQ(status, 200) << differs.dump();
  EXPECT_NE(differs["choices"][0]["text"], got["choices"][0]["text"]);
}

// serve --spec ngram: requests without logprobs or a grammar draft their
// next tokens from the context and verify them in the batch's free rows.
// Greedy replies stay exactly what plain decoding gives: the reference
// engine's continuation, and the same prompt's reply in the same server when
// logprobs (which turn drafting off for that request) are asked for.
TEST(SpeculatingServer, DraftedRepliesEqualPlainOnesAndTheReference) {
  ServeProcess server({"--parallel", "4", "--spec", "ngram", "--draft-fixed", "--draft-max", "4"});
  ASSERT_TRUE(server.ok()) << server.stderr_text();
  EXPECT_NE(server.stderr_text().find("speculative decoding per request"), std::string::npos) << server.stderr_text();
  const std::string golden = slurp(std::string(HEARTH_TEST_DATA_DIR) + "/models/stories260K.greedy-text.txt");
  const std::string opening = "Once upon a time";
  constexpr int kTokens = 48;
  auto greedy = [](const std::string& prompt, int max_tokens, bool logprobs) {
    json body = {{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}};
    if (logprobs) body["logprobs"] = 0;
    return body;
  };
  auto reference = std::async(std::launch::async, [&] { return post(server, "/v1/completions", greedy(opening, 58, false)); });
  std::vector<std::future<json>> drafted, plain;
  for (size_t i = 1; i <= 3; ++i) {
    drafted.push_back(std::async(std::launch::async, [&, i] {
      return post(server, "/v1/completions", greedy(kPrompts[i], kTokens, false));
    }));
    plain.push_back(std::async(std::launch::async, [&, i] {
      return post(server, "/v1/completions", greedy(kPrompts[i], kTokens, true));
    }));
  }
  const json ref = reference.get();
  EXPECT_EQ(ref["choices"][0]["text"], golden.substr(opening.size())) << ref.dump();
  for (size_t i = 0; i < drafted.size(); ++i) {
    SCOPED_TRACE(kPrompts[i + 1]);
    const json a = drafted[i].get();
    const json b = plain[i].get();
    ASSERT_TRUE(a.contains("choices") && b.contains("choices")) << a.dump() << b.dump();
    EXPECT_EQ(a["choices"][0]["text"], b["choices"][0]["text"]);
    EXPECT_EQ(a["usage"]["completion_tokens"], b["usage"]["completion_tokens"]);
    EXPECT_EQ(a["choices"][0]["finish_reason"], b["choices"][0]["finish_reason"]);
  }
  const json h = health(server);
  ASSERT_TRUE(h.contains("speculation")) << h.dump();
  EXPECT_EQ(h["speculation"]["requests"], 4);  // the requests without logprobs
  EXPECT_GT(h["speculation"]["drafted"].get<int64_t>(), 0);
  EXPECT_GT(h["speculation"]["accepted"].get<int64_t>(), 0);
}

class Batched : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServeProcess>(std::vector<std::string>{"--parallel", "4"});
    ASSERT_TRUE(server_->ok()) << server_->stderr_text();
  }
  std::unique_ptr<ServeProcess> server_;
};

// The reference engine's greedy continuation of "Once upon a time"
// (tests/data/models/stories260K.greedy-text.txt), while three other
// requests share every step.
TEST_F(Batched, GreedyCompletionEqualsTheReferenceEngineInsideABatch) {
  const std::string golden = slurp(std::string(HEARTH_TEST_DATA_DIR) + "/models/stories260K.greedy-text.txt");
  const std::string prompt = "Once upon a time";
  std::vector<std::future<json>> others;
  for (int i = 1; i <= 3; ++i) {
    others.push_back(std::async(std::launch::async, [&, i] {
      return post(*server_, "/v1/completions", {{"prompt", kPrompts[static_cast<size_t>(i)]}, {"max_tokens", 58},
                                                {"temperature", 0.8}, {"seed", i}});
    }));
  }
  const json j = post(*server_, "/v1/completions", {{"prompt", prompt}, {"max_tokens", 58}, {"temperature", 0}});
  EXPECT_EQ(j["choices"][0]["text"], golden.substr(prompt.size())) << j.dump();
  EXPECT_EQ(j["usage"]["completion_tokens"], 58);
  for (auto& o : others) EXPECT_EQ(o.get()["usage"]["completion_tokens"], 58);
}

TEST_F(Batched, StopStringsAndJsonGrammarHoldPerRequest) {
  const std::string golden = slurp(std::string(HEARTH_TEST_DATA_DIR) + "/models/stories260K.greedy-text.txt");
  const std::string continuation = golden.substr(16);
  auto stopped = std::async(std::launch::async, [&] {
    return post(*server_, "/v1/completions",
                {{"prompt", "Once upon a time"}, {"max_tokens", 58}, {"temperature", 0}, {"stop", "Lily"}});
  });
  std::vector<std::future<json>> objects;
  for (int i = 0; i < 3; ++i) {
    objects.push_back(std::async(std::launch::async, [&, i] {
      return post(*server_, "/v1/chat/completions",
                  {{"messages", {{{"role", "user"}, {"content", kPrompts[static_cast<size_t>(i)]}}}},
                   {"max_tokens", 120}, {"temperature", 0.9}, {"seed", 7 + i},
                   {"response_format", {{"type", "json_object"}}}});
    }));
  }
  const json s = stopped.get();
  EXPECT_EQ(s["choices"][0]["text"], continuation.substr(0, continuation.find("Lily")));
  EXPECT_EQ(s["choices"][0]["finish_reason"], "stop");
  for (auto& o : objects) {
    const json j = o.get();
    ASSERT_TRUE(j.contains("choices")) << j.dump();
    const std::string content = j["choices"][0]["message"]["content"].get<std::string>();
    if (j["choices"][0]["finish_reason"] == "stop") {
      const json parsed = json::parse(content, nullptr, false);
      EXPECT_TRUE(parsed.is_object()) << content;
    } else {
      // Cut by max_tokens: still a prefix of an object (after optional whitespace).
      EXPECT_EQ(content.find_first_not_of(" \n\t"), content.find('{')) << content;
      EXPECT_NE(content.find('{'), std::string::npos) << content;
    }
  }
}

TEST_F(Batched, TooLongPromptIsRefusedAndTheBatchGoesOn) {
  std::string huge;
  for (int i = 0; i < 400; ++i) huge += "the dog ran and ";
  int status = 0;
  const json e = post(*server_, "/v1/completions", {{"prompt", huge}, {"max_tokens", 4}}, &status);
  EXPECT_EQ(status, 400) << e.dump();
  EXPECT_EQ(e["error"]["code"], "context_length_exceeded");
  const json ok = post(*server_, "/v1/completions", {{"prompt", std::vector<int>{1, 400, 401}}, {"max_tokens", 3},
                                                     {"temperature", 0}, {"ignore_eos", true}}, &status);
  EXPECT_EQ(status, 200) << ok.dump();
  EXPECT_EQ(ok["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(ok["usage"]["completion_tokens"], 3);
  const json bad = post(*server_, "/v1/completions", {{"prompt", std::vector<int>{1, 99999999}}, {"max_tokens", 3}},
                        &status);
  EXPECT_EQ(status, 400) << bad.dump();
  EXPECT_NE(bad["error"]["message"].get<std::string>().find("outside the vocabulary"), std::string::npos);
}

TEST_F(Batched, AbandonedStreamLeavesTheBatch) {
  // A streaming request whose client disconnects after the first chunk.
  {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(120, 0);
    int chunks = 0;
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.headers = {{"Authorization", "Bearer " + server_->key()}, {"Content-Type", "application/json"}};
    req.body = json{{"prompt", "Once"}, {"max_tokens", 400}, {"ignore_eos", true}, {"stream", true}}.dump();
    req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 2; };
    (void)c.send(req);
    EXPECT_GE(chunks, 1);
  }
  bool cancelled = false;
  for (int i = 0; i < 1200 && !cancelled; ++i) {
    const json h = health(*server_);
    cancelled = h.is_object() && h["cancelled"].get<int64_t>() >= 1 && h["pending"] == 0;
    if (!cancelled) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(cancelled) << health(*server_).dump();
  const json j = post(*server_, "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 3}, {"temperature", 0}});
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
}

}  // namespace
}  // namespace hearth::testing
