// One HTTP request on a QNetworkAccessManager, run to its end by a local
// event loop so a blocking caller (the engine thread, hearth-cli) can use it:
// a connect timeout (TCP and TLS), an inactivity timeout once connected, a
// `cancelled` callback polled while it runs, redirects never followed (the
// bearer key goes to the configured host only), certificates always
// verified. The body of a 2xx answer streams to `on_data`; another answer's
// body is kept (its first 64 KiB) for the error message.
#pragma once

#include <QByteArray>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QString>

#include <functional>

class QNetworkAccessManager;

namespace hearth::remote {

struct ExchangeTimeouts {
  int connect_ms = 15000;
  int inactivity_ms = 120000;
  int poll_ms = 50;  // how often `cancelled` is asked
};

struct ExchangeResult {
  int http_status = 0;  // 0: no HTTP answer
  QNetworkReply::NetworkError network_error = QNetworkReply::NoError;
  QString network_error_text;
  QString tls_errors;          // the certificate problems, when the handshake failed on them
  QByteArray error_body;       // a non-2xx answer's body (capped)
  QByteArray retry_after;      // the Retry-After header
  QByteArray retry_after_ms;   // the retry-after-ms header (OpenAI)
  QByteArray location;         // a redirect's target
  QByteArray content_type;
  bool connect_timed_out = false;
  bool inactivity_timed_out = false;
  bool cancelled = false;
  bool stopped_by_reader = false;  // `on_data` returned false
};

// Called with each piece of a 2xx body as it arrives; false stops the
// transfer (the reader found an error or the end it wanted).
using DataFn = std::function<bool(const QByteArray& bytes)>;
using CancelledFn = std::function<bool()>;

// Sends `request` (GET when `body` is null, else POST) and returns when the
// answer is complete, failed, timed out or was cancelled.
ExchangeResult run_exchange(QNetworkAccessManager& network, QNetworkRequest request, const QByteArray* body,
                            const ExchangeTimeouts& timeouts, const DataFn& on_data, const CancelledFn& cancelled);

// Waits `ms` milliseconds while polling `cancelled`; false when cancelled.
bool wait_cancellable(int ms, const CancelledFn& cancelled, int poll_ms = 50);

}  // namespace hearth::remote
