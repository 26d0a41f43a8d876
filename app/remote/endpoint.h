// A remote OpenAI-compatible endpoint and the rule for which URLs Hearth will
// talk to: https always (certificates always verified; there is no switch to
// turn that off), plain http only to this machine (127.0.0.0/8, ::1,
// localhost) or, when the user allows it for this endpoint, to a private
// network address. Anything else is refused with a message naming the URL.
#pragma once

#include <QString>
#include <QUrl>

#include "remote/remote_error.h"

namespace hearth::remote {

struct EndpointConfig {
  QString base_url;        // e.g. "https://host/v1"; without a path, "/v1" is added
  bool allow_lan = false;  // plain http to private addresses (10/8, 172.16/12, 192.168/16, fc00::/7, *.local)
  QString api_key;         // sent as "Authorization: Bearer KEY" when not empty; never logged
  int connect_timeout_ms = 15000;      // no connection (TCP + TLS) within this: unreachable
  int inactivity_timeout_ms = 120000;  // no byte for this long once connected: a slow server
  int max_retries = 3;                 // retries of a 429 answer before giving up
  int max_retry_wait_ms = 60000;       // a longer Retry-After is not waited for
  int initial_backoff_ms = 1000;       // wait before the first retry when no Retry-After is given; doubles
};

// The base URL normalized (no trailing slash, "/v1" added to an empty path)
// when the policy allows it, else an Insecure error saying why.
RemoteResult<QUrl> checked_base_url(const QString& base_url, bool allow_lan);

// Is `host` (a name or an address literal) this machine?
bool is_loopback_host(const QString& host);
// Is `host` an address in a private range (or an mDNS .local name)?
bool is_private_host(const QString& host);

// The URL shown in messages: scheme, host, port and path, never credentials.
std::string display_url(const QUrl& url);

}  // namespace hearth::remote
