// A loopback HTTP(S) server for the remote client's failure tests: each
// request it receives gets the next scripted reply (the last one repeats),
// written byte for byte, optionally cut short or left hanging. It runs on
// the test's thread; the client's local event loop serves its sockets too.
#pragma once

#include <QByteArray>
#include <QList>
#include <QSslCertificate>
#include <QSslKey>
#include <QTcpServer>

#include <memory>
#include <string>
#include <vector>

namespace hearth::testing {

struct FaultReply {
  QByteArray bytes;          // status line, headers and body as sent
  qsizetype cut_at = -1;     // >= 0: send only this many bytes, then close
  bool hang = false;         // after sending, keep the connection open and silent
};

// "HTTP/1.1 STATUS" with the headers given, Content-Length and the body.
QByteArray http_response(int status, const QByteArray& body, const QByteArray& extra_headers = {},
                         const QByteArray& content_type = "application/json");
// An event stream answer: headers, then `events` until the server closes.
QByteArray sse_response(const QByteArray& events);
// One chat.completion.chunk event with a content (or reasoning) delta.
QByteArray content_event(const std::string& text, bool reasoning = false);
QByteArray usage_event(int prompt_tokens, int completion_tokens);
inline const QByteArray kDoneEvent = "data: [DONE]\n\n";

class FaultServer {
 public:
  // Plain HTTP, or HTTPS with the given certificate and key.
  FaultServer();
  FaultServer(const QSslCertificate& certificate, const QSslKey& key);
  ~FaultServer();

  void script(std::vector<FaultReply> replies) { replies_ = std::move(replies); }
  quint16 port() const;
  std::string base_url() const;  // http(s)://127.0.0.1:PORT/v1
  // The requests received, each as its head and body.
  const QList<QByteArray>& requests() const { return requests_; }

 private:
  void accept();
  void serve(class QTcpSocket* socket);

  std::unique_ptr<QTcpServer> server_;
  bool tls_ = false;
  std::vector<FaultReply> replies_;
  size_t next_ = 0;
  QList<QByteArray> requests_;
};

}  // namespace hearth::testing
