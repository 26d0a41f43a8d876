#include "controllers/link_opener.h"

#include <QDesktopServices>

#include <utility>

namespace hearth::ui {

namespace {

bool has_space_or_control(const QString& s) {
  for (const QChar c : s) {
    if (c.isSpace() || c.category() == QChar::Other_Control || c.category() == QChar::Other_Format) return true;
  }
  return false;
}

LinkCheck refuse(QString reason) {
  LinkCheck c;
  c.reason = std::move(reason);
  return c;
}

}  // namespace

LinkCheck check_link(const QString& link) {
  if (link.isEmpty()) return refuse(QStringLiteral("The link is empty."));
  if (has_space_or_control(link)) {
    return refuse(QStringLiteral("The link contains spaces or control characters; Hearth does not open it."));
  }
  const QUrl url(link, QUrl::StrictMode);
  if (!url.isValid()) {
    return refuse(QStringLiteral("The link is not a valid URL: %1").arg(url.errorString()));
  }
  // QUrl lower-cases the scheme ("HTTPS:" is https).
  const QString scheme = url.scheme();
  if (scheme == QLatin1String("http") || scheme == QLatin1String("https")) {
    if (url.host().isEmpty()) return refuse(QStringLiteral("The %1 link has no host.").arg(scheme));
  } else if (scheme == QLatin1String("mailto")) {
    if (url.path().isEmpty()) return refuse(QStringLiteral("The mailto link has no address."));
  } else if (scheme.isEmpty()) {
    return refuse(QStringLiteral("The link has no scheme; only http, https and mailto links are opened."));
  } else {
    return refuse(QStringLiteral("Hearth does not open %1: links; only http, https and mailto links are opened.")
                      .arg(scheme));
  }
  LinkCheck c;
  c.allowed = true;
  c.url = url;
  c.shown = QString::fromUtf8(url.toEncoded());
  return c;
}

QVariantMap LinkOpener::check(const QString& link) const {
  const LinkCheck c = check_link(link);
  return {{QStringLiteral("allowed"), c.allowed},
          {QStringLiteral("url"), c.allowed ? c.shown : link},
          {QStringLiteral("reason"), c.reason}};
}

bool LinkOpener::open(const QString& link) const {
  const LinkCheck c = check_link(link);
  if (!c.allowed) return false;
  return QDesktopServices::openUrl(c.url);
}

}  // namespace hearth::ui
