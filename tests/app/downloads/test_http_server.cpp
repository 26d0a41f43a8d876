#include "test_http_server.h"

#include <QPointer>
#include <QTcpSocket>
#include <QTimer>

#include <memory>

namespace hearth::test {

TestHttpServer::TestHttpServer() {
  connect(&server_, &QTcpServer::newConnection, this, &TestHttpServer::on_connection);
  server_.listen(QHostAddress::LocalHost, 0);
}

QByteArray TestHttpServer::url(const char* path) const {
  return QByteArray("http://127.0.0.1:") + QByteArray::number(port()) + path;
}

void TestHttpServer::set_body(QByteArray body, QByteArray etag) {
  body_ = std::move(body);
  etag_ = std::move(etag);
}

void TestHttpServer::on_connection() {
  while (QTcpSocket* socket = server_.nextPendingConnection()) {
    connect(socket, &QTcpSocket::readyRead, this, [this, socket] { on_ready_read(socket); });
    connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
    connect(socket, &QObject::destroyed, this, [this, socket] { pending_.remove(socket); });
  }
}

void TestHttpServer::on_ready_read(QTcpSocket* socket) {
  QByteArray& buffer = pending_[socket];
  buffer += socket->readAll();
  for (;;) {
    const qsizetype end = buffer.indexOf("\r\n\r\n");
    if (end < 0) return;
    const QList<QByteArray> lines = buffer.left(end).split('\n');
    buffer.remove(0, end + 4);
    RecordedRequest request;
    const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
    request.path = first.value(1);
    for (qsizetype i = 1; i < lines.size(); ++i) {
      const qsizetype colon = lines[i].indexOf(':');
      if (colon > 0) request.headers[lines[i].left(colon).trimmed().toLower()] = lines[i].mid(colon + 1).trimmed();
    }
    requests_.append(request);
    respond(socket, request);
  }
}

void TestHttpServer::respond(QTcpSocket* socket, const RecordedRequest& request) {
  if (auto doc = documents_.constFind(request.path); doc != documents_.constEnd()) {
    socket->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                  QByteArray::number(doc->size()) + "\r\n\r\n" + *doc);
    return;
  }
  if (request.path == "/missing") {
    socket->write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    return;
  }
  if (request.path == "/redirect-insecure") {
    socket->write("HTTP/1.1 302 Found\r\nLocation: http://example.invalid/model.gguf\r\nContent-Length: 0\r\n\r\n");
    return;
  }
  if (request.path == "/redirect-local") {
    socket->write("HTTP/1.1 302 Found\r\nLocation: " + url("/model.gguf") + "\r\nContent-Length: 0\r\n\r\n");
    return;
  }
  QByteArray data = body_;
  if (corrupt_ && !data.isEmpty()) data[data.size() / 2] = static_cast<char>(data[data.size() / 2] ^ 0x01);
  const qint64 size = data.size();
  qint64 start = 0;
  bool partial = false;
  const QByteArray range = request.headers.value("range");
  if (range_support_ && range.startsWith("bytes=") && range.endsWith("-")) {
    const qint64 from = range.mid(6, range.size() - 7).toLongLong();
    const QByteArray if_range = request.headers.value("if-range");
    const bool validator_ok = if_range.isEmpty() || if_range == etag_ || ignore_if_range_;
    if (validator_ok) {
      if (from >= size) {
        socket->write("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */" + QByteArray::number(size) +
                      "\r\nContent-Length: 0\r\nETag: " + etag_ + "\r\n\r\n");
        return;
      }
      partial = true;
      start = wrong_range_start_ ? 0 : from;
    }
  }
  QByteArray head;
  if (partial) {
    head = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes " + QByteArray::number(start) + "-" +
           QByteArray::number(size - 1) + "/" + QByteArray::number(size) + "\r\n";
  } else {
    head = "HTTP/1.1 200 OK\r\n";
    if (range_support_) head += "Accept-Ranges: bytes\r\n";
  }
  head += "Content-Length: " + QByteArray::number(size - start) + "\r\nETag: " + etag_ +
          "\r\nContent-Type: application/octet-stream\r\n\r\n";
  socket->write(head);
  send_body(socket, data.mid(start), start);
}

void TestHttpServer::send_body(QTcpSocket* socket, QByteArray data, qint64 first_offset) {
  qint64 limit = data.size();
  bool drop = false;
  while (!drop_at_.empty() && drop_at_.front() <= first_offset) drop_at_.pop_front();
  if (!drop_at_.empty() && drop_at_.front() < first_offset + data.size()) {
    limit = drop_at_.front() - first_offset;
    drop = true;
  }
  QPointer<QTcpSocket> guard(socket);
  auto finish = [guard, drop] {
    if (guard && drop) {
      guard->flush();
      guard->disconnectFromHost();
    }
  };
  if (slow_chunk_ <= 0) {
    socket->write(data.left(limit));
    finish();
    return;
  }
  // Slow delivery: one chunk per timer tick.
  auto offset = std::make_shared<qint64>(0);
  auto timer = new QTimer(socket);
  timer->setInterval(slow_delay_ms_);
  connect(timer, &QTimer::timeout, socket, [guard, timer, offset, data, limit, finish, chunk = slow_chunk_] {
    if (!guard) return;
    const qint64 n = std::min<qint64>(chunk, limit - *offset);
    guard->write(data.mid(*offset, n));
    *offset += n;
    if (*offset >= limit) {
      timer->stop();
      finish();
    }
  });
  timer->start();
}

}  // namespace hearth::test
