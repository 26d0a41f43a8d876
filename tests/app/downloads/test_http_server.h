// A small HTTP/1.1 server on 127.0.0.1 for downloader tests: serves one
// in-memory file with switchable Range support and fault modes (drop the
// connection at a byte, wrong content, slow delivery, ETag change, bad 206,
// insecure redirect). Runs on the test's event loop.
#pragma once

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QObject>
#include <QTcpServer>

#include <deque>
#include <optional>

class QTcpSocket;

namespace hearth::test {

struct RecordedRequest {
  QByteArray path;
  QMap<QByteArray, QByteArray> headers;  // lower-case names
};

class TestHttpServer : public QObject {
  Q_OBJECT
 public:
  TestHttpServer();
  quint16 port() const { return server_.serverPort(); }
  QByteArray url(const char* path = "/model.gguf") const;

  // The file served at every path except the special ones below.
  void set_body(QByteArray body, QByteArray etag);
  void set_range_support(bool on) { range_support_ = on; }
  // Cut points (absolute file offsets): a response that starts before a cut
  // point closes its connection after sending the bytes up to the first such
  // point. A request starting at or past a cut point is no longer affected
  // by it, so every cut point interrupts exactly one resumed download.
  void drop_connection_at(std::deque<qint64> offsets) { drop_at_ = std::move(offsets); }
  // Serve bytes that differ from the body (one bit flipped in the middle).
  void set_corrupt(bool on) { corrupt_ = on; }
  // Deliver in chunks of `chunk` bytes every `delay_ms`.
  void set_slow(int chunk, int delay_ms) { slow_chunk_ = chunk; slow_delay_ms_ = delay_ms; }
  // Answer Range requests with 206 even when If-Range does not match.
  void set_ignore_if_range(bool on) { ignore_if_range_ = on; }
  // Answer Range requests with a 206 that starts at byte 0.
  void set_wrong_range_start(bool on) { wrong_range_start_ = on; }

  // Serve `body` as JSON at exactly `path` (a fake API answer).
  void set_document(QByteArray path, QByteArray body) { documents_[std::move(path)] = std::move(body); }

  const QList<RecordedRequest>& requests() const { return requests_; }

 private:
  void on_connection();
  void on_ready_read(QTcpSocket* socket);
  void respond(QTcpSocket* socket, const RecordedRequest& request);
  void send_body(QTcpSocket* socket, QByteArray data, qint64 first_offset);

  QByteArray body_;
  QByteArray etag_;
  bool range_support_ = true;
  bool corrupt_ = false;
  bool ignore_if_range_ = false;
  bool wrong_range_start_ = false;
  int slow_chunk_ = 0;
  int slow_delay_ms_ = 0;
  std::deque<qint64> drop_at_;
  QMap<QByteArray, QByteArray> documents_;
  QList<RecordedRequest> requests_;
  QMap<QTcpSocket*, QByteArray> pending_;
  // Last, so its sockets go before the state their signals touch.
  QTcpServer server_;
};

}  // namespace hearth::test
