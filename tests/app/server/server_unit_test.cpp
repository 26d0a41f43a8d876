// The server's pieces that need no model: request checking, OpenAI error
// bodies, the token file, Host/Origin rules and the JSON grammar.
#include <gtest/gtest.h>
#include <hearth/server/auth.h>
#include <hearth/server/json_grammar.h>
#include <hearth/server/openai_request.h>
#include <hearth/server/token_choice.h>
#include <hearth/engine/gguf/reader.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <limits>

#include "connection_pool.h"

namespace hearth::server {
namespace {

const std::string kModel = "stories260K";

ApiError error_of(Endpoint e, const std::string& body) {
  auto r = parse_request(e, body, kModel, 7);
  EXPECT_TRUE(std::holds_alternative<ApiError>(r)) << body;
  return std::holds_alternative<ApiError>(r) ? std::get<ApiError>(r) : ApiError{};
}

ParsedRequest ok_of(Endpoint e, const std::string& body) {
  auto r = parse_request(e, body, kModel, 7);
  if (auto* err = std::get_if<ApiError>(&r)) ADD_FAILURE() << body << ": " << err->message;
  return std::holds_alternative<ParsedRequest>(r) ? std::get<ParsedRequest>(r) : ParsedRequest{};
}

TEST(OpenAiRequest, ReadsEveryDocumentedField) {
  const auto p = ok_of(Endpoint::ChatCompletions, R"({
    "model": "stories260K", "messages": [{"role": "system", "content": "S"},
                                         {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
    "max_completion_tokens": 12, "temperature": 0, "top_p": 0.5, "top_k": 3, "min_p": 0.1, "seed": 42,
    "stop": ["x", "yy"], "presence_penalty": 0.5, "frequency_penalty": -0.5, "logprobs": true, "top_logprobs": 2,
    "n": 1, "stream": true, "stream_options": {"include_usage": true}, "user": "ignored"})");
  ASSERT_EQ(p.messages.size(), 2u);
  EXPECT_EQ(p.messages[1].content, "ab");
  EXPECT_EQ(p.max_tokens, 12);
  EXPECT_EQ(p.sampler.temperature, 0.0f);
  EXPECT_EQ(p.sampler.top_p, 0.5f);
  EXPECT_EQ(p.sampler.top_k, 3);
  EXPECT_FLOAT_EQ(p.sampler.min_p, 0.1f);
  EXPECT_EQ(p.sampler.seed, 42u);
  EXPECT_EQ(p.stop, (std::vector<std::string>{"x", "yy"}));
  EXPECT_EQ(p.sampler.presence_penalty, 0.5f);
  EXPECT_EQ(p.sampler.frequency_penalty, -0.5f);
  EXPECT_EQ(p.top_logprobs, 2);
  EXPECT_TRUE(p.stream);
  EXPECT_TRUE(p.include_usage);
}

TEST(OpenAiRequest, DefaultsAreOpenAis) {
  const auto p = ok_of(Endpoint::Completions, R"({"prompt": "hi"})");
  EXPECT_EQ(p.prompt, "hi");
  EXPECT_EQ(p.sampler.temperature, 1.0f);
  EXPECT_EQ(p.sampler.top_p, 1.0f);
  EXPECT_EQ(p.sampler.top_k, 0);
  EXPECT_EQ(p.sampler.min_p, 0.0f);
  EXPECT_EQ(p.sampler.seed, 7u);  // the server's random seed when none is given
  EXPECT_FALSE(p.max_tokens.has_value());
  EXPECT_EQ(p.top_logprobs, -1);
}

TEST(OpenAiRequest, RefusesBadInputByName) {
  struct Case {
    Endpoint e;
    std::string body;
    std::string param;
    std::string in_message;
  };
  const Case cases[] = {
      {Endpoint::ChatCompletions, "{not json", "", "not valid JSON"},
      {Endpoint::ChatCompletions, "[1,2]", "", "must be a JSON object"},
      {Endpoint::ChatCompletions, R"({"messages": "hi"})", "messages", "non-empty array"},
      {Endpoint::ChatCompletions, R"({"messages": []})", "messages", "non-empty array"},
      {Endpoint::ChatCompletions, R"({})", "messages", "required"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": 3, "content": "x"}]})", "messages[0].role", "string"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "wizard", "content": "x"}]})", "messages[0].role", "wizard"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content", "string"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
       "messages[0].content[0]", "only text parts"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})",
       "temperature", "must be a number"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "temperature": 3})", "temperature",
       "between 0 and 2"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0})", "max_tokens",
       "between"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1.5})", "max_tokens",
       "integer"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "n": 2})", "n", "n = 1"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "stop": [1]})", "stop", "strings"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "stop": ["a","b","c","d","e"]})",
       "stop", "at most 4"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "stream": "yes"})", "stream",
       "boolean"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 3})",
       "top_logprobs", "needs 'logprobs'"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true, "top_logprobs": 21})",
       "top_logprobs", "between 0 and 20"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]})",
       "tools", "not supported"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "xml"}})",
       "response_format.type", "xml"},
      {Endpoint::ChatCompletions, R"({"messages": [{"role": "user", "content": "x"}], "model": 3})", "model", "string"},
      {Endpoint::Completions, R"({"prompt": 12})", "prompt", "must be a string"},
      {Endpoint::Completions, R"({})", "prompt", "required"},
      {Endpoint::Completions, R"({"prompt": "x", "logprobs": 6})", "logprobs", "between 0 and 5"},
  };
  for (const auto& c : cases) {
    const ApiError e = error_of(c.e, c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error") << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_NE(e.message.find(c.in_message), std::string::npos) << c.body << " -> " << e.message;
  }
}

TEST(OpenAiRequest, AnotherModelOrAPathIsNotFound) {
  for (const char* model : {"other", "/etc/passwd", "../stories260K.gguf"}) {
    const ApiError e = error_of(Endpoint::Completions, std::string(R"({"prompt": "x", "model": ")") + model + "\"}");
    EXPECT_EQ(e.status, 404);
    EXPECT_EQ(e.code, "model_not_found");
  }
}

TEST(OpenAiRequest, ErrorBodyIsOpenAisShape) {
  ApiError e;
  e.message = "m";
  e.param = "p";
  const auto j = nlohmann::json::parse(to_json(e));
  EXPECT_EQ(j["error"]["message"], "m");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");
  EXPECT_EQ(j["error"]["param"], "p");
  EXPECT_TRUE(j["error"]["code"].is_null());
}

TEST(Auth, BearerMatchesOnlyTheExactToken) {
  const std::string token = "0123456789abcdef0123";
  EXPECT_TRUE(bearer_matches("Bearer " + token, token));
  EXPECT_TRUE(bearer_matches("bearer " + token, token));
  EXPECT_FALSE(bearer_matches("Bearer " + token + "x", token));
  EXPECT_FALSE(bearer_matches("Bearer " + token.substr(1), token));
  EXPECT_FALSE(bearer_matches(token, token));
  EXPECT_FALSE(bearer_matches("Basic " + token, token));
  EXPECT_FALSE(bearer_matches("", token));
  EXPECT_FALSE(bearer_matches("Bearer ", ""));
}

TEST(Auth, HostMustBeLoopbackOrTheConfiguredAddress) {
  for (const char* ok : {"localhost", "localhost:8080", "LOCALHOST.:1", "127.0.0.1:9", "[::1]:8080", "[::1]"}) {
    EXPECT_TRUE(host_allowed(ok, {})) << ok;
  }
  for (const char* bad : {"", "evil.example", "evil.example:8080", "127.0.0.1.evil.example", "localhost:80x", "[::1",
                          "localhost:8080:1", "10.0.0.5:8080"}) {
    EXPECT_FALSE(host_allowed(bad, {})) << bad;
  }
  EXPECT_TRUE(host_allowed("10.0.0.5:8080", {"10.0.0.5"}));
}

TEST(Auth, OriginMustBeListedExactly) {
  EXPECT_FALSE(origin_allowed("http://evil.example", {}));
  EXPECT_FALSE(origin_allowed("null", {"null"}));
  EXPECT_TRUE(origin_allowed("http://localhost:3000", {"http://localhost:3000"}));
  EXPECT_FALSE(origin_allowed("http://localhost:3001", {"http://localhost:3000"}));
}

class TokenFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(HEARTH_BINARY_DIR) / "test-scratch" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
};

TEST_F(TokenFile, IsCreatedPrivateAndReadBack) {
  const auto file = dir_ / "sub" / "api-key";
  auto token = load_or_create_token(file);
  ASSERT_TRUE(token.ok()) << token.error().message;
  EXPECT_EQ(token->size(), 64u);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(file.parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  auto again = load_or_create_token(file);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *token);
  auto fresh = regenerate_token(file);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(*fresh, *token);
  EXPECT_EQ(*load_or_create_token(file), *fresh);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(TokenFile, OthersReadableShortOrNotAFileIsRefused) {
  std::filesystem::create_directories(dir_);
  const auto open = dir_ / "open";
  std::ofstream(open) << "0123456789abcdef0123\n";
  ::chmod(open.c_str(), 0644);
  auto r = load_or_create_token(open);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("chmod 600"), std::string::npos);
  const auto shorty = dir_ / "short";
  std::ofstream(shorty) << "abc\n";
  ::chmod(shorty.c_str(), 0600);
  r = load_or_create_token(shorty);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("at least 16"), std::string::npos);
  r = load_or_create_token(dir_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a regular file"), std::string::npos);
}

std::shared_ptr<const JsonGrammar> grammar(ResponseFormat f, const std::string& schema = "{}") {
  auto g = compile_grammar(f, nlohmann::json::parse(schema));
  if (auto* e = std::get_if<ApiError>(&g)) ADD_FAILURE() << e->message;
  return std::make_shared<const JsonGrammar>(std::get<JsonGrammar>(g));
}

bool accepts(const std::shared_ptr<const JsonGrammar>& g, const std::string& text) {
  JsonRecognizer r(g);
  return r.feed(text) && r.complete();
}

bool prefix_ok(const std::shared_ptr<const JsonGrammar>& g, const std::string& text) {
  JsonRecognizer r(g);
  return r.feed(text);
}

TEST(JsonGrammar, JsonObjectAcceptsExactlyJsonObjects) {
  const auto g = grammar(ResponseFormat::JsonObject);
  // Checked against nlohmann's parser, an independent JSON implementation.
  const char* docs[] = {R"({})", R"( {"a": 1})", R"({"a": [1, 2.5, -3e+2, true, false, null, "x\"y\u00e9"], "b": {}})",
                        R"({"k": {"n": {"m": [[], [{}]]}}})", R"({"": 0})"};
  for (const char* d : docs) {
    ASSERT_FALSE(nlohmann::json::parse(d, nullptr, false).is_discarded()) << d;
    EXPECT_TRUE(accepts(g, d)) << d;
  }
  const char* bad[] = {R"([1])", R"("s")", R"({"a" 1})", R"({"a": 01})", R"({"a": 1,})", R"({"a": tru})",
                       R"({"a": "\q"})", R"({} {})", R"({"a": 1.})", R"({'a': 1})"};
  for (const char* d : bad) {
    EXPECT_FALSE(nlohmann::json::parse(d, nullptr, false).is_object()) << d;
    EXPECT_FALSE(accepts(g, d)) << d;
  }
  EXPECT_TRUE(prefix_ok(g, R"({"a": [1, {"b")"));
  EXPECT_FALSE(accepts(g, R"({"a": [1, {"b")"));
  EXPECT_FALSE(prefix_ok(g, std::string("{") + std::string(40, ' ')));  // no endless padding
  EXPECT_FALSE(prefix_ok(g, "{\n\n"));
  EXPECT_TRUE(accepts(g, "{\n  \"a\": [\n    1\n  ]\n}"));
}

TEST(JsonGrammar, SchemaSubsetIsEnforced) {
  const auto g = grammar(ResponseFormat::JsonSchema, R"({
    "type": "object", "additionalProperties": false, "required": ["name", "age"],
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                   "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "bc"]}, "maxItems": 2},
                   "ok": {"type": ["boolean", "null"]}}})");
  EXPECT_TRUE(accepts(g, R"({"name": "x", "age": 3})"));
  EXPECT_TRUE(accepts(g, R"({"age": -3, "tags": ["bc", "a"], "name": "", "ok": null})"));
  EXPECT_FALSE(accepts(g, R"({"name": "x"})"));                          // age is required
  EXPECT_FALSE(prefix_ok(g, R"({"name": "x", "age": 3.5)"));             // integer
  EXPECT_FALSE(prefix_ok(g, R"({"nome")"));                              // unknown key
  EXPECT_FALSE(prefix_ok(g, R"({"name": "x", "name")"));                 // twice
  EXPECT_FALSE(prefix_ok(g, R"({"tags": ["b")"));                        // "b" is not in the enum
  EXPECT_TRUE(prefix_ok(g, R"({"tags": ["b)"));                           // but may become "bc"
  EXPECT_FALSE(prefix_ok(g, R"({"tags": ["a", "a", "a")"));              // maxItems
  EXPECT_FALSE(prefix_ok(g, R"({"ok": 1)"));
}

TEST(JsonGrammar, UnsupportedSchemasAreRefusedByKeyword) {
  struct Case {
    const char* schema;
    const char* says;
  };
  const Case cases[] = {{R"({"type": "object", "properties": {"a": {"$ref": "#/x"}}})", "'$ref'"},
                        {R"({"anyOf": []})", "'anyOf'"},
                        {R"({"type": "array"})", "root schema must be of type object"},
                        {R"({"type": "object", "properties": {"a": {"type": "decimal"}}})", "not a JSON type"},
                        {R"({"type": "object", "properties": {"a": {"enum": [1]}}})", "only string values"},
                        {R"({"type": "object", "properties": {}, "required": ["b"]})", "not a listed property"}};
  for (const auto& c : cases) {
    auto g = compile_grammar(ResponseFormat::JsonSchema, nlohmann::json::parse(c.schema));
    ASSERT_TRUE(std::holds_alternative<ApiError>(g)) << c.schema;
    EXPECT_NE(std::get<ApiError>(g).message.find(c.says), std::string::npos) << std::get<ApiError>(g).message;
  }
}

}  // namespace
}  // namespace hearth::server

namespace hearth::server {
namespace {

// Past `workers` running and `max_waiting` waiting, a connection runs on the
// reject lane, where the router answers 503 at once.
TEST(ConnectionPool, OverTheCapRunsOnTheRejectLane) {
  ConnectionPool pool(1, 1);
  std::promise<void> started, release;
  std::shared_future<void> go = release.get_future().share();
  std::promise<bool> second, third;
  pool.enqueue([&] {
    started.set_value();
    go.wait();
  });
  started.get_future().wait();  // the one worker is busy
  pool.enqueue([&] { second.set_value(pool.rejecting()); });  // waits in the queue
  pool.enqueue([&] { third.set_value(pool.rejecting()); });   // over the cap
  auto third_rejected = third.get_future();
  EXPECT_TRUE(third_rejected.get());  // served by the reject lane while the worker is still busy
  release.set_value();
  EXPECT_FALSE(second.get_future().get());
  pool.shutdown();
}

// ignore_eos masks the end tokens and nothing else: greedy over logits whose
// largest values are end tokens picks the best other token, and without it
// the end token wins and ends the reply.
TEST(TokenChooser, IgnoreEosMasksOnlyTheEndTokens) {
  auto file = gguf::GgufFile::open(std::string(HEARTH_TEST_DATA_DIR) + "/models/stories260K.gguf");
  ASSERT_TRUE(file.ok()) << file.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf(*file);
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  const std::vector<int32_t> ends = {2, 5};
  TokenChooser chooser(*tok, ends);
  std::vector<float> logits(static_cast<size_t>(tok->vocab().tokens.size()), 0.0f);
  logits[2] = 10.0f;
  logits[5] = 9.0f;
  logits[7] = 8.0f;
  logits[9] = -std::numeric_limits<float>::infinity();  // another token already impossible
  sampling::SamplerConfig greedy;
  greedy.temperature = 0.0f;
  sampling::Sampler sampler(greedy);
  auto plain = chooser.choose(logits, sampler, nullptr, -1, false);
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->token, 2);
  EXPECT_TRUE(plain->end_of_generation);
  auto forced = chooser.choose(logits, sampler, nullptr, -1, true);
  ASSERT_TRUE(forced.ok()) << forced.error().message;
  EXPECT_EQ(forced->token, 7);
  EXPECT_FALSE(forced->end_of_generation);
  // The logits the caller passed are left as they were.
  EXPECT_EQ(logits[2], 10.0f);
}

}  // namespace
}  // namespace hearth::server
