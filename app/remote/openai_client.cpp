#include "remote/openai_client.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkProxy>

#include <algorithm>
#include <cmath>

#include "remote/sse_parser.h"

namespace hearth::remote {
namespace {

// A model list larger than this is not one.
constexpr qsizetype kMaxModelListBytes = 16 << 20;
// No chat reply is this long; a server that streams without end is stopped.
constexpr size_t kMaxReplyBytes = size_t{64} << 20;

std::string seconds_text(int ms) {
  const double s = ms / 1000.0;
  char buf[32];
  std::snprintf(buf, sizeof buf, s == std::floor(s) ? "%.0f s" : "%.1f s", s);
  return buf;
}

// "endpoint URL, model 'NAME'": where every message says it happened.
std::string where(const QUrl& base, const std::string& model) {
  std::string w = "endpoint " + display_url(base);
  if (!model.empty()) w += ", model '" + model + "'";
  return w;
}

std::string with_detail(std::string message, const std::string& detail) {
  if (!detail.empty()) message += ": " + detail;
  return message;
}

RemoteError classify_http(const ExchangeResult& r, const QUrl& base, const std::string& model) {
  const ErrorBody body = parse_error_body(std::string_view(r.error_body.constData(), r.error_body.size()));
  const std::string w = where(base, model);
  const int s = r.http_status;
  const std::string status = "HTTP " + std::to_string(s);
  if (body.code == "model_not_found" || (s == 404 && !model.empty())) {
    return {RemoteErrorKind::ModelNotFound, s,
            with_detail("the model '" + model + "' is not served at " + display_url(base) + " (" + status + ")",
                        body.message) + "; list the endpoint's models and pick another"};
  }
  if (s >= 300 && s < 400) {
    return {RemoteErrorKind::HttpError, s,
            w + ": the server redirects (" + status + ") to '" + r.location.toStdString() +
                "'; redirects are not followed, so the API key stays with the configured host; use the target as "
                "the endpoint URL if it is trusted"};
  }
  if (s == 401 || s == 403) {
    return {RemoteErrorKind::Unauthorized, s,
            with_detail(w + ": the server refused the API key (" + status + ")", body.message) +
                "; check the key stored for this endpoint"};
  }
  if (s == 404) {
    return {RemoteErrorKind::HttpError, s,
            with_detail(w + ": not found (" + status + ")", body.message) +
                "; is the base URL right? OpenAI-compatible servers usually serve under /v1"};
  }
  if (s == 429) {
    return {RemoteErrorKind::RateLimited, s, with_detail(w + ": rate limited (" + status + ")", body.message)};
  }
  if (s >= 500) {
    return {RemoteErrorKind::ServerError, s, with_detail(w + ": the server failed (" + status + ")", body.message)};
  }
  return {RemoteErrorKind::HttpError, s, with_detail(w + ": the server answered " + status, body.message)};
}

// A failure before any HTTP answer (or a timeout), else nullopt.
std::optional<RemoteError> classify_transport(const ExchangeResult& r, const EndpointConfig& config, const QUrl& base,
                                              const std::string& model) {
  const std::string w = where(base, model);
  if (r.connect_timed_out) {
    return RemoteError{RemoteErrorKind::Unreachable, 0,
                       "cannot reach " + w + ": no connection within " + seconds_text(config.connect_timeout_ms)};
  }
  if (r.inactivity_timed_out) {
    return RemoteError{RemoteErrorKind::Timeout, r.http_status,
                       w + ": the server sent nothing for " + seconds_text(config.inactivity_timeout_ms) +
                           " and the request was stopped (a slow or stuck server)"};
  }
  if (r.http_status != 0) return std::nullopt;
  if (!r.tls_errors.isEmpty() || r.network_error == QNetworkReply::SslHandshakeFailedError) {
    const std::string why = r.tls_errors.isEmpty() ? r.network_error_text.toStdString() : r.tls_errors.toStdString();
    return RemoteError{RemoteErrorKind::Tls, 0,
                       "TLS handshake with " + w + " failed (" + why +
                           "); Hearth only accepts certificates this system trusts"};
  }
  switch (r.network_error) {
    case QNetworkReply::NoError:
      return RemoteError{RemoteErrorKind::Malformed, 0, w + ": the server closed the connection without an HTTP answer"};
    case QNetworkReply::ConnectionRefusedError:
      return RemoteError{RemoteErrorKind::Unreachable, 0,
                         "cannot reach " + w + ": connection refused (is the server running on that host and port?)"};
    case QNetworkReply::HostNotFoundError:
      return RemoteError{RemoteErrorKind::Unreachable, 0,
                         "cannot reach " + w + ": host '" + base.host().toStdString() + "' not found"};
    default:
      return RemoteError{RemoteErrorKind::Unreachable, 0,
                         "cannot reach " + w + ": " + r.network_error_text.toStdString()};
  }
}

RemoteErrorKind kind_of_stream_error(const std::string& code) {
  if (code == "model_not_found") return RemoteErrorKind::ModelNotFound;
  if (code == "rate_limit_exceeded" || code == "429") return RemoteErrorKind::RateLimited;
  if (code == "invalid_api_key" || code == "401") return RemoteErrorKind::Unauthorized;
  return RemoteErrorKind::ServerError;
}

QNetworkRequest make_request(const QUrl& url, const EndpointConfig& config, bool stream) {
  QNetworkRequest request(url);
  request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
  request.setRawHeader("Accept", stream ? QByteArrayLiteral("text/event-stream") : QByteArrayLiteral("application/json"));
  if (!config.api_key.isEmpty()) request.setRawHeader("Authorization", "Bearer " + config.api_key.toUtf8());
  return request;
}

QUrl join(const QUrl& base, const char* path) {
  QUrl url = base;
  url.setPath(base.path() + QLatin1String(path));
  return url;
}

ExchangeTimeouts timeouts_of(const EndpointConfig& config) {
  ExchangeTimeouts t;
  t.connect_ms = std::max(1, config.connect_timeout_ms);
  t.inactivity_ms = std::max(1, config.inactivity_timeout_ms);
  return t;
}

}  // namespace

std::optional<int> retry_after_ms(const ExchangeResult& result) {
  bool ok = false;
  const double ms = result.retry_after_ms.trimmed().toDouble(&ok);
  if (ok && ms >= 0) return static_cast<int>(std::min(ms, 1e9));
  const QByteArray value = result.retry_after.trimmed();
  if (value.isEmpty()) return std::nullopt;
  const double seconds = value.toDouble(&ok);
  if (ok && seconds >= 0) return static_cast<int>(std::min(seconds * 1000.0, 1e9));
  // An HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT" (always GMT, English names).
  QString date = QString::fromLatin1(value);
  if (!date.endsWith(QLatin1String(" GMT"))) return std::nullopt;
  date.chop(4);
  QDateTime at = QLocale::c().toDateTime(date, QStringLiteral("ddd, dd MMM yyyy HH:mm:ss"));
  if (!at.isValid()) return std::nullopt;
  at.setTimeSpec(Qt::UTC);
  const qint64 wait = QDateTime::currentDateTimeUtc().msecsTo(at);
  return static_cast<int>(std::clamp<qint64>(wait, 0, 1000000000));
}

OpenAiClient::OpenAiClient(EndpointConfig config)
    : config_(std::move(config)),
      base_(checked_base_url(config_.base_url, config_.allow_lan)),
      network_(std::make_unique<QNetworkAccessManager>()) {
  // Traffic to this machine or the local network never goes through a
  // proxy, whatever the application's proxy settings say.
  if (base_.ok() && (is_loopback_host(base_->host()) || is_private_host(base_->host()))) {
    network_->setProxy(QNetworkProxy::NoProxy);
  }
  // Certificates are always verified: nothing here ever ignores sslErrors.
}

OpenAiClient::~OpenAiClient() = default;

RemoteResult<std::vector<RemoteModel>> OpenAiClient::list_models(const CancelledFn& cancelled) {
  if (!base_.ok()) return base_.error();
  const QUrl url = join(*base_, "/models");
  QByteArray body;
  bool too_large = false;
  const ExchangeResult r = run_exchange(
      *network_, make_request(url, config_, false), nullptr, timeouts_of(config_),
      [&](const QByteArray& bytes) {
        body.append(bytes);
        too_large = body.size() > kMaxModelListBytes;
        return !too_large;
      },
      cancelled);
  if (r.cancelled) return RemoteError{RemoteErrorKind::Cancelled, 0, "listing the models was cancelled"};
  if (auto e = classify_transport(r, config_, *base_, {})) return *e;
  if (r.http_status < 200 || r.http_status >= 300) return classify_http(r, *base_, {});
  if (too_large) {
    return RemoteError{RemoteErrorKind::Malformed, r.http_status,
                       where(*base_, {}) + ": the model list is larger than 16 MiB"};
  }
  if (r.network_error != QNetworkReply::NoError) {
    return RemoteError{RemoteErrorKind::StreamCut, r.http_status,
                       where(*base_, {}) + ": the model list was cut off (" + r.network_error_text.toStdString() + ")"};
  }
  auto models = parse_model_list(std::string_view(body.constData(), body.size()));
  if (!models.ok()) {
    return RemoteError{RemoteErrorKind::Malformed, r.http_status,
                       where(*base_, {}) + ": " + models.error().message};
  }
  return std::move(models).value();
}

ChatReply OpenAiClient::stream_chat(const ChatCall& call, const StreamCallbacks& callbacks,
                                    const CancelledFn& cancelled) {
  ChatReply out;
  if (!base_.ok()) {
    out.error = base_.error();
    return out;
  }
  const QUrl url = join(*base_, "/chat/completions");
  const QByteArray body = QByteArray::fromStdString(chat_request_body(call));
  const std::string w = where(*base_, call.model);
  for (int attempt = 0;; ++attempt) {
    SseParser parser;
    std::vector<SseEvent> events;
    std::optional<RemoteError> stream_error;
    bool done = false;
    bool stopped = false;  // cancelled between two pieces of one read
    double first_ms = -1;
    double last_ms = 0;
    QElapsedTimer clock;
    clock.start();
    auto piece_arrived = [&] {
      const double now = static_cast<double>(clock.nsecsElapsed()) / 1e6;
      if (first_ms < 0) first_ms = now;
      last_ms = now;
      ++out.pieces;
    };
    auto on_data = [&](const QByteArray& bytes) -> bool {
      events.clear();
      if (auto st = parser.feed(std::string_view(bytes.constData(), bytes.size()), events); !st.ok()) {
        stream_error = RemoteError{RemoteErrorKind::Malformed, 200, w + ": " + st.error().message};
        return false;
      }
      for (const auto& event : events) {
        if (event.data == "[DONE]") {
          // The reply is complete; a server that then keeps the connection
          // open is not waited for.
          done = true;
          return false;
        }
        auto chunk = parse_stream_chunk(event.data);
        if (!chunk.ok()) {
          stream_error = RemoteError{RemoteErrorKind::Malformed, 200, w + ": " + chunk.error().message};
          return false;
        }
        if (chunk->is_error) {
          stream_error = RemoteError{kind_of_stream_error(chunk->error_code), 200,
                                     w + ": the server reported an error mid-reply: " + chunk->error_message};
          return false;
        }
        if (!chunk->reasoning.empty()) {
          out.reasoning += chunk->reasoning;
          piece_arrived();
          if (callbacks.on_reasoning) callbacks.on_reasoning(chunk->reasoning);
        }
        if (!chunk->content.empty()) {
          out.content += chunk->content;
          piece_arrived();
          if (callbacks.on_content) callbacks.on_content(chunk->content);
        }
        if (out.content.size() + out.reasoning.size() > kMaxReplyBytes) {
          stream_error = RemoteError{RemoteErrorKind::Malformed, 200,
                                     w + ": the reply is larger than " + std::to_string(kMaxReplyBytes >> 20) +
                                         " MiB; it was stopped"};
          return false;
        }
        if (!chunk->finish_reason.empty()) out.finish_reason = chunk->finish_reason;
        if (chunk->usage) out.usage = chunk->usage;
        // One read can hold many pieces (a fast server): a stop is honoured
        // after each, as the local engine honours it after each token.
        if ((!chunk->content.empty() || !chunk->reasoning.empty()) && cancelled && cancelled()) {
          stopped = true;
          return false;
        }
      }
      return true;
    };
    const ExchangeResult r =
        run_exchange(*network_, make_request(url, config_, true), &body, timeouts_of(config_), on_data, cancelled);

    if (r.cancelled || stopped) {
      out.cancelled = true;
      return out;
    }
    if (r.http_status == 429 && out.pieces == 0) {
      if (attempt >= config_.max_retries) {
        RemoteError e = classify_http(r, *base_, call.model);
        e.message += "; gave up after " + std::to_string(attempt) + (attempt == 1 ? " retry" : " retries");
        out.error = e;
        return out;
      }
      const int wait = retry_after_ms(r).value_or(config_.initial_backoff_ms << std::min(attempt, 16));
      if (wait > config_.max_retry_wait_ms) {
        RemoteError e = classify_http(r, *base_, call.model);
        e.message += "; the server asks to wait " + seconds_text(wait) + ", longer than the " +
                     seconds_text(config_.max_retry_wait_ms) + " Hearth waits";
        out.error = e;
        return out;
      }
      if (callbacks.on_retry) callbacks.on_retry(wait, attempt + 1);
      ++out.retries;
      if (!wait_cancellable(wait, cancelled)) {
        out.cancelled = true;
        return out;
      }
      continue;
    }
    if (first_ms >= 0) out.ttft_ms = first_ms;
    const int64_t tokens = out.completion_tokens();
    if (tokens > 1 && last_ms > first_ms) out.tokens_per_second = static_cast<double>(tokens - 1) * 1000.0 / (last_ms - first_ms);

    if (stream_error) {
      out.error = stream_error;
      return out;
    }
    if (r.inactivity_timed_out) {
      out.cut = out.pieces > 0 || r.http_status != 0;
      out.error = classify_transport(r, config_, *base_, call.model);
      return out;
    }
    if (auto e = classify_transport(r, config_, *base_, call.model)) {
      out.error = e;
      return out;
    }
    if (r.http_status < 200 || r.http_status >= 300) {
      out.error = classify_http(r, *base_, call.model);
      return out;
    }
    if (!done) {
      if (out.pieces == 0 && !r.content_type.startsWith("text/event-stream")) {
        out.error = RemoteError{RemoteErrorKind::Malformed, r.http_status,
                                w + ": the server answered '" + r.content_type.toStdString() +
                                    "' instead of an event stream"};
        return out;
      }
      out.cut = true;
      const std::string how = r.network_error == QNetworkReply::NoError
                                  ? std::string("the server closed the connection")
                                  : r.network_error_text.toStdString();
      out.error = RemoteError{RemoteErrorKind::StreamCut, r.http_status,
                              w + ": the reply was cut off before its end (" + how + "); " +
                                  std::to_string(out.content.size()) + " bytes of it arrived and are kept"};
    }
    return out;
  }
}

}  // namespace hearth::remote
