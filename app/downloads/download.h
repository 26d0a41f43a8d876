// One file download with Qt Network: progress, speed and ETA; pause, resume
// and cancel; resume after a restart from "<destination>.part" using HTTP
// Range + If-Range; SHA-256 computed while the bytes arrive and checked at the
// end; space reserved before writing and every write checked; on success the
// file is synced and renamed into place on an I/O thread of its own, the
// outcome arriving as a queued call (`finished` or `failed`). Lives on the thread of its
// QNetworkAccessManager (the GUI thread in the app, main in hearth-cli).
#pragma once

#include "downloads/http_resume.h"
#include "downloads/part_file.h"

#include <QCryptographicHash>
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QThreadPool>
#include <QUrl>

#include <functional>
#include <optional>

class QNetworkAccessManager;
class QNetworkReply;

namespace hearth::models {

enum class SchemePolicy {
  HttpsOnly,          // the only choice for real downloads
  AllowLoopbackHttp,  // also plain http to 127.0.0.1 / ::1 / localhost: test servers
};

struct DownloadRequest {
  QUrl url;
  QString destination;      // final path of the file; bytes go to destination + ".part"
  QString expected_sha256;  // 64 lowercase hex digits, or empty when unknown
  std::optional<uint64_t> expected_size;
  SchemePolicy scheme_policy = SchemePolicy::HttpsOnly;
  // Automatic resumes after a dropped connection before reporting failure.
  int max_retries = 3;
  int retry_delay_ms = 1000;
  // Test hook: behave as if the disk filled up once the file reached this size.
  std::optional<uint64_t> disk_limit_bytes;
  // Test hook: called where the finished file is synced and renamed (the I/O
  // thread), before that work.
  std::function<void()> on_disk_work;
};

enum class DownloadState { Idle, Hashing, Downloading, Paused, Verifying, Finished, Failed, Cancelled };

enum class DownloadError {
  None,
  Network,    // connection dropped or refused; partial kept, resumable
  Http,       // the server answered with an error status
  Insecure,   // a non-HTTPS URL or redirect
  Checksum,   // SHA-256 mismatch; the file was deleted
  DiskFull,   // no room (before starting or mid-way); partial kept
  Io,         // another file-system error
};

const char* to_string(DownloadState state);
const char* to_string(DownloadError error);

// Is `url` allowed under `policy`?
bool url_allowed(const QUrl& url, SchemePolicy policy);

class Download : public QObject {
  Q_OBJECT
 public:
  Download(QNetworkAccessManager* network, DownloadRequest request, QObject* parent = nullptr);
  ~Download() override;

  const DownloadRequest& request() const { return request_; }
  DownloadState state() const { return state_; }
  DownloadError error() const { return error_; }
  QString error_message() const { return error_message_; }
  uint64_t received_bytes() const { return part_.is_open() ? part_.size() : on_disk_; }
  std::optional<uint64_t> total_bytes() const { return total_; }
  double bytes_per_second() const { return speed_; }
  // Seconds left at the current speed; nullopt when unknown.
  std::optional<double> eta_seconds() const;
  QString sha256_hex() const { return final_sha256_; }  // after Finished
  QString part_path() const { return request_.destination + QStringLiteral(".part"); }
  int restarts() const { return restarts_; }  // times the partial file was dropped

 public slots:
  void start();   // also resumes after pause or failure
  void pause();   // keeps the partial file
  void cancel();  // deletes the partial file

 signals:
  void progress(quint64 received, quint64 total, double bytes_per_second);
  void stateChanged(hearth::models::DownloadState state);
  void finished();  // verified and in place
  void failed(hearth::models::DownloadError error, const QString& message);

 private:
  void set_state(DownloadState state);
  void fail(DownloadError error, const QString& message);
  bool open_part();
  void hash_next_chunk();
  void send_request();
  void drop_reply();
  void on_ready_read();
  void on_finished();
  void retry_or_fail(const QString& why);
  bool decide_on_headers();
  bool check_space(uint64_t total);
  void restart_from_zero(const QString& reason);
  void finish_download();
  struct DiskOutcome {
    DownloadError error = DownloadError::None;
    QString message;
    uint64_t size = 0;
  };
  static DiskOutcome finish_on_disk(PartFile part, const DownloadRequest& request, const QString& digest);
  void on_disk_work_done(const DiskOutcome& outcome, const QString& digest);
  void load_meta();
  void save_meta();
  void remove_part_files();
  void update_speed(bool force);

  QNetworkAccessManager* network_;
  DownloadRequest request_;
  DownloadState state_ = DownloadState::Idle;
  DownloadError error_ = DownloadError::None;
  QString error_message_;

  PartFile part_;
  uint64_t on_disk_ = 0;
  QCryptographicHash hash_{QCryptographicHash::Sha256};
  uint64_t hashed_bytes_ = 0;  // bytes of the partial file folded into hash_
  bool hash_valid_ = false;    // hash_ matches the first hashed_bytes_ of the file
  int hash_fd_ = -1;           // reading an adopted .part

  QPointer<QNetworkReply> reply_;
  bool decided_ = false;
  bool use_range_ = true;
  int retries_left_ = 0;
  int restarts_ = 0;
  std::optional<uint64_t> total_;
  QString etag_;        // validator the partial bytes came with
  QString meta_url_;    // URL the partial bytes came from
  QString final_sha256_;

  QElapsedTimer clock_;
  qint64 last_sample_ms_ = 0;
  uint64_t last_sample_bytes_ = 0;
  double speed_ = 0;

  // Syncs and renames finished files off the object's thread; one at a time.
  QThreadPool io_;
};

}  // namespace hearth::models
