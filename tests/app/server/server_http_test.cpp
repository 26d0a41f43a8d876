// hearth-cli serve over real HTTP on loopback: the endpoints, the OpenAI
// shapes, greedy output against the reference engine and the chat layer, and
// hostile clients (bad JSON and types, a 20 MiB body, a bad token, a foreign
// Host and Origin, 200 connections at once, a slowloris client), each
// answered with its status while /health stays OK.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstring>
#include <thread>

#include "serve_process.h"

namespace hearth::testing {
namespace {

using nlohmann::json;

class Server : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServeProcess>(extra_args());
    ASSERT_TRUE(server_->ok()) << server_->stderr_text();
  }
  virtual std::vector<std::string> extra_args() { return {}; }

  httplib::Client client() const {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(60, 0);
    c.set_write_timeout(60, 0);
    c.set_connection_timeout(30, 0);
    return c;
  }
  httplib::Headers auth() const { return {{"Authorization", "Bearer " + server_->key()}}; }

  httplib::Result post(const std::string& path, const std::string& body, httplib::Headers headers = {}) {
    if (headers.empty()) headers = auth();
    auto c = client();
    return c.Post(path, headers, body, "application/json");
  }
  json post_json(const std::string& path, const json& body) {
    auto r = post(path, body.dump());
    EXPECT_TRUE(r) << "no response";
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body, nullptr, false);
  }
  void expect_healthy() {
    auto c = client();
    auto r = c.Get("/health", auth());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(json::parse(r->body)["status"], "ok");
  }
  void expect_error(const httplib::Result& r, int status, const std::string& in_message) {
    ASSERT_TRUE(r) << "no response";
    EXPECT_EQ(r->status, status) << r->body;
    const auto j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_TRUE(j["error"].contains("type") && j["error"].contains("param") && j["error"].contains("code"));
    EXPECT_NE(j["error"]["message"].get<std::string>().find(in_message), std::string::npos) << r->body;
  }

  std::unique_ptr<ServeProcess> server_;
};

TEST_F(Server, ListsTheOneModel) {
  auto c = client();
  auto r = c.Get("/v1/models", auth());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const auto j = json::parse(r->body);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "stories260K");
  EXPECT_EQ(j["data"][0]["object"], "model");
  EXPECT_EQ(server_->host(), "127.0.0.1");
}

// The reference engine's greedy continuation of "Once upon a time"
// (tests/data/models/stories260K.greedy-text.txt, 58 tokens).
TEST_F(Server, GreedyCompletionEqualsTheReferenceEngine) {
  const std::string golden = slurp(std::string(HEARTH_TEST_DATA_DIR) + "/models/stories260K.greedy-text.txt");
  const std::string prompt = "Once upon a time";
  ASSERT_EQ(golden.rfind(prompt, 0), 0u);
  const auto j = post_json("/v1/completions", {{"model", "stories260K"}, {"prompt", prompt}, {"max_tokens", 58},
                                               {"temperature", 0}, {"logprobs", 2}});
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], golden.substr(prompt.size()));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);  // BOS + 4 (stories260K.prompt-tokens.txt)
  EXPECT_EQ(j["usage"]["completion_tokens"], 58);
  EXPECT_EQ(j["usage"]["total_tokens"], 63);
  const auto& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 58u);
  for (size_t i = 0; i < 58; ++i) {
    // Greedy: the chosen token is the most likely one, so it leads the alternatives.
    const float chosen = lp["token_logprobs"][i].get<float>();
    EXPECT_LE(chosen, 0.0f);
    float best = -1e30f;
    for (const auto& [tok, v] : lp["top_logprobs"][i].items()) best = std::max(best, v.get<float>());
    EXPECT_FLOAT_EQ(chosen, best) << i;
  }
  // The same prompt again reuses its KV (all but the last prompt token).
  const auto again = post_json("/v1/completions", {{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}});
  EXPECT_EQ(again["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
}

// The chat reply equals what the engine's chat layer (hearth-cli chat, i.e.
// runtime::ChatContext) says to the same conversation.
TEST_F(Server, GreedyChatEqualsTheChatLayer) {
  const std::string message = "Tom had a red ball.";
  const auto [out, status] = run_command("printf '%s\\n' '" + message + "' | " + cli() + " chat --model " +
                                         model_path("stories260K.gguf") + " --temp 0 -n 40 --ctx 512 2>/dev/null");
  ASSERT_EQ(status, 0);
  // "> " + reply + "\n" + "> " at the end of the input.
  ASSERT_EQ(out.rfind("> ", 0), 0u) << out;
  const std::string reply = out.substr(2, out.rfind("\n> ") - 2);
  ASSERT_FALSE(reply.empty());
  const auto j = post_json("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", message}}}},
                                                    {"max_tokens", 40}, {"temperature", 0}});
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], reply);
  EXPECT_TRUE(j["usage"]["prompt_tokens"].get<int>() > 0);
}

TEST_F(Server, StopStringsEndTheReplyBeforeThem) {
  const std::string golden = slurp(std::string(HEARTH_TEST_DATA_DIR) + "/models/stories260K.greedy-text.txt");
  const auto j = post_json("/v1/completions",
                           {{"prompt", "Once upon a time"}, {"max_tokens", 58}, {"temperature", 0}, {"stop", "Lily"}});
  const std::string continuation = golden.substr(16);
  EXPECT_EQ(j["choices"][0]["text"], continuation.substr(0, continuation.find("Lily")));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
}

TEST_F(Server, StreamsSseEndingInDoneWithUsage) {
  auto c = client();
  std::string body;
  const json req = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 8}, {"temperature", 0},
                    {"stream", true}, {"stream_options", {{"include_usage", true}}}};
  auto r = c.Post("/v1/chat/completions", auth(), req.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_NE(r->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  body = r->body;
  ASSERT_GE(body.size(), 14u);
  EXPECT_EQ(body.substr(body.size() - 14), "data: [DONE]\n\n");
  std::string text;
  bool saw_usage = false, saw_finish = false;
  size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const size_t end = body.find("\n\n", pos);
    const std::string payload = body.substr(pos + 6, end - pos - 6);
    pos = end;
    if (payload == "[DONE]") break;
    const auto chunk = json::parse(payload);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    if (chunk.contains("usage")) {
      saw_usage = true;
      EXPECT_EQ(chunk["usage"]["completion_tokens"], 8);
      EXPECT_TRUE(chunk["choices"].empty());
      continue;
    }
    const auto& choice = chunk["choices"][0];
    if (choice["delta"].contains("content")) text += choice["delta"]["content"].get<std::string>();
    if (!choice["finish_reason"].is_null()) {
      saw_finish = true;
      EXPECT_EQ(choice["finish_reason"], "length");
    }
  }
  EXPECT_TRUE(saw_usage);
  EXPECT_TRUE(saw_finish);
  // The same request without streaming says the same.
  json plain = req;
  plain.erase("stream");
  plain.erase("stream_options");
  EXPECT_EQ(post_json("/v1/chat/completions", plain)["choices"][0]["message"]["content"], text);
}

TEST_F(Server, CurlShowsServerSentEvents) {
  const std::string body = R"({"prompt": "Once upon a time", "max_tokens": 5, "temperature": 0, "stream": true})";
  const auto [out, status] =
      run_command("curl -sS -N --max-time 120 -H 'Authorization: Bearer " + server_->key() +
                  "' -H 'Content-Type: application/json' -d '" + body + "' " + server_->base_url() + "/v1/completions");
  ASSERT_EQ(status, 0) << out;
  ASSERT_EQ(out.rfind("data: {", 0), 0u) << out;
  EXPECT_NE(out.find("\"object\":\"text_completion\""), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 14), "data: [DONE]\n\n");
}

TEST_F(Server, JsonObjectResponsesParse) {
  const auto j = post_json("/v1/chat/completions",
                           {{"messages", {{{"role", "user"}, {"content", "Give me JSON"}}}}, {"max_tokens", 120},
                            {"temperature", 0.9}, {"seed", 3}, {"response_format", {{"type", "json_object"}}}});
  const std::string content = j["choices"][0]["message"]["content"];
  if (j["choices"][0]["finish_reason"] == "stop") {
    EXPECT_TRUE(json::parse(content, nullptr, false).is_object()) << content;
  } else {
    // Cut by max_tokens: still a prefix of an object.
    EXPECT_EQ(content.find_first_not_of(" \n\t"), content.find('{')) << content;
  }
  json request = json::parse(R"({
    "messages": [{"role": "user", "content": "Pick"}], "max_tokens": 200, "temperature": 0,
    "response_format": {"type": "json_schema", "json_schema": {"name": "pick", "schema": {
      "type": "object", "properties": {"c": {"enum": ["red", "blue"]}}, "required": ["c"]}}}})");
  // Whitespace between JSON tokens is bounded, so the one key and its enum
  // value fit in 200 tokens even one character per token: the reply ends.
  const auto s = post_json("/v1/chat/completions", request);
  const auto parsed = json::parse(s["choices"][0]["message"]["content"].get<std::string>(), nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << s.dump();
  EXPECT_TRUE(parsed["c"] == "red" || parsed["c"] == "blue") << parsed.dump();
  EXPECT_EQ(s["choices"][0]["finish_reason"], "stop");
}

TEST_F(Server, BadBodiesGetOpenAiErrors) {
  expect_error(post("/v1/chat/completions", "{\"messages\": [1,"), 400, "not valid JSON");
  expect_error(post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": "ten"})"),
               400, "'max_tokens' must be an integer");
  expect_error(post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}], "n": 3})"), 400, "n = 1");
  expect_error(post("/v1/completions", R"({"prompt": "x", "model": "/etc/passwd"})"), 404, "not served here");
  // max_tokens past the context is capped, a prompt past it refused.
  std::string long_prompt;
  for (int i = 0; i < 600; ++i) long_prompt += "Tom ";
  expect_error(post("/v1/completions", json{{"prompt", long_prompt}}.dump()), 400, "the context holds 512");
  const auto capped = post_json("/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 100000}, {"temperature", 0}});
  EXPECT_LE(capped["usage"]["total_tokens"].get<int>(), 512);
  auto c = client();
  auto r = c.Get("/v1/nothing", auth());
  expect_error(r, 404, "no endpoint");
  expect_healthy();
}

TEST_F(Server, TwentyMebibyteBodyIs413) {
  const std::string big(20u << 20, 'a');
  expect_error(post("/v1/chat/completions", big), 413, "8 MiB");
  expect_healthy();
}

TEST_F(Server, EveryRequestNeedsTheToken) {
  auto c = client();
  for (const auto& headers : {httplib::Headers{}, httplib::Headers{{"Authorization", "Bearer wrong"}},
                              httplib::Headers{{"Authorization", "Bearer " + server_->key() + "x"}}}) {
    auto r = c.Get("/health", headers);
    expect_error(r, 401, "API key");
    EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
    expect_error(post("/v1/completions", R"({"prompt": "x"})", headers.empty() ? httplib::Headers{{"X", "y"}} : headers),
                 401, "API key");
  }
  expect_healthy();
}

TEST_F(Server, ForeignHostAndOriginAreRefused) {
  auto c = client();
  auto headers = auth();
  headers.emplace("Host", "attacker.example:" + std::to_string(server_->port()));
  expect_error(c.Get("/v1/models", headers), 403, "Host header");
  headers = auth();
  headers.emplace("Origin", "http://attacker.example");
  expect_error(c.Get("/v1/models", headers), 403, "origin");
  auto r = c.Get("/v1/models", headers);
  EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
  // A preflight from a foreign origin learns nothing either.
  httplib::Headers pre = {{"Origin", "http://attacker.example"}, {"Access-Control-Request-Method", "POST"}};
  r = c.Options("/v1/chat/completions", pre);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
  EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
  expect_healthy();
}

class CorsServer : public Server {
  std::vector<std::string> extra_args() override { return {"--cors-origin", "http://localhost:3000"}; }
};

TEST_F(CorsServer, ListedOriginGetsCorsHeaders) {
  auto c = client();
  httplib::Headers pre = {{"Origin", "http://localhost:3000"}, {"Access-Control-Request-Method", "POST"}};
  auto r = c.Options("/v1/chat/completions", pre);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://localhost:3000");
  auto headers = auth();
  headers.emplace("Origin", "http://localhost:3000");
  r = c.Get("/v1/models", headers);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "http://localhost:3000");
  headers = auth();
  headers.emplace("Origin", "http://localhost:3001");
  expect_error(c.Get("/v1/models", headers), 403, "origin");
}

int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{120, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// Reads a whole response (the server closes after each) and returns its status.
int read_status(int fd, std::string* whole = nullptr) {
  std::string got;
  char buf[4096];
  ssize_t n = 0;
  while ((n = recv(fd, buf, sizeof buf, 0)) > 0) got.append(buf, static_cast<size_t>(n));
  if (n < 0) got += std::string("[recv: ") + std::strerror(errno) + "]";
  if (whole) *whole = got;
  if (got.rfind("HTTP/1.1 ", 0) != 0) return -1;
  return std::stoi(got.substr(9, 3));
}

TEST_F(Server, TwoHundredConnectionsAtOnceEachGetAnAnswer) {
  constexpr int kClients = 200;
  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    const int fd = connect_to(server_->port());
    ASSERT_GE(fd, 0) << i;
    fds.push_back(fd);
  }
  // Every connection is open before any request goes out.
  const std::string request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + server_->key() +
                              "\r\nConnection: close\r\n\r\n";
  for (int fd : fds) ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  int ok = 0, busy = 0;
  for (int fd : fds) {
    std::string whole;
    const int status = read_status(fd, &whole);
    close(fd);
    if (status == 200) {
      ++ok;
    } else {
      // Past the connection cap: 503 with Retry-After, nothing else.
      EXPECT_EQ(status, 503) << whole;
      EXPECT_NE(whole.find("Retry-After: 1"), std::string::npos) << whole;
      ++busy;
    }
  }
  EXPECT_EQ(ok + busy, kClients);
  EXPECT_GT(ok, 0);
  expect_healthy();
}

TEST_F(Server, SlowlorisClientIsCutOffAtTheRequestDeadline) {
  // Sends a header byte every 2 s (within the 5 s read timeout, so only the
  // request deadline of 10 s can end it) and checks the server hangs up.
  const int fd = connect_to(server_->port());
  ASSERT_GE(fd, 0);
  const std::string head = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  ASSERT_GT(send(fd, head.data(), head.size(), MSG_NOSIGNAL), 0);
  bool cut = false;
  for (int i = 0; i < 60 && !cut; ++i) {  // at most 120 s: far past the deadline
    std::this_thread::sleep_for(std::chrono::seconds(2));
    if (send(fd, "a", 1, MSG_NOSIGNAL) != 1) cut = true;
    char c;
    const ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) cut = true;
  }
  close(fd);
  EXPECT_TRUE(cut);
  expect_healthy();
}

// A context of 4096 leaves a reply thousands of tokens of room, far more
// than the tiny model makes before the server sees the hang-up (the next
// write of the stream fails; the monitor sees a non-stream client close).
class LongContextServer : public Server {
  std::vector<std::string> extra_args() override { return {"--ctx", "4096"}; }
};

json health(const ServeProcess& server) {
  httplib::Client c("127.0.0.1", server.port());
  auto r = c.Get("/health", {{"Authorization", "Bearer " + server.key()}});
  return r && r->status == 200 ? json::parse(r->body) : json();
}

// Waits (up to a generous 120 s) until /health says `key` reached `value`
// (and, with `idle`, that nothing is queued or running).
bool wait_for_health(const ServeProcess& server, const char* key, int64_t value, bool idle) {
  for (int i = 0; i < 1200; ++i) {
    const json h = health(server);
    if (h.is_object() && h[key].get<int64_t>() >= value && (!idle || h["pending"] == 0)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_F(LongContextServer, ClientThatHangsUpCancelsItsGeneration) {
  for (const bool stream : {true, false}) {
    SCOPED_TRACE(stream ? "stream" : "whole response");
    const int fd = connect_to(server_->port());
    ASSERT_GE(fd, 0);
    const std::string body = json{{"prompt", "Once"}, {"temperature", 1}, {"stream", stream}}.dump();
    const std::string request = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
                                server_->key() + "\r\nContent-Type: application/json\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
    if (stream) {
      char buf[64];
      ASSERT_GT(recv(fd, buf, sizeof buf, 0), 0);  // the stream has begun
    } else {
      ASSERT_TRUE(wait_for_health(*server_, "served", 2, false));  // the request reached its handler
    }
    close(fd);
    ASSERT_TRUE(wait_for_health(*server_, "cancelled", stream ? 1 : 2, true)) << health(*server_).dump();
  }
  // The queue is free for the next client.
  const auto j = post_json("/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 3}, {"temperature", 0}});
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(health(*server_)["cancelled"], 2);
}

}  // namespace
}  // namespace hearth::testing
