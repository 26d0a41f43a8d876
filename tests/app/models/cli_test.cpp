// hearth-cli catalog and pull end to end: the real binary against the local
// test server, checking the JSON contract, exit codes and files.
#include "test_http_server.h"

#include <gtest/gtest.h>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>

namespace hearth::models {
namespace {

struct CliResult {
  int exit_code = -1;
  QByteArray out;
  QByteArray err;
};

// Runs hearth-cli while the event loop keeps serving the test server.
CliResult run_cli(const QStringList& args) {
  QProcess process;
  QEventLoop loop;
  QObject::connect(&process, &QProcess::finished, &loop, &QEventLoop::quit);
  QObject::connect(&process, &QProcess::errorOccurred, &loop, &QEventLoop::quit);
  QTimer::singleShot(20'000, &loop, &QEventLoop::quit);
  process.start(QStringLiteral(HEARTH_BINARY_DIR "/app/hearth-cli"), args);
  loop.exec();
  CliResult r;
  if (process.state() != QProcess::NotRunning) {
    process.kill();
    process.waitForFinished();
    return r;
  }
  r.exit_code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
  r.out = process.readAllStandardOutput();
  r.err = process.readAllStandardError();
  return r;
}

class CliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static int argc = 1;
    static char name[] = "cli_test";
    static char* argv[] = {name, nullptr};
    if (!QCoreApplication::instance()) new QCoreApplication(argc, argv);
  }
};

TEST_F(CliTest, CatalogJsonFollowsTheContract) {
  const CliResult r = run_cli({QStringLiteral("catalog"), QStringLiteral("--json"), QStringLiteral("--ctx"),
                               QStringLiteral("2048")});
  ASSERT_EQ(r.exit_code, 0) << r.err.toStdString();
  QJsonParseError error{};
  const QJsonDocument doc = QJsonDocument::fromJson(r.out, &error);
  ASSERT_EQ(error.error, QJsonParseError::NoError) << r.out.toStdString();
  const QJsonArray models = doc.object().value(QStringLiteral("models")).toArray();
  ASSERT_GE(models.size(), 15);
  for (const auto& m : models) {
    const QJsonObject model = m.toObject();
    for (const char* k : {"id", "name", "family", "parameters", "license", "context_length", "variants"}) {
      EXPECT_TRUE(model.contains(QLatin1String(k))) << k;
    }
    for (const auto& v : model.value(QStringLiteral("variants")).toArray()) {
      const QJsonObject variant = v.toObject();
      for (const char* k : {"quant", "url", "size_bytes", "sha256", "fits", "estimated_bytes"}) {
        EXPECT_TRUE(variant.contains(QLatin1String(k))) << k;
      }
      const QString fits = variant.value(QStringLiteral("fits")).toString();
      EXPECT_TRUE(fits == "gpu" || fits == "partial" || fits == "cpu" || fits == "no") << fits.toStdString();
      EXPECT_GT(variant.value(QStringLiteral("estimated_bytes")).toDouble(),
                variant.value(QStringLiteral("size_bytes")).toDouble());
    }
  }
}

TEST_F(CliTest, UsageErrorsExitWithOne) {
  EXPECT_EQ(run_cli({QStringLiteral("catalog"), QStringLiteral("--kv-type"), QStringLiteral("q4")}).exit_code, 1);
  EXPECT_EQ(run_cli({QStringLiteral("pull")}).exit_code, 1);
  EXPECT_EQ(run_cli({QStringLiteral("pull"), QStringLiteral("x:Q4_0"), QStringLiteral("--sha256"),
                     QStringLiteral("abc")})
                .exit_code,
            1);
}

TEST_F(CliTest, PullDownloadsVerifiesAndRefusesBadInput) {
  QTemporaryDir dir;
  test::TestHttpServer server;
  QFile fixture(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-qwen2-q8_0.gguf"));
  ASSERT_TRUE(fixture.open(QIODevice::ReadOnly));
  const QByteArray body = fixture.readAll();
  server.set_body(body, "\"e1\"");
  const QString sha = QString::fromLatin1(QCryptographicHash::hash(body, QCryptographicHash::Sha256).toHex());
  const QString url = QString::fromLatin1(server.url("/tiny-qwen2-q8_0.gguf"));

  // Plain http is refused without the test-only switch.
  CliResult r = run_cli({QStringLiteral("pull"), url, QStringLiteral("--dir"), dir.path()});
  EXPECT_EQ(r.exit_code, 2);

  // Wrong checksum: exit 2, one line naming the file, nothing kept.
  r = run_cli({QStringLiteral("pull"), url, QStringLiteral("--dir"), dir.path(), QStringLiteral("--sha256"),
               QString(64, QLatin1Char('0')), QStringLiteral("--allow-http-loopback")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.contains("SHA-256 mismatch")) << r.err.toStdString();
  EXPECT_TRUE(QDir(dir.path()).entryList(QDir::Files).isEmpty());

  // An interrupted first run leaves a .part that the next run resumes.
  server.drop_connection_at({body.size() / 2});
  r = run_cli({QStringLiteral("pull"), url, QStringLiteral("--dir"), dir.path(), QStringLiteral("--sha256"), sha,
               QStringLiteral("--allow-http-loopback")});
  const QString dest = dir.filePath(QStringLiteral("tiny-qwen2-q8_0.gguf"));
  ASSERT_EQ(r.exit_code, 0) << r.err.toStdString();  // retried automatically
  EXPECT_EQ(r.out.trimmed(), dest.toUtf8());
  QFile got(dest);
  ASSERT_TRUE(got.open(QIODevice::ReadOnly));
  EXPECT_EQ(got.readAll(), body);
  bool resumed = false;
  for (const auto& req : server.requests()) resumed = resumed || req.headers.value("range") == "bytes=" + QByteArray::number(body.size() / 2) + "-";
  EXPECT_TRUE(resumed);
  EXPECT_TRUE(QFile::exists(dest + QStringLiteral(".hearth.json")));

  // Already there and verified: nothing fetched.
  const auto requests_before = server.requests().size();
  r = run_cli({QStringLiteral("pull"), url, QStringLiteral("--dir"), dir.path(), QStringLiteral("--sha256"), sha,
               QStringLiteral("--allow-http-loopback")});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(server.requests().size(), requests_before);

  // Unknown catalog model.
  r = run_cli({QStringLiteral("pull"), QStringLiteral("no-such-model:Q4_0"), QStringLiteral("--dir"), dir.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.contains("no-such-model")) << r.err.toStdString();
}

}  // namespace
}  // namespace hearth::models
