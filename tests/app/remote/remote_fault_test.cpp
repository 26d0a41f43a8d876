// The remote client against a loopback server that misbehaves on purpose:
// a closed port, HTTP 500, 401, 404 model_not_found, 429 then success, 429
// for good, a redirect, a stream cut at random byte offsets, a server gone
// silent, an error object and bad JSON in the stream, a JSON answer where an
// event stream belongs, cancellation, and a TLS endpoint with a self-signed
// certificate. Outcomes are asserted, never durations.
#include <gtest/gtest.h>

#include <QFile>
#include <QProcess>
#include <QSslSocket>
#include <QTcpServer>
#include <QTemporaryDir>

#include <random>

#include "fault_server.h"
#include "remote/openai_client.h"

namespace hearth::testing {
namespace {

using remote::ChatReply;
using remote::OpenAiClient;
using remote::RemoteErrorKind;

remote::EndpointConfig config_for(const std::string& url) {
  remote::EndpointConfig c;
  c.base_url = QString::fromStdString(url);
  c.api_key = QStringLiteral("sk-test-123");
  c.connect_timeout_ms = 10000;
  c.inactivity_timeout_ms = 20000;
  c.initial_backoff_ms = 10;
  return c;
}

remote::ChatCall hello_call() {
  remote::ChatCall call;
  call.model = "tiny-model";
  call.messages = {{"user", "Hello"}};
  call.temperature = 0.0;
  return call;
}

struct Streamed {
  std::string content;
  std::string reasoning;
  ChatReply reply;
};

Streamed stream(OpenAiClient& client, const remote::CancelledFn& cancelled = {}) {
  Streamed s;
  remote::StreamCallbacks cb;
  cb.on_content = [&](std::string_view p) { s.content += p; };
  cb.on_reasoning = [&](std::string_view p) { s.reasoning += p; };
  s.reply = client.stream_chat(hello_call(), cb, cancelled);
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RemoteFaults, ClosedPortIsUnreachable) {
  quint16 port = 0;
  {
    QTcpServer probe;
    ASSERT_TRUE(probe.listen(QHostAddress::LocalHost, 0));
    port = probe.serverPort();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  OpenAiClient client(config_for(url));
  auto models = client.list_models();
  ASSERT_FALSE(models.ok());
  EXPECT_EQ(models.error().kind, RemoteErrorKind::Unreachable);
  EXPECT_TRUE(contains(models.error().message, url)) << models.error().message;
  EXPECT_TRUE(contains(models.error().message, "refused")) << models.error().message;
  const auto s = stream(client);
  ASSERT_TRUE(s.reply.error.has_value());
  EXPECT_EQ(s.reply.error->kind, RemoteErrorKind::Unreachable);
  EXPECT_TRUE(contains(s.reply.error->message, "tiny-model")) << s.reply.error->message;
}

TEST(RemoteFaults, ServerErrorNamesStatusAndServerMessage) {
  FaultServer server;
  server.script({{http_response(500, R"({"error":{"message":"CUDA out of memory","type":"server_error"}})")}});
  OpenAiClient client(config_for(server.base_url()));
  const auto s = stream(client);
  ASSERT_TRUE(s.reply.error.has_value());
  EXPECT_EQ(s.reply.error->kind, RemoteErrorKind::ServerError);
  EXPECT_EQ(s.reply.error->http_status, 500);
  EXPECT_TRUE(contains(s.reply.error->message, "HTTP 500")) << s.reply.error->message;
  EXPECT_TRUE(contains(s.reply.error->message, "CUDA out of memory")) << s.reply.error->message;
  EXPECT_TRUE(contains(s.reply.error->message, "tiny-model")) << s.reply.error->message;
  EXPECT_TRUE(s.content.empty());
  EXPECT_FALSE(s.reply.cut);
}

TEST(RemoteFaults, BadKeyIsUnauthorizedAndTheKeyWasSent) {
  FaultServer server;
  server.script({{http_response(401, R"({"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}})")}});
  OpenAiClient client(config_for(server.base_url()));
  auto models = client.list_models();
  ASSERT_FALSE(models.ok());
  EXPECT_EQ(models.error().kind, RemoteErrorKind::Unauthorized);
  EXPECT_TRUE(contains(models.error().message, "API key")) << models.error().message;
  EXPECT_TRUE(contains(models.error().message, server.base_url())) << models.error().message;
  ASSERT_EQ(server.requests().size(), 1);
  EXPECT_TRUE(server.requests()[0].startsWith("GET /v1/models "));
  EXPECT_TRUE(server.requests()[0].contains("Authorization: Bearer sk-test-123\r\n"));
  const auto s = stream(client);
  ASSERT_TRUE(s.reply.error.has_value());
  EXPECT_EQ(s.reply.error->kind, RemoteErrorKind::Unauthorized);
  EXPECT_EQ(s.reply.error->http_status, 401);
}

TEST(RemoteFaults, MissingModelIsModelNotFound) {
  FaultServer server;
  server.script({{http_response(404, R"({"error":{"message":"The model `tiny-model` does not exist","code":"model_not_found"}})")}});
  OpenAiClient client(config_for(server.base_url()));
  const auto s = stream(client);
  ASSERT_TRUE(s.reply.error.has_value());
  EXPECT_EQ(s.reply.error->kind, RemoteErrorKind::ModelNotFound);
  EXPECT_TRUE(contains(s.reply.error->message, "'tiny-model'")) << s.reply.error->message;
}

TEST(RemoteFaults, RateLimitIsRetriedAfterTheWaitItAsksFor) {
  FaultServer server;
  const QByteArray events = content_event("Hi") + content_event(" there") + usage_event(5, 2) + kDoneEvent;
  server.script({{http_response(429, R"({"error":{"message":"slow down"}})", "Retry-After: 1\r\n")},
                 {sse_response(events)}});
  OpenAiClient client(config_for(server.base_url()));
  std::vector<int> waits;
  remote::StreamCallbacks cb;
  std::string text;
  cb.on_content = [&](std::string_view p) { text += p; };
  cb.on_retry = [&](int wait_ms, int) { waits.push_back(wait_ms); };
  const auto reply = client.stream_chat(hello_call(), cb);
  ASSERT_TRUE(reply.ok()) << reply.error->message;
  EXPECT_EQ(text, "Hi there");
  EXPECT_EQ(reply.content, "Hi there");
  EXPECT_EQ(reply.retries, 1);
  EXPECT_EQ(waits, std::vector<int>{1000});  // Retry-After: 1 (seconds)
  EXPECT_EQ(server.requests().size(), 2);
  ASSERT_TRUE(reply.usage.has_value());
  EXPECT_EQ(reply.usage->prompt_tokens, 5);
  EXPECT_EQ(reply.completion_tokens(), 2);
  EXPECT_FALSE(reply.cut);
}

TEST(RemoteFaults, RateLimitForGoodGivesUpAfterTheRetries) {
  FaultServer server;
  server.script({{http_response(429, R"({"error":{"message":"quota exceeded"}})", "Retry-After: 0\r\n")}});
  auto config = config_for(server.base_url());
  config.max_retries = 2;
  OpenAiClient client(config);
  const auto s = stream(client);
  ASSERT_TRUE(s.reply.error.has_value());
  EXPECT_EQ(s.reply.error->kind, RemoteErrorKind::RateLimited);
  EXPECT_TRUE(contains(s.reply.error->message, "gave up after 2 retries")) << s.reply.error->message;
  EXPECT_TRUE(contains(s.reply.error->message, "quota exceeded")) << s.reply.error->message;
  EXPECT_EQ(server.requests().size(), 3);
}

TEST(RemoteFaults, RedirectsAreNotFollowed) {
  FaultServer server;
  server.script({{http_response(302, "", "Location: http://elsewhere.example/v1/models\r\n")}});
  OpenAiClient client(config_for(server.base_url()));
  auto models = client.list_models();
  ASSERT_FALSE(models.ok());
  EXPECT_EQ(models.error().kind, RemoteErrorKind::HttpError);
  EXPECT_TRUE(contains(models.error().message, "elsewhere.example")) << models.error().message;
  EXPECT_EQ(server.requests().size(), 1);
}

// The text of the events complete within the first `n` bytes of `events`.
std::string complete_content(const std::vector<std::string>& pieces, const std::vector<QByteArray>& encoded, qsizetype n) {
  std::string text;
  qsizetype end = 0;
  for (size_t i = 0; i < encoded.size(); ++i) {
    end += encoded[i].size();
    if (end > n) break;
    text += pieces[i];
  }
  return text;
}

TEST(RemoteFaults, StreamCutAtRandomOffsetsKeepsThePartialReplyMarkedCut) {
  const std::vector<std::string> pieces = {"Once", " upon", " a", " time", ",", " a", " fox", " ¡olé!", " ran", "."};
  std::vector<QByteArray> encoded;
  QByteArray events;
  for (const auto& p : pieces) {
    encoded.push_back(content_event(p));
    events += encoded.back();
  }
  events += usage_event(4, 10) + kDoneEvent;
  const QByteArray whole = sse_response(events);
  const qsizetype head = whole.size() - events.size();
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<qsizetype> offset(0, events.size() - 1);
  for (int round = 0; round < 12; ++round) {
    // Always one cut inside the last piece's bytes and one at zero.
    const qsizetype n = round == 0 ? 0 : round == 1 ? events.size() - 1 : offset(rng);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", cut after " + std::to_string(n) + " of " +
                 std::to_string(events.size()) + " body bytes");
    FaultServer server;
    server.script({{whole, head + n}});
    OpenAiClient client(config_for(server.base_url()));
    const auto s = stream(client);
    ASSERT_TRUE(s.reply.error.has_value());
    EXPECT_EQ(s.reply.error->kind, RemoteErrorKind::StreamCut);
    EXPECT_TRUE(s.reply.cut);
    EXPECT_TRUE(contains(s.reply.error->message, "cut off")) << s.reply.error->message;
    const std::string expected = complete_content(pieces, encoded, n);
    EXPECT_EQ(s.reply.content, expected);
    EXPECT_EQ(s.content, expected);
  }
}

TEST(RemoteFaults, SilentServerTimesOutKeepingWhatArrived) {
  FaultServer server;
  server.script({{sse_response(content_event("Partial")), -1, true}});
  auto config = config_for(server.base_url());
  config.inactivity_timeout_ms = 300;
  OpenAiClient client(config);
  const auto s = stream(client);
  ASSERT_TRUE(s.reply.error.has_value());
  EXPECT_EQ(s.reply.error->kind, RemoteErrorKind::Timeout);
  EXPECT_TRUE(contains(s.reply.error->message, "sent nothing for 0.3 s")) << s.reply.error->message;
  EXPECT_TRUE(s.reply.cut);
  EXPECT_EQ(s.reply.content, "Partial");
}

TEST(RemoteFaults, ServerThatNeverAnswersTimesOut) {
  FaultServer server;
  server.script({{QByteArray(), -1, true}});
  auto config = config_for(server.base_url());
  config.inactivity_timeout_ms = 300;
  OpenAiClient client(config);
  auto models = client.list_models();
  ASSERT_FALSE(models.ok());
  EXPECT_EQ(models.error().kind, RemoteErrorKind::Timeout);
}

TEST(RemoteFaults, NoTlsHandshakeWithinTheConnectTimeoutIsUnreachable) {
  // A plain TCP server that accepts and says nothing: the TLS handshake
  // never completes, so the connection is never made.
  FaultServer server;
  server.script({{QByteArray(), -1, true}});
  const std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/v1";
  auto config = config_for(url);
  config.connect_timeout_ms = 300;
  OpenAiClient client(config);
  auto models = client.list_models();
  ASSERT_FALSE(models.ok());
  EXPECT_EQ(models.error().kind, RemoteErrorKind::Unreachable);
  EXPECT_TRUE(contains(models.error().message, "no connection within 0.3 s")) << models.error().message;
  EXPECT_TRUE(contains(models.error().message, url)) << models.error().message;
}

TEST(RemoteFaults, CancelAbortsTheStream) {
  FaultServer server;
  server.script({{sse_response(content_event("First")), -1, true}});
  OpenAiClient client(config_for(server.base_url()));
  std::string text;
  remote::StreamCallbacks cb;
  cb.on_content = [&](std::string_view p) { text += p; };
  // Stop once the first piece is shown, as the user pressing Stop would.
  const auto reply = client.stream_chat(hello_call(), cb, [&] { return !text.empty(); });
  EXPECT_TRUE(reply.cancelled);
  EXPECT_FALSE(reply.error.has_value());
  EXPECT_EQ(reply.content, "First");
}

TEST(RemoteFaults, CancelStopsAfterThePieceEvenWhenMoreArrivedAtOnce) {
  FaultServer server;
  server.script({{sse_response(content_event("One") + content_event(" two") + content_event(" three") + kDoneEvent)}});
  OpenAiClient client(config_for(server.base_url()));
  std::string text;
  remote::StreamCallbacks cb;
  cb.on_content = [&](std::string_view p) { text += p; };
  const auto reply = client.stream_chat(hello_call(), cb, [&] { return !text.empty(); });
  EXPECT_TRUE(reply.cancelled);
  EXPECT_FALSE(reply.error.has_value());
  EXPECT_EQ(text, "One");
  EXPECT_EQ(reply.content, "One");
}

TEST(RemoteFaults, ErrorObjectInTheStreamEndsTheReply) {
  FaultServer server;
  server.script({{sse_response(content_event("Half") + R"(data: {"error":{"message":"engine crashed","type":"server_error"}})" +
                               "\n\n")}});
  OpenAiClient client(config_for(server.base_url()));
  const auto s = stream(client);
  ASSERT_TRUE(s.reply.error.has_value());
  EXPECT_EQ(s.reply.error->kind, RemoteErrorKind::ServerError);
  EXPECT_TRUE(contains(s.reply.error->message, "engine crashed")) << s.reply.error->message;
  EXPECT_EQ(s.reply.content, "Half");
}

TEST(RemoteFaults, MalformedJsonAndNonStreamAnswers) {
  FaultServer server;
  server.script({{sse_response(content_event("Ok") + "data: {\"choices\": [\n\n")},
                 {http_response(200, R"({"choices":[{"message":{"content":"x"}}]})")}});
  OpenAiClient client(config_for(server.base_url()));
  const auto bad = stream(client);
  ASSERT_TRUE(bad.reply.error.has_value());
  EXPECT_EQ(bad.reply.error->kind, RemoteErrorKind::Malformed);
  EXPECT_EQ(bad.reply.content, "Ok");
  const auto json = stream(client);
  ASSERT_TRUE(json.reply.error.has_value());
  EXPECT_EQ(json.reply.error->kind, RemoteErrorKind::Malformed);
  EXPECT_TRUE(contains(json.reply.error->message, "instead of an event stream")) << json.reply.error->message;
}

TEST(RemoteFaults, ReasoningAndContentGoToTheirOwnCallbacks) {
  FaultServer server;
  server.script({{sse_response(": keep-alive\n\n" + content_event("Let me think.", true) + content_event("42") +
                               usage_event(3, 5) + kDoneEvent)}});
  OpenAiClient client(config_for(server.base_url()));
  const auto s = stream(client);
  ASSERT_TRUE(s.reply.ok()) << s.reply.error->message;
  EXPECT_EQ(s.reasoning, "Let me think.");
  EXPECT_EQ(s.content, "42");
  EXPECT_EQ(s.reply.completion_tokens(), 5);
  ASSERT_EQ(server.requests().size(), 1);
  const QByteArray& request = server.requests()[0];
  EXPECT_TRUE(request.startsWith("POST /v1/chat/completions "));
  EXPECT_TRUE(request.contains(R"("stream":true)"));
  EXPECT_TRUE(request.contains(R"("include_usage":true)"));
}

TEST(RemoteFaults, SelfSignedCertificateIsRejected) {
  ASSERT_TRUE(QSslSocket::supportsSsl()) << "Qt has no TLS backend";
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const QString cert = dir.filePath("cert.pem");
  const QString key = dir.filePath("key.pem");
  const int rc = QProcess::execute("openssl", {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
                                               cert, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
                                               "subjectAltName=IP:127.0.0.1"});
  ASSERT_EQ(rc, 0) << "openssl could not make a certificate";
  QFile cf(cert), kf(key);
  ASSERT_TRUE(cf.open(QIODevice::ReadOnly) && kf.open(QIODevice::ReadOnly));
  const QSslCertificate certificate(cf.readAll(), QSsl::Pem);
  const QSslKey private_key(kf.readAll(), QSsl::Rsa, QSsl::Pem);
  ASSERT_FALSE(certificate.isNull());
  ASSERT_FALSE(private_key.isNull());
  FaultServer server(certificate, private_key);
  server.script({{http_response(200, R"({"object":"list","data":[{"id":"tiny-model"}]})")}});
  OpenAiClient client(config_for(server.base_url()));
  auto models = client.list_models();
  ASSERT_FALSE(models.ok());
  EXPECT_EQ(models.error().kind, RemoteErrorKind::Tls);
  EXPECT_TRUE(contains(models.error().message, "self signed") || contains(models.error().message, "self-signed"))
      << models.error().message;
  EXPECT_TRUE(server.requests().empty());  // nothing, the key included, was sent
}

}  // namespace
}  // namespace hearth::testing
