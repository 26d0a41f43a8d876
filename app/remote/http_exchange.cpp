#include "remote/http_exchange.h"

#include <QEventLoop>
#include <QNetworkAccessManager>
#include <QSslError>
#include <QTimer>

namespace hearth::remote {
namespace {

constexpr qsizetype kMaxErrorBody = 64 * 1024;

}  // namespace

ExchangeResult run_exchange(QNetworkAccessManager& network, QNetworkRequest request, const QByteArray* body,
                            const ExchangeTimeouts& timeouts, const DataFn& on_data, const CancelledFn& cancelled) {
  ExchangeResult out;
  request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
  // Every reply is read as it arrives; nothing may come from a cache.
  request.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::AlwaysNetwork);
  request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);

  QEventLoop loop;
  QNetworkReply* reply = body ? network.post(request, *body) : network.get(request);
  bool connected = false;
  bool aborting = false;
  QTimer watchdog;
  watchdog.setSingleShot(true);
  QTimer poll;
  poll.setInterval(timeouts.poll_ms);

  auto abort = [&] {
    if (aborting) return;
    aborting = true;
    reply->abort();  // emits finished, which ends the loop
  };
  auto alive = [&] {
    // Any sign of the server restarts the inactivity clock.
    if (aborting) return;
    if (!connected) connected = true;
    watchdog.start(timeouts.inactivity_ms);
  };
  QObject::connect(&watchdog, &QTimer::timeout, &loop, [&] {
    if (connected) {
      out.inactivity_timed_out = true;
    } else {
      out.connect_timed_out = true;
    }
    abort();
  });
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (cancelled && cancelled()) {
      out.cancelled = true;
      abort();
    }
  });
  QObject::connect(reply, &QNetworkReply::requestSent, &loop, alive);
  QObject::connect(reply, &QNetworkReply::metaDataChanged, &loop, alive);
  QObject::connect(reply, &QNetworkReply::sslErrors, &loop, [&](const QList<QSslError>& errors) {
    // Never ignored: the handshake fails, and the message says why.
    QStringList text;
    for (const auto& e : errors) text << e.errorString();
    out.tls_errors = text.join(QStringLiteral("; "));
  });
  QObject::connect(reply, &QNetworkReply::readyRead, &loop, [&] {
    alive();
    if (aborting) return;
    const QByteArray bytes = reply->readAll();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status >= 200 && status < 300) {
      if (on_data && !on_data(bytes)) {
        out.stopped_by_reader = true;
        abort();
      }
    } else if (out.error_body.size() < kMaxErrorBody) {
      out.error_body.append(bytes.left(kMaxErrorBody - out.error_body.size()));
    }
  });
  QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);

  watchdog.start(timeouts.connect_ms);
  poll.start();
  if (!reply->isFinished()) loop.exec();
  watchdog.stop();
  poll.stop();

  // Bytes that arrived with the end of the answer.
  if (!aborting && reply->bytesAvailable() > 0) {
    const QByteArray bytes = reply->readAll();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (status >= 200 && status < 300) {
      if (on_data && !on_data(bytes)) out.stopped_by_reader = true;
    } else if (out.error_body.size() < kMaxErrorBody) {
      out.error_body.append(bytes.left(kMaxErrorBody - out.error_body.size()));
    }
  }
  out.http_status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  out.network_error = reply->error();
  out.network_error_text = reply->errorString();
  out.retry_after = reply->rawHeader("Retry-After");
  out.retry_after_ms = reply->rawHeader("retry-after-ms");
  out.location = reply->rawHeader("Location");
  out.content_type = reply->header(QNetworkRequest::ContentTypeHeader).toByteArray();
  // Finished and outside its signals: deleted now, since a blocking caller
  // may not return to an event loop (where deleteLater would act) for long.
  delete reply;
  return out;
}

bool wait_cancellable(int ms, const CancelledFn& cancelled, int poll_ms) {
  QEventLoop loop;
  QTimer done;
  done.setSingleShot(true);
  QTimer poll;
  bool was_cancelled = false;
  QObject::connect(&done, &QTimer::timeout, &loop, &QEventLoop::quit);
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (cancelled && cancelled()) {
      was_cancelled = true;
      loop.quit();
    }
  });
  done.start(ms);
  poll.start(poll_ms);
  loop.exec();
  return !was_cancelled;
}

}  // namespace hearth::remote
