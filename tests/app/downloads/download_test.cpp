// The downloader against a local HTTP server: complete downloads, resume after
// interruption (in the same run and after a "restart"), restarts when a resume
// is impossible, checksum failures, a full disk, pause/cancel and the queue.
#include "downloads/download.h"
#include "downloads/download_queue.h"
#include <hearth/models/model_registry.h>
#include "test_http_server.h"

#include <gtest/gtest.h>

#include <atomic>

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QEventLoop>
#include <QThread>
#include <QFile>
#include <QNetworkAccessManager>
#include <QTemporaryDir>
#include <QTimer>

#include <random>

namespace hearth::models {
namespace {

QCoreApplication* app() {
  static int argc = 1;
  static char name[] = "download_test";
  static char* argv[] = {name, nullptr};
  // Another test file of this program may have made it already.
  static QCoreApplication* instance =
      QCoreApplication::instance() ? QCoreApplication::instance() : new QCoreApplication(argc, argv);
  return instance;
}

QByteArray read_file(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

void write_file(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  ASSERT_TRUE(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

QString sha256_hex(const QByteArray& bytes) {
  return QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

// Runs the event loop until the download stops (finished, failed, paused,
// cancelled) or `timeout_ms` passes.
void wait_until_stopped(Download& d, int timeout_ms = 10'000) {
  auto stopped = [&] {
    const auto s = d.state();
    return s == DownloadState::Finished || s == DownloadState::Failed || s == DownloadState::Cancelled ||
           s == DownloadState::Paused;
  };
  if (stopped()) return;
  QEventLoop loop;
  QObject::connect(&d, &Download::stateChanged, &loop, [&] {
    if (stopped()) loop.quit();
  });
  QTimer::singleShot(timeout_ms, &loop, &QEventLoop::quit);
  loop.exec();
}

// Constructed first in the fixture so the application object exists before
// any network or socket object.
struct AppGuard {
  AppGuard() { app(); }
};

class DownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    // A real GGUF file from the fixtures as the served model.
    body_ = read_file(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-f16.gguf"));
    ASSERT_GT(body_.size(), 1'000'000);
    ASSERT_TRUE(body_.startsWith("GGUF"));
    server_.set_body(body_, "\"v1\"");
    destination_ = dir_.filePath(QStringLiteral("model.gguf"));
  }

  DownloadRequest request(const char* path = "/model.gguf") const {
    DownloadRequest r;
    r.url = QUrl(QString::fromLatin1(server_.url(path)));
    r.destination = destination_;
    r.expected_sha256 = sha256_hex(body_);
    r.scheme_policy = SchemePolicy::AllowLoopbackHttp;
    r.max_retries = 0;
    r.retry_delay_ms = 5;
    return r;
  }

  // One run of a fresh Download object, as after an app restart.
  DownloadState run_once(const DownloadRequest& r, int* restarts = nullptr) {
    Download d(&network_, r);
    d.start();
    wait_until_stopped(d);
    if (restarts) *restarts = d.restarts();
    last_error_ = d.error();
    last_message_ = d.error_message();
    return d.state();
  }

  QString part() const { return destination_ + QStringLiteral(".part"); }

  AppGuard app_guard_;
  QTemporaryDir dir_;
  QByteArray body_;
  QString destination_;
  test::TestHttpServer server_;
  QNetworkAccessManager network_;
  DownloadError last_error_ = DownloadError::None;
  QString last_message_;
};

TEST_F(DownloadTest, CompleteDownloadIsByteIdenticalAndVerified) {
  Download d(&network_, request());
  quint64 last_total = 0;
  int progress_signals = 0;
  QObject::connect(&d, &Download::progress, [&](quint64, quint64 total, double) {
    last_total = total;
    ++progress_signals;
  });
  d.start();
  wait_until_stopped(d);
  ASSERT_EQ(d.state(), DownloadState::Finished) << d.error_message().toStdString();
  EXPECT_EQ(read_file(destination_), body_);
  EXPECT_EQ(d.sha256_hex(), sha256_hex(body_));
  EXPECT_EQ(last_total, static_cast<quint64>(body_.size()));
  EXPECT_GT(progress_signals, 0);
  EXPECT_FALSE(QFile::exists(part()));
  EXPECT_FALSE(QFile::exists(part() + QStringLiteral(".meta")));
}

// The finished file's fsync and rename run on the download's I/O thread, not on
// the thread the Download lives on (the GUI thread in the app), and the outcome
// comes back to the object's thread.
TEST_F(DownloadTest, FinishedFileIsSyncedAndRenamedOffTheObjectsThread) {
  DownloadRequest r = request();
  std::atomic<QThread*> disk_thread{nullptr};
  std::atomic<bool> part_there_before_commit{false};
  r.on_disk_work = [&] {
    disk_thread = QThread::currentThread();
    part_there_before_commit = QFile::exists(part()) && !QFile::exists(destination_);
  };
  Download d(&network_, r);
  QThread* finished_on = nullptr;
  QByteArray in_place_at_finish;
  QObject::connect(&d, &Download::finished, [&] {
    finished_on = QThread::currentThread();
    in_place_at_finish = read_file(destination_);
  });
  d.start();
  wait_until_stopped(d);
  ASSERT_EQ(d.state(), DownloadState::Finished) << d.error_message().toStdString();
  ASSERT_NE(disk_thread.load(), nullptr);
  EXPECT_NE(disk_thread.load(), d.thread());
  EXPECT_NE(disk_thread.load(), QThread::currentThread());
  EXPECT_TRUE(part_there_before_commit.load());
  EXPECT_EQ(finished_on, d.thread());
  EXPECT_EQ(in_place_at_finish, body_);
  EXPECT_FALSE(QFile::exists(part()));
}

// A mismatch found after the sync is still reported on the object's thread,
// and the worker deleted the file.
TEST_F(DownloadTest, ChecksumMismatchFromTheIoThreadIsReportedOnTheObjectsThread) {
  DownloadRequest r = request();
  r.expected_sha256 = QString(64, QLatin1Char('0'));
  std::atomic<QThread*> disk_thread{nullptr};
  r.on_disk_work = [&] { disk_thread = QThread::currentThread(); };
  Download d(&network_, r);
  QThread* failed_on = nullptr;
  QObject::connect(&d, &Download::failed, [&] { failed_on = QThread::currentThread(); });
  d.start();
  wait_until_stopped(d);
  ASSERT_EQ(d.state(), DownloadState::Failed);
  EXPECT_EQ(d.error(), DownloadError::Checksum);
  ASSERT_NE(disk_thread.load(), nullptr);
  EXPECT_NE(disk_thread.load(), d.thread());
  EXPECT_EQ(failed_on, d.thread());
  EXPECT_FALSE(QFile::exists(part()));
  EXPECT_FALSE(QFile::exists(destination_));
}

TEST_F(DownloadTest, InterruptedDownloadResumesAfterRestartWithRangeAndIfRange) {
  const qint64 cut = body_.size() * 2 / 5;
  server_.drop_connection_at({cut});
  ASSERT_EQ(run_once(request()), DownloadState::Failed);
  EXPECT_EQ(last_error_, DownloadError::Network);
  EXPECT_FALSE(QFile::exists(destination_));
  // The partial file holds exactly the bytes sent before the drop.
  EXPECT_EQ(read_file(part()), body_.left(cut));

  int restarts = -1;
  ASSERT_EQ(run_once(request(), &restarts), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(read_file(destination_), body_);
  EXPECT_EQ(restarts, 0);
  const auto& second = server_.requests().back();
  EXPECT_EQ(second.headers.value("range"), "bytes=" + QByteArray::number(cut) + "-");
  EXPECT_EQ(second.headers.value("if-range"), "\"v1\"");
}

TEST_F(DownloadTest, TwentyRandomInterruptionsEndWithAVerifiedFile) {
  std::mt19937 rng(1234);
  std::deque<qint64> cuts;
  qint64 at = 0;
  for (int i = 0; i < 20; ++i) {
    at += 1 + static_cast<qint64>(rng() % static_cast<uint32_t>(body_.size() / 21));
    cuts.push_back(at);
  }
  server_.drop_connection_at(cuts);
  int failures = 0;
  DownloadState state = DownloadState::Idle;
  for (int attempt = 0; attempt < 25 && state != DownloadState::Finished; ++attempt) {
    state = run_once(request());
    if (state == DownloadState::Failed) {
      ASSERT_EQ(last_error_, DownloadError::Network) << last_message_.toStdString();
      ++failures;
    }
  }
  ASSERT_EQ(state, DownloadState::Finished);
  EXPECT_EQ(failures, 20);
  EXPECT_EQ(read_file(destination_), body_);
}

TEST_F(DownloadTest, DroppedConnectionsAreRetriedAutomatically) {
  server_.drop_connection_at({1000, 500'000, 900'000});
  auto r = request();
  r.max_retries = 3;
  ASSERT_EQ(run_once(r), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(read_file(destination_), body_);
  // Each retry resumed exactly where the dropped connection stopped.
  QList<QByteArray> ranges;
  for (const auto& req : server_.requests()) {
    if (req.headers.contains("range")) ranges.append(req.headers.value("range"));
  }
  EXPECT_TRUE(ranges.contains("bytes=1000-"));
  EXPECT_TRUE(ranges.contains("bytes=500000-"));
  EXPECT_TRUE(ranges.contains("bytes=900000-"));
}

TEST_F(DownloadTest, ChecksumMismatchIsReportedAndNothingIsKept) {
  server_.set_corrupt(true);
  ASSERT_EQ(run_once(request()), DownloadState::Failed);
  EXPECT_EQ(last_error_, DownloadError::Checksum);
  EXPECT_TRUE(last_message_.contains(QStringLiteral("SHA-256 mismatch"))) << last_message_.toStdString();
  EXPECT_FALSE(QFile::exists(destination_));
  EXPECT_FALSE(QFile::exists(part()));
}

TEST_F(DownloadTest, AdoptedPartIsRehashedSoAForeignPrefixIsCaught) {
  // A .part from elsewhere: same length as a real prefix, different bytes.
  QByteArray foreign = body_.left(600'000);
  foreign[100] = static_cast<char>(foreign[100] ^ 0xff);
  write_file(part(), foreign);
  ASSERT_EQ(run_once(request()), DownloadState::Failed);
  EXPECT_EQ(last_error_, DownloadError::Checksum);
  EXPECT_FALSE(QFile::exists(destination_));
  EXPECT_FALSE(QFile::exists(part()));
}

TEST_F(DownloadTest, ServerWithoutRangeRestartsCleanly) {
  server_.drop_connection_at({700'000});
  ASSERT_EQ(run_once(request()), DownloadState::Failed);
  server_.drop_connection_at({});
  server_.set_range_support(false);
  int restarts = -1;
  ASSERT_EQ(run_once(request(), &restarts), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(read_file(destination_), body_);
}

TEST_F(DownloadTest, ChangedFileOnTheServerRestartsFromZero) {
  server_.drop_connection_at({800'000});
  ASSERT_EQ(run_once(request()), DownloadState::Failed);
  server_.drop_connection_at({});
  QByteArray changed = body_;
  changed[10] = 'X';
  server_.set_body(changed, "\"v2\"");
  auto r = request();
  r.expected_sha256 = sha256_hex(changed);
  int restarts = -1;
  ASSERT_EQ(run_once(r, &restarts), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(restarts, 1);  // If-Range mismatch: the server sent 200
  EXPECT_EQ(read_file(destination_), changed);
}

TEST_F(DownloadTest, A206WithANewETagIsNotAppended) {
  server_.drop_connection_at({800'000});
  ASSERT_EQ(run_once(request()), DownloadState::Failed);
  server_.drop_connection_at({});
  QByteArray changed = body_;
  changed[10] = 'Y';
  server_.set_body(changed, "\"v3\"");
  server_.set_ignore_if_range(true);
  auto r = request();
  r.expected_sha256 = sha256_hex(changed);
  ASSERT_EQ(run_once(r), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(read_file(destination_), changed);
  // The last request asked for the whole file.
  EXPECT_FALSE(server_.requests().back().headers.contains("range"));
}

TEST_F(DownloadTest, A206AtTheWrongOffsetIsNotAppended) {
  server_.drop_connection_at({300'000});
  ASSERT_EQ(run_once(request()), DownloadState::Failed);
  server_.drop_connection_at({});
  server_.set_wrong_range_start(true);
  int restarts = -1;
  ASSERT_EQ(run_once(request(), &restarts), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(restarts, 1);
  EXPECT_EQ(read_file(destination_), body_);
}

TEST_F(DownloadTest, A416ForACompletePartVerifiesAndInstallsIt) {
  write_file(part(), body_);  // complete, but never renamed (a crash at the end)
  ASSERT_EQ(run_once(request()), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(read_file(destination_), body_);
  EXPECT_EQ(server_.requests().size(), 1);
}

TEST_F(DownloadTest, A416ForAnOversizedPartRestarts) {
  write_file(part(), body_ + QByteArray("extra bytes"));
  ASSERT_EQ(run_once(request()), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(read_file(destination_), body_);
}

TEST_F(DownloadTest, FullDiskIsReportedAndThePartialIsKept) {
  auto r = request();
  const uint64_t limit = 1'000'000;
  r.disk_limit_bytes = limit;
  ASSERT_EQ(run_once(r), DownloadState::Failed);
  EXPECT_EQ(last_error_, DownloadError::DiskFull);
  EXPECT_TRUE(last_message_.contains(QStringLiteral("disk is full"))) << last_message_.toStdString();
  EXPECT_EQ(read_file(part()), body_.left(static_cast<qsizetype>(limit)));
  // Room again: the partial is resumed, not refetched.
  ASSERT_EQ(run_once(request()), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(read_file(destination_), body_);
  EXPECT_EQ(server_.requests().back().headers.value("range"), "bytes=1000000-");
}

TEST_F(DownloadTest, PlainHttpAndInsecureRedirectsAreRefused) {
  auto r = request();
  r.scheme_policy = SchemePolicy::HttpsOnly;
  ASSERT_EQ(run_once(r), DownloadState::Failed);
  EXPECT_EQ(last_error_, DownloadError::Insecure);
  EXPECT_TRUE(server_.requests().isEmpty());

  ASSERT_EQ(run_once(request("/redirect-insecure")), DownloadState::Failed);
  EXPECT_EQ(last_error_, DownloadError::Insecure);
  EXPECT_FALSE(QFile::exists(destination_));

  ASSERT_EQ(run_once(request("/redirect-local")), DownloadState::Finished) << last_message_.toStdString();
  EXPECT_EQ(read_file(destination_), body_);
}

TEST_F(DownloadTest, HttpErrorIsReported) {
  ASSERT_EQ(run_once(request("/missing")), DownloadState::Failed);
  EXPECT_EQ(last_error_, DownloadError::Http);
  EXPECT_TRUE(last_message_.contains(QStringLiteral("404"))) << last_message_.toStdString();
}

TEST_F(DownloadTest, PauseKeepsThePartialAndResumeCompletes) {
  server_.set_slow(64 * 1024, 5);
  Download d(&network_, request());
  QObject::connect(&d, &Download::progress, [&](quint64 received, quint64, double) {
    if (received > 300'000 && d.state() == DownloadState::Downloading && server_.requests().size() == 1) d.pause();
  });
  d.start();
  wait_until_stopped(d);
  ASSERT_EQ(d.state(), DownloadState::Paused);
  const QByteArray kept = read_file(part());
  EXPECT_GT(kept.size(), 300'000);
  EXPECT_EQ(kept, body_.left(kept.size()));
  server_.set_slow(0, 0);
  d.start();
  wait_until_stopped(d);
  ASSERT_EQ(d.state(), DownloadState::Finished) << d.error_message().toStdString();
  EXPECT_EQ(read_file(destination_), body_);
  EXPECT_GT(d.bytes_per_second(), 0.0);
}

TEST_F(DownloadTest, CancelDeletesThePartial) {
  server_.set_slow(64 * 1024, 5);
  Download d(&network_, request());
  QObject::connect(&d, &Download::progress, [&](quint64 received, quint64, double) {
    if (received > 200'000 && d.state() == DownloadState::Downloading) d.cancel();
  });
  d.start();
  wait_until_stopped(d);
  ASSERT_EQ(d.state(), DownloadState::Cancelled);
  EXPECT_FALSE(QFile::exists(part()));
  EXPECT_FALSE(QFile::exists(destination_));
}

TEST_F(DownloadTest, QueueRunsDownloadsOneAtATime) {
  DownloadQueue queue(1);
  int max_running = 0;
  QList<Download*> items;
  for (int i = 0; i < 3; ++i) {
    auto r = request();
    r.destination = dir_.filePath(QStringLiteral("m%1.gguf").arg(i));
    items.append(queue.enqueue(r));
  }
  QEventLoop loop;
  auto check = [&] {
    int running = 0, done = 0;
    for (auto* d : items) {
      running += d->state() == DownloadState::Downloading || d->state() == DownloadState::Hashing;
      done += d->state() == DownloadState::Finished || d->state() == DownloadState::Failed;
    }
    max_running = std::max(max_running, running);
    if (done == items.size()) loop.quit();
  };
  for (auto* d : items) QObject::connect(d, &Download::stateChanged, &loop, check);
  QTimer::singleShot(10'000, &loop, &QEventLoop::quit);
  check();
  loop.exec();
  EXPECT_EQ(max_running, 1);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(items[i]->state(), DownloadState::Finished) << items[i]->error_message().toStdString();
    EXPECT_EQ(read_file(dir_.filePath(QStringLiteral("m%1.gguf").arg(i))), body_);
  }
}

TEST_F(DownloadTest, InstalledFileIsReverifiedOnDemand) {
  Download d(&network_, request());
  d.start();
  wait_until_stopped(d);
  ASSERT_EQ(d.state(), DownloadState::Finished);
  ModelRegistry registry(dir_.path().toStdString());
  InstalledModel m;
  m.path = destination_.toStdString();
  m.catalog_id = "tiny";
  m.quant = "F16";
  m.sha256 = d.sha256_hex().toStdString();
  ASSERT_TRUE(registry.record(m).ok());
  auto found = registry.find("tiny", "F16");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->size_bytes, static_cast<uint64_t>(body_.size()));
  auto ok = registry.verify(m.path);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->outcome, VerifyOutcome::Match);
  QByteArray damaged = body_;
  damaged[12345] = static_cast<char>(damaged[12345] ^ 0x10);
  write_file(destination_, damaged);
  auto bad = registry.verify(m.path);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->outcome, VerifyOutcome::Mismatch);
  EXPECT_EQ(bad->actual_sha256, sha256_hex(damaged).toStdString());
  ASSERT_TRUE(registry.remove(m.path).ok());
  EXPECT_TRUE(registry.scan().empty());
}

}  // namespace
}  // namespace hearth::models
