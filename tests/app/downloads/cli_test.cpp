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
  // --vram-free keeps the verdicts independent of this machine's GPU (and
  // keeps a GPU driver out of a unit test).
  const CliResult r = run_cli({QStringLiteral("catalog"), QStringLiteral("--json"), QStringLiteral("--ctx"),
                               QStringLiteral("2048"), QStringLiteral("--vram-free"), QStringLiteral("0")});
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

// The text listing marks what the catalog only estimates, variant by
// variant as resources/catalog.json says: "≈" before an estimated size (and
// the memory figure built on it), "*" after a size without a published
// SHA-256, and a legend that says both are settled at download.
TEST_F(CliTest, CatalogTextMarksEstimatedSizesAndUnpublishedHashes) {
  const CliResult r = run_cli({QStringLiteral("catalog"), QStringLiteral("--ctx"), QStringLiteral("2048"),
                               QStringLiteral("--vram-free"), QStringLiteral("0")});
  ASSERT_EQ(r.exit_code, 0) << r.err.toStdString();
  QFile file(QStringLiteral(HEARTH_RESOURCES_DIR "/catalog.json"));
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QJsonArray models = QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("models")).toArray();
  const QList<QByteArray> lines = r.out.split('\n');
  int checked = 0;
  bool any_estimate = false, any_unpublished = false;
  for (const auto& m : models) {
    const QByteArray id = m.toObject().value(QStringLiteral("id")).toString().toUtf8();
    qsizetype at = -1;
    for (qsizetype i = 0; i < lines.size(); ++i) {
      if (lines[i].startsWith(id + "  (")) at = i;
    }
    ASSERT_GE(at, 0) << id.toStdString();
    const QJsonArray variants = m.toObject().value(QStringLiteral("variants")).toArray();
    for (qsizetype k = 0; k < variants.size(); ++k) {
      const QJsonObject v = variants[k].toObject();
      const QByteArray line = lines.value(at + 1 + k);
      ASSERT_TRUE(line.startsWith("  " + v.value(QStringLiteral("quant")).toString().toUtf8())) << line.toStdString();
      const bool estimate = v.value(QStringLiteral("size_is_estimate")).toBool();
      const bool unpublished = v.value(QStringLiteral("sha256")).isNull();
      EXPECT_EQ(line.count("≈"), estimate ? 2 : 0) << line.toStdString();
      EXPECT_EQ(line.contains('*'), unpublished) << line.toStdString();
      any_estimate = any_estimate || estimate;
      any_unpublished = any_unpublished || unpublished;
      ++checked;
    }
  }
  EXPECT_GE(checked, 30);
  EXPECT_EQ(r.out.contains("size estimated from the parameter count and quant level; the exact size is verified at "
                           "download"),
            any_estimate);
  EXPECT_EQ(r.out.contains("verifies the download against it"), any_unpublished);
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

// A Hugging Face file URL: pull asks the (fake) tree API for the file's LFS
// object id and enforces it as the SHA-256. A published hash that does not
// match the served bytes fails the pull with a clear error and leaves no file;
// the right one installs a verified file.
TEST_F(CliTest, PullEnforcesTheSha256PublishedByTheHuggingFaceApi) {
  QTemporaryDir dir;
  test::TestHttpServer server;
  QFile fixture(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf"));
  ASSERT_TRUE(fixture.open(QIODevice::ReadOnly));
  const QByteArray body = fixture.readAll();
  server.set_body(body, "\"e1\"");
  const QByteArray sha = QCryptographicHash::hash(body, QCryptographicHash::Sha256).toHex();
  const QByteArray other = QCryptographicHash::hash(body + "x", QCryptographicHash::Sha256).toHex();
  const auto tree = [&](const QByteArray& oid) {
    // Shaped like the tree API's answer: a Git file and an LFS file.
    return "[{\"type\": \"file\", \"oid\": \"0123456789abcdef0123456789abcdef01234567\", \"size\": 12, "
           "\"path\": \"README.md\"}, {\"type\": \"file\", \"oid\": \"89abcdef0123456789abcdef0123456789abcdef\", "
           "\"size\": " + QByteArray::number(body.size()) + ", \"lfs\": {\"oid\": \"" + oid + "\", \"size\": " +
           QByteArray::number(body.size()) + ", \"pointerSize\": 134}, \"path\": \"stories260K.gguf\"}]";
  };
  const QString endpoint = QString::fromLatin1(server.url(""));
  const QString url = QString::fromLatin1(server.url("/owner/repo/resolve/main/stories260K.gguf"));
  const QString dest = dir.filePath(QStringLiteral("stories260K.gguf"));
  const QStringList common{QStringLiteral("--dir"), dir.path(), QStringLiteral("--allow-http-loopback"),
                           QStringLiteral("--hf-endpoint"), endpoint};

  server.set_document("/api/models/owner/repo/tree/main", tree(other));
  CliResult r = run_cli(QStringList{QStringLiteral("pull"), url} + common);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.contains("SHA-256 mismatch")) << r.err.toStdString();
  EXPECT_TRUE(r.err.contains(other)) << r.err.toStdString();  // the published hash is the expected one
  EXPECT_TRUE(r.err.contains("deleted")) << r.err.toStdString();
  EXPECT_FALSE(QFile::exists(dest));
  EXPECT_FALSE(QFile::exists(dest + QStringLiteral(".part")));
  bool asked_api = false;
  for (const auto& req : server.requests()) asked_api = asked_api || req.path == "/api/models/owner/repo/tree/main";
  EXPECT_TRUE(asked_api);

  server.set_document("/api/models/owner/repo/tree/main", tree(sha));
  r = run_cli(QStringList{QStringLiteral("pull"), url} + common);
  ASSERT_EQ(r.exit_code, 0) << r.err.toStdString();
  EXPECT_TRUE(r.err.contains("(verified)")) << r.err.toStdString();
  QFile got(dest);
  ASSERT_TRUE(got.open(QIODevice::ReadOnly));
  EXPECT_EQ(got.readAll(), body);

  // A plain-http endpoint needs the loopback switch like any other URL.
  r = run_cli({QStringLiteral("pull"), url, QStringLiteral("--dir"), dir.path(), QStringLiteral("--hf-endpoint"),
               endpoint});
  EXPECT_EQ(r.exit_code, 1);
}

}  // namespace
}  // namespace hearth::models
