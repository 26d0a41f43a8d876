// The parts of hearth_remote that need no network: the endpoint policy, the
// event-stream parser fed at every possible cut, the chunk and model-list
// shapes of OpenAI's API, Retry-After, and fitting a conversation into a
// context.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "remote/chat_protocol.h"
#include "remote/context_fit.h"
#include "remote/endpoint.h"
#include "remote/openai_client.h"
#include "remote/sse_parser.h"

namespace hearth::remote {
namespace {

TEST(EndpointPolicy, HttpsAnywhereHttpOnlyToThisMachine) {
  EXPECT_EQ(checked_base_url("https://api.example.com/v1", false)->toString(), "https://api.example.com/v1");
  EXPECT_EQ(checked_base_url("https://api.example.com/v1/", false)->toString(), "https://api.example.com/v1");
  // No path: OpenAI-compatible servers serve under /v1.
  EXPECT_EQ(checked_base_url("http://127.0.0.1:8080", false)->toString(), "http://127.0.0.1:8080/v1");
  EXPECT_TRUE(checked_base_url("http://localhost:11434/v1", false).ok());
  EXPECT_TRUE(checked_base_url("http://127.45.0.3:8000/v1", false).ok());
  EXPECT_TRUE(checked_base_url("http://[::1]:8000/v1", false).ok());

  auto lan = checked_base_url("http://192.168.1.20:8000/v1", false);
  ASSERT_FALSE(lan.ok());
  EXPECT_EQ(lan.error().kind, RemoteErrorKind::Insecure);
  EXPECT_NE(lan.error().message.find("http://192.168.1.20:8000/v1"), std::string::npos) << lan.error().message;
  EXPECT_NE(lan.error().message.find("plain http"), std::string::npos) << lan.error().message;

  auto pub = checked_base_url("http://api.example.com/v1", true);
  ASSERT_FALSE(pub.ok());
  EXPECT_NE(pub.error().message.find("api.example.com"), std::string::npos) << pub.error().message;
  EXPECT_FALSE(checked_base_url("http://8.8.8.8/v1", true).ok());
  EXPECT_FALSE(checked_base_url("http://172.32.0.1/v1", true).ok());  // just outside 172.16.0.0/12
  EXPECT_FALSE(checked_base_url("ftp://127.0.0.1/v1", false).ok());
  EXPECT_FALSE(checked_base_url("", false).ok());
  EXPECT_FALSE(checked_base_url("https://user:pw@api.example.com/v1", false).ok());
  EXPECT_FALSE(checked_base_url("https:///v1", false).ok());
}

TEST(EndpointPolicy, LanAddressesWhenAllowed) {
  for (const char* url : {"http://192.168.1.20:8000/v1", "http://10.0.0.5/v1", "http://172.16.0.1/v1",
                          "http://172.31.255.254/v1", "http://[fd12::1]:8000/v1", "http://gpu-box.local:8000/v1"}) {
    EXPECT_TRUE(checked_base_url(url, true).ok()) << url;
    EXPECT_FALSE(checked_base_url(url, false).ok()) << url;
  }
}

// The events of one stream as a server might write it: CRLF and LF line
// ends, a comment keep-alive, an event with two data lines, a named event.
const std::string kStream =
    ": keep-alive\r\n\r\n"
    "data: {\"a\":1}\r\n\r\n"
    "data: first\ndata: second\n\n"
    "event: ping\ndata: x\n\n"
    ":comment\n"
    "data:nospace\r\r"
    "data: [DONE]\n\n";
const std::vector<std::pair<std::string, std::string>> kEvents = {
    {"", "{\"a\":1}"}, {"", "first\nsecond"}, {"ping", "x"}, {"", "nospace"}, {"", "[DONE]"}};

std::vector<SseEvent> parse_in_pieces(const std::vector<std::string_view>& pieces) {
  SseParser parser;
  std::vector<SseEvent> out;
  for (auto p : pieces) EXPECT_TRUE(parser.feed(p, out).ok());
  return out;
}

void expect_events(const std::vector<SseEvent>& got, const std::string& where) {
  ASSERT_EQ(got.size(), kEvents.size()) << where;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].event, kEvents[i].first) << where << " event " << i;
    EXPECT_EQ(got[i].data, kEvents[i].second) << where << " event " << i;
  }
}

TEST(SseParser, SameEventsWhereverTheBytesAreCut) {
  const std::string_view all(kStream);
  expect_events(parse_in_pieces({all}), "whole");
  for (size_t cut = 0; cut <= all.size(); ++cut) {
    expect_events(parse_in_pieces({all.substr(0, cut), all.substr(cut)}), "cut at " + std::to_string(cut));
  }
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < all.size(); ++i) bytes.push_back(all.substr(i, 1));
  expect_events(parse_in_pieces(bytes), "byte by byte");
}

TEST(SseParser, UnfinishedEventIsNotEmittedAndLongLinesAreRefused) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.feed("data: {\"partial\":", out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(parser.has_partial());
  SseParser small(16);
  EXPECT_FALSE(small.feed("data: 0123456789abcdefgh", out).ok());
  // Short lines that never end the event.
  SseParser lines(16);
  EXPECT_FALSE(lines.feed("data: 0123456789\ndata: 0123456789\n", out).ok());
}

TEST(ChatProtocol, RequestBodyAsksForAStreamWithUsage) {
  ChatCall call;
  call.model = "m";
  call.messages = {{"system", "be brief"}, {"user", "hi"}};
  call.temperature = 0.0;
  call.seed = 7;
  const auto j = nlohmann::json::parse(chat_request_body(call));
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  EXPECT_EQ(j["messages"][0]["role"], "system");
  EXPECT_EQ(j["messages"][1]["content"], "hi");
  EXPECT_EQ(j["temperature"], 0.0);
  EXPECT_EQ(j["seed"], 7);
  EXPECT_FALSE(j.contains("top_k"));  // left to the server unless asked for
  EXPECT_FALSE(j.contains("max_tokens"));
}

TEST(ChatProtocol, ChunksOfContentReasoningUsageAndErrors) {
  auto c = parse_stream_chunk(R"({"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->content, "Hel");
  auto r = parse_stream_chunk(R"({"choices":[{"delta":{"reasoning_content":"think","content":null}}]})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reasoning, "think");
  EXPECT_TRUE(r->content.empty());
  auto u = parse_stream_chunk(R"({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}})");
  ASSERT_TRUE(u.ok());
  ASSERT_TRUE(u->usage.has_value());
  EXPECT_EQ(u->usage->prompt_tokens, 12);
  EXPECT_EQ(u->usage->completion_tokens, 34);
  auto f = parse_stream_chunk(R"({"choices":[{"delta":{},"finish_reason":"length"}]})");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->finish_reason, "length");
  auto e = parse_stream_chunk(R"({"error":{"message":"out of memory","type":"server_error","code":null}})");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->is_error);
  EXPECT_EQ(e->error_message, "out of memory");
  EXPECT_EQ(e->error_code, "server_error");
  for (const char* bad : {"{not json", "[1,2]", R"({"choices":5})", R"({"choices":[{"delta":{"content":5}}]})"}) {
    auto b = parse_stream_chunk(bad);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.error().code, ErrorCode::InvalidFormat);
  }
}

TEST(ChatProtocol, ModelListsAndErrorBodies) {
  auto m = parse_model_list(
      R"({"object":"list","data":[{"id":"a","owned_by":"vllm","max_model_len":8192},{"id":"b","context_length":512},{"x":1}]})");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 2u);
  EXPECT_EQ((*m)[0].id, "a");
  EXPECT_EQ((*m)[0].context_length, 8192);
  EXPECT_EQ((*m)[1].context_length, 512);
  EXPECT_FALSE(parse_model_list("nope").ok());
  EXPECT_FALSE(parse_model_list(R"({"data":{}})").ok());
  const auto e = parse_error_body(R"({"error":{"message":"The model `x` does not exist","code":"model_not_found"}})");
  EXPECT_EQ(e.code, "model_not_found");
  EXPECT_EQ(e.message, "The model `x` does not exist");
  EXPECT_EQ(parse_error_body("Bad Gateway\n").message, "Bad Gateway ");
}

TEST(RetryAfter, SecondsMillisecondsAndDates) {
  ExchangeResult r;
  EXPECT_FALSE(retry_after_ms(r).has_value());
  r.retry_after = "2";
  EXPECT_EQ(retry_after_ms(r), 2000);
  r.retry_after_ms = "150";
  EXPECT_EQ(retry_after_ms(r), 150);
  r.retry_after_ms.clear();
  r.retry_after = "Wed, 21 Oct 2015 07:28:00 GMT";  // in the past: no wait
  EXPECT_EQ(retry_after_ms(r), 0);
  r.retry_after = "soon";
  EXPECT_FALSE(retry_after_ms(r).has_value());
}

TEST(ContextFit, DropsOldestTurnsKeepsSystemAndNewest) {
  TokenEstimator est;
  const std::string hundred(300, 'x');  // 6 + 100 tokens at the starting rate
  std::vector<ChatMessage> conv = {{"system", hundred}, {"user", hundred},      {"assistant", hundred},
                                   {"user", hundred},   {"assistant", hundred}, {"user", hundred}};
  EXPECT_EQ(est.estimate(conv[0]), 106);
  auto all = fit_to_context(conv, 0, 100, est);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->dropped, 0);
  // 6 x 106 = 636 tokens; 500 - 100 reserved leaves 400. Dropping turns 1-2
  // (a question and its answer) leaves 424, still over; 3-4 go too: 212.
  auto fit = fit_to_context(conv, 500, 100, est);
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->first_dropped, 1);
  EXPECT_EQ(fit->dropped, 4);
  ASSERT_EQ(fit->messages.size(), 2u);
  EXPECT_EQ(fit->messages[0].role, "system");
  EXPECT_EQ(fit->messages[1].role, "user");
  EXPECT_EQ(fit->estimated_tokens, 212);
  auto roomier = fit_to_context(conv, 600, 100, est);  // 500 left: 636 - 212 = 424 fits
  ASSERT_TRUE(roomier.ok());
  EXPECT_EQ(roomier->dropped, 2);
  EXPECT_EQ(roomier->messages.size(), 4u);
  auto none = fit_to_context(conv, 250, 100, est);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::LimitExceeded);
}

TEST(ContextFit, CalibratesFromTheServersCount) {
  TokenEstimator est;
  const std::vector<ChatMessage> sent = {{"user", std::string(400, 'y')}};
  est.calibrate(sent, 6 + 100);  // the server counted 100 tokens for 400 bytes
  EXPECT_DOUBLE_EQ(est.tokens_per_byte(), 0.25);
  EXPECT_EQ(est.estimate(ChatMessage{"user", std::string(800, 'z')}), 206);
}

}  // namespace
}  // namespace hearth::remote
