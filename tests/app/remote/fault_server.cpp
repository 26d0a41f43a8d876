#include "fault_server.h"

#include <QSslConfiguration>
#include <QSslServer>
#include <QSslSocket>
#include <QTcpSocket>

#include <nlohmann/json.hpp>

namespace hearth::testing {

QByteArray http_response(int status, const QByteArray& body, const QByteArray& extra_headers,
                         const QByteArray& content_type) {
  QByteArray r = "HTTP/1.1 " + QByteArray::number(status) + " Status\r\n";
  r += "Content-Type: " + content_type + "\r\n";
  r += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
  r += extra_headers;
  r += "Connection: close\r\n\r\n";
  return r + body;
}

QByteArray sse_response(const QByteArray& events) {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n" +
         events;
}

QByteArray content_event(const std::string& text, bool reasoning) {
  const nlohmann::json delta = {{reasoning ? "reasoning_content" : "content", text}};
  const nlohmann::json chunk = {{"id", "c1"},
                                {"object", "chat.completion.chunk"},
                                {"choices", {{{"index", 0}, {"delta", delta}, {"finish_reason", nullptr}}}}};
  return "data: " + QByteArray::fromStdString(chunk.dump()) + "\n\n";
}

QByteArray usage_event(int prompt_tokens, int completion_tokens) {
  const nlohmann::json chunk = {
      {"object", "chat.completion.chunk"},
      {"choices", nlohmann::json::array()},
      {"usage", {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens},
                 {"total_tokens", prompt_tokens + completion_tokens}}}};
  return "data: " + QByteArray::fromStdString(chunk.dump()) + "\n\n";
}

FaultServer::FaultServer() : server_(std::make_unique<QTcpServer>()) { accept(); }

FaultServer::FaultServer(const QSslCertificate& certificate, const QSslKey& key) : tls_(true) {
  auto ssl = std::make_unique<QSslServer>();
  QSslConfiguration config = QSslConfiguration::defaultConfiguration();
  config.setLocalCertificate(certificate);
  config.setPrivateKey(key);
  config.setPeerVerifyMode(QSslSocket::VerifyNone);
  ssl->setSslConfiguration(config);
  server_ = std::move(ssl);
  accept();
}

FaultServer::~FaultServer() = default;

void FaultServer::accept() {
  QObject::connect(server_.get(), &QTcpServer::pendingConnectionAvailable, server_.get(), [this] {
    while (QTcpSocket* socket = server_->nextPendingConnection()) serve(socket);
  });
  server_->listen(QHostAddress::LocalHost, 0);
}

quint16 FaultServer::port() const { return server_->serverPort(); }

std::string FaultServer::base_url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port()) + "/v1";
}

void FaultServer::serve(QTcpSocket* socket) {
  auto buffer = std::make_shared<QByteArray>();
  QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
  QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket, buffer] {
    buffer->append(socket->readAll());
    const qsizetype head_end = buffer->indexOf("\r\n\r\n");
    if (head_end < 0) return;
    qsizetype length = 0;
    for (const QByteArray& line : buffer->left(head_end).split('\n')) {
      if (line.toLower().startsWith("content-length:")) length = line.mid(15).trimmed().toLongLong();
    }
    if (buffer->size() < head_end + 4 + length) return;
    requests_.push_back(*buffer);
    buffer->clear();
    if (replies_.empty()) return;
    const FaultReply& reply = replies_[std::min(next_, replies_.size() - 1)];
    ++next_;
    const QByteArray bytes = reply.cut_at >= 0 ? reply.bytes.left(reply.cut_at) : reply.bytes;
    socket->write(bytes);
    if (reply.hang) return;
    socket->disconnectFromHost();  // after the bytes are written
  });
}

}  // namespace hearth::testing
