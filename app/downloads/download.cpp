#include "downloads/download.h"

#include <hearth/models/machine_info.h>
#include <hearth/models/memory_fit.h>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

#include <hearth/core/file_io.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace hearth::models {
namespace {

constexpr qint64 kReadChunk = 256 * 1024;
constexpr qint64 kHashChunk = 4 * 1024 * 1024;
constexpr int kMaxRestartsPerAttempt = 3;
constexpr int kTransferTimeoutMs = 60'000;

QString meta_path(const QString& destination) { return destination + QStringLiteral(".part.meta"); }

QString bytes_text(uint64_t bytes) { return QString::fromStdString(format_bytes(bytes)); }

}  // namespace

const char* to_string(DownloadState state) {
  switch (state) {
    case DownloadState::Idle: return "idle";
    case DownloadState::Hashing: return "hashing";
    case DownloadState::Downloading: return "downloading";
    case DownloadState::Paused: return "paused";
    case DownloadState::Verifying: return "verifying";
    case DownloadState::Finished: return "finished";
    case DownloadState::Failed: return "failed";
    case DownloadState::Cancelled: return "cancelled";
  }
  return "?";
}

const char* to_string(DownloadError error) {
  switch (error) {
    case DownloadError::None: return "none";
    case DownloadError::Network: return "network";
    case DownloadError::Http: return "http";
    case DownloadError::Insecure: return "insecure";
    case DownloadError::Checksum: return "checksum";
    case DownloadError::DiskFull: return "disk-full";
    case DownloadError::Io: return "io";
  }
  return "?";
}

bool url_allowed(const QUrl& url, SchemePolicy policy) {
  if (!url.isValid()) return false;
  const QString scheme = url.scheme().toLower();
  if (scheme == QLatin1String("https")) return true;
  if (scheme == QLatin1String("http") && policy == SchemePolicy::AllowLoopbackHttp) {
    const QString host = url.host().toLower();
    return host == QLatin1String("127.0.0.1") || host == QLatin1String("::1") ||
           host == QLatin1String("localhost");
  }
  return false;
}

Download::Download(QNetworkAccessManager* network, DownloadRequest request, QObject* parent)
    : QObject(parent), network_(network), request_(std::move(request)) {
  io_.setMaxThreadCount(1);
}

Download::~Download() {
  io_.waitForDone();  // a finished file's sync and rename; its answer is then dropped
  drop_reply();
  if (hash_fd_ >= 0) ::close(hash_fd_);
}

std::optional<double> Download::eta_seconds() const {
  if (!total_ || speed_ <= 0) return std::nullopt;
  const uint64_t have = received_bytes();
  if (have >= *total_) return 0.0;
  return static_cast<double>(*total_ - have) / speed_;
}

void Download::set_state(DownloadState state) {
  if (state_ == state) return;
  state_ = state;
  emit stateChanged(state);
}

void Download::fail(DownloadError error, const QString& message) {
  drop_reply();
  if (hash_fd_ >= 0) {
    ::close(hash_fd_);
    hash_fd_ = -1;
    hash_valid_ = false;
  }
  if (part_.is_open()) {
    on_disk_ = part_.size();
    part_.close();
  }
  error_ = error;
  error_message_ = message;
  set_state(DownloadState::Failed);
  emit failed(error, message);
}

void Download::start() {
  if (state_ == DownloadState::Downloading || state_ == DownloadState::Hashing ||
      state_ == DownloadState::Verifying) {
    return;
  }
  error_ = DownloadError::None;
  error_message_.clear();
  retries_left_ = request_.max_retries;
  restarts_ = 0;
  if (!url_allowed(request_.url, request_.scheme_policy)) {
    fail(DownloadError::Insecure,
         QStringLiteral("refusing to download from '%1': only HTTPS URLs are allowed")
             .arg(request_.url.toString()));
    return;
  }
  const QFileInfo dest(request_.destination);
  if (!QDir().mkpath(dest.absolutePath())) {
    fail(DownloadError::Io, QStringLiteral("cannot create the folder '%1'").arg(dest.absolutePath()));
    return;
  }
  if (!open_part()) return;
  if (request_.expected_size && !check_space(*request_.expected_size)) return;
  if (!hash_valid_ || hashed_bytes_ != part_.size()) {
    // Bytes left by an earlier run (or before a pause that interrupted
    // hashing): fold them into the hash before appending anything.
    hash_.reset();
    hashed_bytes_ = 0;
    hash_valid_ = false;
    hash_fd_ = ::open(part_path().toLocal8Bit().constData(), O_RDONLY | O_CLOEXEC);
    if (hash_fd_ < 0) {
      fail(DownloadError::Io, QStringLiteral("cannot read '%1' to check it").arg(part_path()));
      return;
    }
    set_state(DownloadState::Hashing);
    QTimer::singleShot(0, this, &Download::hash_next_chunk);
    return;
  }
  send_request();
}

bool Download::open_part() {
  if (part_.is_open()) return true;
  load_meta();
  const bool same_source = meta_url_.isEmpty() || meta_url_ == request_.url.toString();
  auto opened = PartFile::open(part_path().toStdString(), same_source ? PartOpenMode::Keep : PartOpenMode::Truncate);
  if (!opened.ok()) {
    fail(DownloadError::Io, QString::fromStdString(opened.error().message));
    return false;
  }
  part_ = std::move(opened).value();
  part_.set_size_limit(request_.disk_limit_bytes);
  if (!same_source) {
    etag_.clear();
    total_.reset();
    hash_.reset();
    hashed_bytes_ = 0;
    hash_valid_ = true;
  }
  if (part_.size() == 0) {
    hash_.reset();
    hashed_bytes_ = 0;
    hash_valid_ = true;
  }
  on_disk_ = part_.size();
  return true;
}

void Download::hash_next_chunk() {
  if (state_ != DownloadState::Hashing || hash_fd_ < 0) return;
  std::vector<char> buffer(static_cast<size_t>(kHashChunk));
  const ssize_t n = ::pread(hash_fd_, buffer.data(), buffer.size(), static_cast<off_t>(hashed_bytes_));
  if (n < 0) {
    fail(DownloadError::Io, QStringLiteral("cannot read '%1' to check it").arg(part_path()));
    return;
  }
  hash_.addData(QByteArrayView(buffer.data(), n));
  hashed_bytes_ += static_cast<uint64_t>(n);
  if (n > 0 && hashed_bytes_ < part_.size()) {
    QTimer::singleShot(0, this, &Download::hash_next_chunk);
    return;
  }
  ::close(hash_fd_);
  hash_fd_ = -1;
  if (hashed_bytes_ != part_.size()) {
    fail(DownloadError::Io, QStringLiteral("'%1' changed while it was being checked").arg(part_path()));
    return;
  }
  hash_valid_ = true;
  send_request();
}

bool Download::check_space(uint64_t total) {
  const uint64_t have = part_.is_open() ? part_.size() : on_disk_;
  if (total <= have) return true;
  const uint64_t need = total - have;
  auto free = free_disk_bytes(QFileInfo(request_.destination).absolutePath().toStdString());
  if (free.ok() && free.value() < need) {
    fail(DownloadError::DiskFull,
         QStringLiteral("not enough disk space for '%1': needs %2 more, %3 free")
             .arg(request_.destination, bytes_text(need), bytes_text(free.value())));
    return false;
  }
  if (part_.is_open()) {
    auto reserved = part_.reserve(total);
    if (!reserved.ok()) {
      fail(DownloadError::DiskFull, QString::fromStdString(reserved.error().message));
      return false;
    }
  }
  return true;
}

void Download::send_request() {
  QNetworkRequest req(request_.url);
  req.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::UserVerifiedRedirectPolicy);
  req.setMaximumRedirectsAllowed(10);
  req.setTransferTimeout(kTransferTimeoutMs);
  req.setHeader(QNetworkRequest::UserAgentHeader, QByteArrayLiteral("Hearth"));
  // Bytes must arrive exactly as stored: no transparent decompression.
  req.setRawHeader("Accept-Encoding", "identity");
  if (use_range_ && part_.size() > 0) {
    req.setRawHeader("Range", QByteArray("bytes=") + QByteArray::number(quint64(part_.size())) + "-");
    if (is_strong_etag(etag_.toStdString())) req.setRawHeader("If-Range", etag_.toUtf8());
  }
  decided_ = false;
  reply_ = network_->get(req);
  QNetworkReply* reply = reply_;
  connect(reply, &QNetworkReply::redirected, this, [this, reply](const QUrl& target) {
    if (reply != reply_) return;
    if (!url_allowed(target, request_.scheme_policy)) {
      fail(DownloadError::Insecure,
           QStringLiteral("refusing a redirect from '%1' to '%2': only HTTPS is allowed")
               .arg(request_.url.toString(), target.toString()));
      return;
    }
    emit reply->redirectAllowed();
  });
  connect(reply, &QNetworkReply::readyRead, this, &Download::on_ready_read);
  connect(reply, &QNetworkReply::finished, this, &Download::on_finished);
  if (!clock_.isValid()) clock_.start();
  last_sample_ms_ = clock_.elapsed();
  last_sample_bytes_ = part_.size();
  set_state(DownloadState::Downloading);
}

void Download::drop_reply() {
  if (!reply_) return;
  QNetworkReply* reply = reply_;
  reply_ = nullptr;
  reply->disconnect(this);
  reply->abort();
  reply->deleteLater();
}

bool Download::decide_on_headers() {
  const QVariant status_attr = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute);
  if (!status_attr.isValid()) return false;
  const int status = status_attr.toInt();
  if (status >= 300 && status < 400) return false;  // a redirect being followed

  ResponseInfo info;
  info.status = status;
  info.content_range = reply_->rawHeader("Content-Range").toStdString();
  info.etag = reply_->rawHeader("ETag").toStdString();
  const QVariant length = reply_->header(QNetworkRequest::ContentLengthHeader);
  if (length.isValid()) info.content_length = length.toULongLong();
  PartialState partial;
  partial.part_bytes = part_.size();
  partial.etag = etag_.toStdString();
  partial.expected_total = total_ ? total_ : request_.expected_size;
  const ResumeDecision decision = decide_resume(info, partial);

  switch (decision.action) {
    case ResumeAction::TruncateAndAppend:
    case ResumeAction::Append: {
      if (decision.action == ResumeAction::TruncateAndAppend) {
        ++restarts_;
        auto truncated = part_.truncate_to_zero();
        if (!truncated.ok()) {
          fail(DownloadError::Io, QString::fromStdString(truncated.error().message));
          return false;
        }
        hash_.reset();
        hashed_bytes_ = 0;
        hash_valid_ = true;
      }
      total_ = decision.total_bytes;
      etag_ = QString::fromStdString(info.etag);
      meta_url_ = request_.url.toString();
      save_meta();
      if (total_ && !check_space(*total_)) return false;
      decided_ = true;
      return true;
    }
    case ResumeAction::RestartWithoutRange:
      restart_from_zero(QString::fromStdString(decision.reason));
      return false;
    case ResumeAction::AlreadyComplete:
      drop_reply();
      total_ = decision.total_bytes;
      finish_download();
      return false;
    case ResumeAction::Fail:
      fail(DownloadError::Http, QStringLiteral("'%1': the server answered %2 %3")
                                    .arg(request_.url.toString())
                                    .arg(status)
                                    .arg(reply_->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString()));
      return false;
  }
  return false;
}

void Download::restart_from_zero(const QString& reason) {
  drop_reply();
  if (++restarts_ > kMaxRestartsPerAttempt) {
    fail(DownloadError::Http, QStringLiteral("'%1': giving up after %2 restarts (%3)")
                                  .arg(request_.url.toString())
                                  .arg(restarts_ - 1)
                                  .arg(reason));
    return;
  }
  auto truncated = part_.truncate_to_zero();
  if (!truncated.ok()) {
    fail(DownloadError::Io, QString::fromStdString(truncated.error().message));
    return;
  }
  hash_.reset();
  hashed_bytes_ = 0;
  hash_valid_ = true;
  etag_.clear();
  total_.reset();
  use_range_ = false;  // the next request asks for the whole file
  send_request();
  use_range_ = true;
}

void Download::on_ready_read() {
  if (!reply_) return;
  if (!decided_ && !decide_on_headers()) return;
  while (reply_ && reply_->bytesAvailable() > 0) {
    const QByteArray chunk = reply_->read(kReadChunk);
    if (chunk.isEmpty()) break;
    uint64_t written = 0;
    const auto* bytes = reinterpret_cast<const uint8_t*>(chunk.constData());
    const Status status = part_.append({bytes, static_cast<size_t>(chunk.size())}, &written);
    hash_.addData(QByteArrayView(chunk.constData(), static_cast<qsizetype>(written)));
    hashed_bytes_ += written;
    if (!status.ok()) {
      const bool full = status.error().message.find("disk is full") != std::string::npos;
      fail(full ? DownloadError::DiskFull : DownloadError::Io, QString::fromStdString(status.error().message));
      return;
    }
  }
  update_speed(false);
}

void Download::on_finished() {
  if (!reply_) return;
  if (!decided_) {
    // Headers and (possibly empty) body arrive together for short responses.
    if (!decide_on_headers()) {
      if (reply_ && state_ == DownloadState::Downloading && reply_->isFinished()) {
        // No usable HTTP answer at all: a refused or dropped connection.
        const QString why = reply_->errorString();
        drop_reply();
        retry_or_fail(why);
      }
      return;
    }
  }
  on_ready_read();  // drain what is buffered
  if (!reply_) return;
  const QNetworkReply::NetworkError net_error = reply_->error();
  const QString why = reply_->errorString();
  drop_reply();
  const bool complete = total_ ? part_.size() == *total_ : net_error == QNetworkReply::NoError;
  if (complete && net_error == QNetworkReply::NoError) {
    finish_download();
    return;
  }
  if (total_ && part_.size() > *total_) {
    restart_from_zero(QStringLiteral("the server sent more bytes than announced"));
    return;
  }
  retry_or_fail(net_error == QNetworkReply::NoError ? QStringLiteral("connection closed early") : why);
}

void Download::retry_or_fail(const QString& why) {
  if (retries_left_ > 0) {
    --retries_left_;
    QTimer::singleShot(request_.retry_delay_ms, this, [this] {
      if (state_ == DownloadState::Downloading && !reply_) send_request();
    });
    return;
  }
  const uint64_t have = part_.is_open() ? part_.size() : on_disk_;
  const QString where =
      total_ ? QStringLiteral("%1 of %2").arg(bytes_text(have), bytes_text(*total_)) : bytes_text(have);
  fail(DownloadError::Network,
       QStringLiteral("download of '%1' interrupted after %2 (%3); the partial file is kept for resuming")
           .arg(request_.url.toString(), where, why));
}

// The disk work of a finished download: sync the bytes, then either delete a
// file whose SHA-256 does not match or rename it into place (fsync of the file
// and of its folder). Runs on the download's I/O thread: an fsync of gigabytes
// can take seconds on a busy disk, which the GUI thread must not wait for.
Download::DiskOutcome Download::finish_on_disk(PartFile part, const DownloadRequest& request, const QString& digest) {
  if (request.on_disk_work) request.on_disk_work();
  DiskOutcome out;
  const QString part_name = request.destination + QStringLiteral(".part");
  auto synced = part.sync();
  out.size = part.size();
  part.close();
  if (!synced.ok()) {
    out.error = DownloadError::Io;
    out.message = QString::fromStdString(synced.error().message);
    return out;
  }
  if (!request.expected_sha256.isEmpty() && digest != request.expected_sha256.toLower()) {
    QFile::remove(part_name);
    QFile::remove(meta_path(request.destination));
    out.error = DownloadError::Checksum;
    out.message = QStringLiteral("SHA-256 mismatch for '%1': expected %2, got %3; the downloaded file was deleted")
                      .arg(request.destination, request.expected_sha256, digest);
    return out;
  }
  auto committed = commit_part_file(part_name.toStdString(), request.destination.toStdString());
  if (!committed.ok()) {
    out.error = DownloadError::Io;
    out.message = QString::fromStdString(committed.error().message);
    return out;
  }
  QFile::remove(meta_path(request.destination));
  return out;
}

void Download::finish_download() {
  set_state(DownloadState::Verifying);
  update_speed(true);
  const QString digest = QString::fromLatin1(hash_.result().toHex());
  on_disk_ = part_.size();
  // The file moves to the I/O thread; its outcome comes back as a queued call.
  // The destructor waits for the job, and Qt drops calls queued for a deleted object.
  io_.start([this, part = std::make_shared<PartFile>(std::move(part_)), request = request_, digest] {
    DiskOutcome outcome = finish_on_disk(std::move(*part), request, digest);
    QMetaObject::invokeMethod(this, [this, outcome, digest] { on_disk_work_done(outcome, digest); },
                              Qt::QueuedConnection);
  });
}

void Download::on_disk_work_done(const DiskOutcome& outcome, const QString& digest) {
  if (state_ != DownloadState::Verifying) {
    // Cancelled while the file was being committed: cancelling deletes it.
    QFile::remove(request_.destination);
    remove_part_files();
    return;
  }
  on_disk_ = outcome.error == DownloadError::Checksum ? 0 : outcome.size;
  if (outcome.error == DownloadError::Checksum) {
    hash_.reset();
    hashed_bytes_ = 0;
    hash_valid_ = true;
  }
  if (outcome.error != DownloadError::None) {
    fail(outcome.error, outcome.message);
    return;
  }
  final_sha256_ = digest;
  set_state(DownloadState::Finished);
  emit finished();
}

void Download::pause() {
  if (state_ != DownloadState::Downloading && state_ != DownloadState::Hashing) return;
  drop_reply();
  if (hash_fd_ >= 0) {
    ::close(hash_fd_);
    hash_fd_ = -1;
    hash_valid_ = false;
  }
  on_disk_ = part_.size();
  part_.close();
  set_state(DownloadState::Paused);
}

void Download::cancel() {
  drop_reply();
  if (hash_fd_ >= 0) {
    ::close(hash_fd_);
    hash_fd_ = -1;
  }
  part_.close();
  remove_part_files();
  hash_.reset();
  hashed_bytes_ = 0;
  hash_valid_ = true;
  on_disk_ = 0;
  total_.reset();
  etag_.clear();
  set_state(DownloadState::Cancelled);
}

void Download::load_meta() {
  // A missing, oversized or odd (FIFO, device) meta file means "no resume
  // information", the same as a corrupt one.
  constexpr uint64_t kMetaLimit = uint64_t{1} << 20;
  auto text = read_regular_file(meta_path(request_.destination).toStdString(), kMetaLimit, "download meta files");
  if (!text.ok()) return;
  const QJsonObject meta = QJsonDocument::fromJson(QByteArray::fromStdString(*text)).object();
  meta_url_ = meta.value(QStringLiteral("url")).toString();
  etag_ = meta.value(QStringLiteral("etag")).toString();
  const double total = meta.value(QStringLiteral("total")).toDouble(-1);
  if (total >= 0) total_ = static_cast<uint64_t>(total);
}

void Download::save_meta() {
  QJsonObject meta;
  meta[QStringLiteral("url")] = request_.url.toString();
  meta[QStringLiteral("etag")] = etag_;
  if (total_) meta[QStringLiteral("total")] = static_cast<double>(*total_);
  // Best effort, as before: without it a resume restarts from scratch.
  (void)write_file_atomically(meta_path(request_.destination).toStdString(),
                              QJsonDocument(meta).toJson().toStdString());
}

void Download::remove_part_files() {
  QFile::remove(part_path());
  QFile::remove(meta_path(request_.destination));
}

void Download::update_speed(bool force) {
  const qint64 now = clock_.isValid() ? clock_.elapsed() : 0;
  const qint64 dt = now - last_sample_ms_;
  const uint64_t have = part_.is_open() ? part_.size() : on_disk_;
  if (!force && dt < 250) return;
  if (dt > 0 && have >= last_sample_bytes_) {
    const double instant = static_cast<double>(have - last_sample_bytes_) * 1000.0 / static_cast<double>(dt);
    // Smoothed so the ETA does not jump with every packet.
    speed_ = speed_ <= 0 ? instant : 0.7 * speed_ + 0.3 * instant;
  }
  last_sample_ms_ = now;
  last_sample_bytes_ = have;
  emit progress(have, total_.value_or(0), speed_);
}

}  // namespace hearth::models
