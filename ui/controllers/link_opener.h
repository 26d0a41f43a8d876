// Which links in a reply Hearth opens, and opening them. A reply is model
// output: its links may carry any scheme (file:, javascript:, data:, custom
// handlers registered by other programs). Only web and mail links are
// opened, each after the user confirmed the full URL; anything else is
// refused with the reason shown.
#pragma once

#include <QObject>
#include <QString>
#include <QUrl>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

namespace hearth::ui {

struct LinkCheck {
  bool allowed = false;
  QUrl url;        // the parsed link (scheme lower-cased), valid when allowed
  QString shown;   // the full URL as the confirmation shows it (encoded, no decoding tricks)
  QString reason;  // why a link is refused, for the user
};

// Pure function: http and https with a host, mailto with an address. Links
// with whitespace or control characters anywhere are refused rather than
// cleaned up (a browser would strip them, which is how "java\tscript:" and
// " file:" slip past naive checks).
LinkCheck check_link(const QString& link);

// QML front of check_link() and of the desktop's URL opener: the view asks
// check() first, shows the confirmation or the refusal, and calls open()
// only after the user confirmed. open() checks again, so nothing but an
// allowed link ever reaches the desktop.
class LinkOpener : public QObject {
  Q_OBJECT
  QML_ELEMENT

 public:
  explicit LinkOpener(QObject* parent = nullptr) : QObject(parent) {}

  // {allowed: bool, url: string (shown in full), reason: string}
  Q_INVOKABLE QVariantMap check(const QString& link) const;
  // Opens an allowed link in the desktop's handler; false (and nothing
  // opened) for a refused one.
  Q_INVOKABLE bool open(const QString& link) const;
};

}  // namespace hearth::ui
