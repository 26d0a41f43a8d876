#include "remote/endpoint.h"

#include <QHostAddress>

namespace hearth::remote {
namespace {

RemoteError insecure(const QString& url, const std::string& why) {
  return RemoteError{RemoteErrorKind::Insecure, 0, "endpoint '" + url.toStdString() + "' refused: " + why};
}

}  // namespace

bool is_loopback_host(const QString& host) {
  const QString h = host.toLower();
  if (h == QLatin1String("localhost") || h.endsWith(QLatin1String(".localhost"))) return true;
  QHostAddress address;
  if (!address.setAddress(h)) return false;
  return address.isLoopback();
}

bool is_private_host(const QString& host) {
  const QString h = host.toLower();
  // mDNS names only ever resolve on the local link.
  if (h.endsWith(QLatin1String(".local")) || h.endsWith(QLatin1String(".home.arpa"))) return true;
  QHostAddress address;
  if (!address.setAddress(h)) return false;
  bool v4 = false;
  const quint32 ip4 = address.toIPv4Address(&v4);
  if (v4) {
    return (ip4 >> 24) == 10 || (ip4 >> 20) == ((172u << 4) | 1u) || (ip4 >> 16) == ((192u << 8) | 168u) ||
           (ip4 >> 16) == ((169u << 8) | 254u);
  }
  const Q_IPV6ADDR ip6 = address.toIPv6Address();
  return (ip6[0] & 0xfe) == 0xfc || (ip6[0] == 0xfe && (ip6[1] & 0xc0) == 0x80);
}

std::string display_url(const QUrl& url) {
  return url.toDisplayString(QUrl::RemoveUserInfo | QUrl::RemoveQuery | QUrl::RemoveFragment).toStdString();
}

RemoteResult<QUrl> checked_base_url(const QString& base_url, bool allow_lan) {
  const QString text = base_url.trimmed();
  if (text.isEmpty()) return insecure(text, "the URL is empty");
  QUrl url(text, QUrl::StrictMode);
  if (!url.isValid()) return insecure(text, "not a valid URL (" + url.errorString().toStdString() + ")");
  const QString scheme = url.scheme().toLower();
  if (scheme != QLatin1String("https") && scheme != QLatin1String("http")) {
    return insecure(text, "the URL must start with https:// (or http:// for this machine)");
  }
  if (url.host().isEmpty()) return insecure(text, "the URL names no host");
  if (!url.userInfo().isEmpty()) {
    return insecure(text, "credentials in the URL are not accepted; store the API key for the endpoint instead");
  }
  if (!url.query().isEmpty() || !url.fragment().isEmpty()) {
    return insecure(text, "the base URL must not carry a query or a fragment");
  }
  if (scheme == QLatin1String("http") && !is_loopback_host(url.host())) {
    if (!allow_lan) {
      return insecure(text,
                      "plain http is only allowed to this machine (127.0.0.1, ::1, localhost); use https, or allow "
                      "local-network addresses for this endpoint");
    }
    if (!is_private_host(url.host())) {
      return insecure(text,
                      "plain http is allowed to local-network addresses only (10.0.0.0/8, 172.16.0.0/12, "
                      "192.168.0.0/16, fc00::/7, *.local); '" + url.host().toStdString() +
                          "' is not one; use https");
    }
  }
  QString path = url.path();
  while (path.endsWith(QLatin1Char('/'))) path.chop(1);
  if (path.isEmpty()) path = QStringLiteral("/v1");
  url.setPath(path);
  return url;
}

}  // namespace hearth::remote
