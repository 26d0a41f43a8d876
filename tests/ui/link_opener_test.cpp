// Which reply links Hearth opens: http and https with a host and mailto with
// an address, nothing else, however the scheme is dressed up. open() hands
// only allowed links to the desktop (observed through QDesktopServices'
// URL handlers, which take the place of the browser).
#include <QDesktopServices>
#include <QObject>
#include <QUrl>

#include <gtest/gtest.h>

#include "controllers/link_opener.h"
#include "url_recorder.h"

namespace hearth::ui {
namespace {

TEST(LinkCheck, OpensWebAndMailLinks) {
  for (const char* link : {"http://example.com", "https://example.com/a/b?q=1#frag",
                           "https://user@example.org:8443/x", "mailto:someone@example.com"}) {
    const LinkCheck c = check_link(QString::fromLatin1(link));
    EXPECT_TRUE(c.allowed) << link << ": " << c.reason.toStdString();
    EXPECT_EQ(c.shown, QString::fromLatin1(link));
  }
}

TEST(LinkCheck, SchemeCaseDoesNotMatterAndIsShownLowerCase) {
  const LinkCheck c = check_link(QStringLiteral("HTTPS://Example.com/Path"));
  ASSERT_TRUE(c.allowed) << c.reason.toStdString();
  EXPECT_EQ(c.url.scheme(), QStringLiteral("https"));
  EXPECT_EQ(c.shown, QStringLiteral("https://example.com/Path"));
  EXPECT_TRUE(check_link(QStringLiteral("MailTo:a@b.example")).allowed);
}

TEST(LinkCheck, RefusesOtherSchemesNamingThem) {
  struct Case {
    const char* link;
    const char* scheme;
  };
  for (const Case& c : {Case{"file:///etc/passwd", "file"}, Case{"javascript:alert(1)", "javascript"},
                        Case{"JavaScript:alert(1)", "javascript"},
                        Case{"data:text/html;base64,PHNjcmlwdD4=", "data"}, Case{"ftp://example.com/x", "ftp"},
                        Case{"vbscript:msgbox", "vbscript"}, Case{"smb://host/share", "smb"}}) {
    const LinkCheck r = check_link(QString::fromLatin1(c.link));
    EXPECT_FALSE(r.allowed) << c.link;
    EXPECT_TRUE(r.reason.contains(QString::fromLatin1(c.scheme) + QLatin1Char(':'))) << c.link << ": "
                                                                                     << r.reason.toStdString();
  }
}

TEST(LinkCheck, RefusesWhitespaceAndControlCharacterTricks) {
  const QString tricks[] = {
      QStringLiteral(" https://example.com"),       QStringLiteral("https://example.com "),
      QStringLiteral("\thttps://example.com"),      QStringLiteral("java\tscript:alert(1)"),
      QStringLiteral("java\nscript:alert(1)"),      QStringLiteral("\nfile:///etc/passwd"),
      QStringLiteral("https://exa mple.com"),       QString::fromUtf8("https://example.com\u200b"),
      QString::fromUtf8("https://\u202eexample.com"), QStringLiteral("https://example.com\r\n"),
      QString(QChar(0)) + QStringLiteral("https://example.com"),
  };
  for (const QString& link : tricks) {
    const LinkCheck c = check_link(link);
    EXPECT_FALSE(c.allowed) << link.toStdString();
    EXPECT_TRUE(c.reason.contains(QStringLiteral("spaces or control characters"))) << c.reason.toStdString();
  }
}

TEST(LinkCheck, RefusesWebLinksWithoutHostAndMailWithoutAddress) {
  for (const char* link : {"http:", "https:", "http:example.com", "http:///path", "https://", "https:/x"}) {
    const LinkCheck c = check_link(QString::fromLatin1(link));
    EXPECT_FALSE(c.allowed) << link;
    EXPECT_TRUE(c.reason.contains(QStringLiteral("no host"))) << link << ": " << c.reason.toStdString();
  }
  const LinkCheck mail = check_link(QStringLiteral("mailto:"));
  EXPECT_FALSE(mail.allowed);
  EXPECT_TRUE(mail.reason.contains(QStringLiteral("no address"))) << mail.reason.toStdString();
}

TEST(LinkCheck, RefusesRelativeEmptyAndMalformedLinks) {
  for (const char* link : {"", "example.com", "/etc/passwd", "//example.com", "#anchor", "http://[::1"}) {
    EXPECT_FALSE(check_link(QString::fromLatin1(link)).allowed) << link;
  }
}

TEST(LinkOpener, OpensOnlyAllowedLinks) {
  UrlRecorder opened;
  const char* schemes[] = {"http", "https", "mailto", "file", "javascript", "data"};
  for (const char* s : schemes) QDesktopServices::setUrlHandler(QString::fromLatin1(s), &opened, "open");
  LinkOpener opener;
  EXPECT_TRUE(opener.open(QStringLiteral("HTTPS://example.com/x")));
  EXPECT_FALSE(opener.open(QStringLiteral("file:///etc/passwd")));
  EXPECT_FALSE(opener.open(QStringLiteral("javascript:alert(1)")));
  EXPECT_FALSE(opener.open(QStringLiteral("data:text/plain,hi")));
  EXPECT_FALSE(opener.open(QStringLiteral(" https://example.com")));
  EXPECT_TRUE(opener.open(QStringLiteral("mailto:a@b.example")));
  for (const char* s : schemes) QDesktopServices::unsetUrlHandler(QString::fromLatin1(s));
  ASSERT_EQ(opened.urls.size(), 2);
  EXPECT_EQ(opened.urls[0], QUrl(QStringLiteral("https://example.com/x")));
  EXPECT_EQ(opened.urls[1], QUrl(QStringLiteral("mailto:a@b.example")));

  const QVariantMap refused = opener.check(QStringLiteral("file:///etc/passwd"));
  EXPECT_FALSE(refused.value(QStringLiteral("allowed")).toBool());
  EXPECT_EQ(refused.value(QStringLiteral("url")).toString(), QStringLiteral("file:///etc/passwd"));
  EXPECT_FALSE(refused.value(QStringLiteral("reason")).toString().isEmpty());
  const QVariantMap allowed = opener.check(QStringLiteral("https://example.com/a b"));
  EXPECT_FALSE(allowed.value(QStringLiteral("allowed")).toBool());
}

}  // namespace
}  // namespace hearth::ui

