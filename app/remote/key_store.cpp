#include "remote/key_store.h"

#include <qt6keychain/keychain.h>

#include <QEventLoop>

namespace hearth::remote {
namespace {

QString entry_key(const QString& endpoint_id) { return QStringLiteral("endpoint:") + endpoint_id; }

// Runs a started-on-demand job to its end.
void run(QKeychain::Job& job) {
  job.setAutoDelete(false);
  QEventLoop loop;
  QObject::connect(&job, &QKeychain::Job::finished, &loop, &QEventLoop::quit);
  job.start();
  loop.exec();
}

// Errors that mean "no secret store here", as opposed to a refusal by a
// store that runs (which is reported, never worked around).
bool no_store(QKeychain::Error error) {
  return error == QKeychain::NoBackendAvailable || error == QKeychain::NotImplemented ||
         error == QKeychain::OtherError;
}

Error store_error(const char* what, const QString& endpoint_id, const QString& why) {
  return make_error(ErrorCode::Io, std::string("the secret store could not ") + what + " the key of endpoint '" +
                                       endpoint_id.toStdString() + "': " + why.toStdString());
}

}  // namespace

KeyStore::KeyStore(QString service) : service_(std::move(service)) {}

void KeyStore::fall_back(const QString& why) {
  backend_ = KeyBackend::SessionMemory;
  note_ = QStringLiteral("No secret store is running (%1); API keys are kept in memory for this session only and "
                         "must be entered again after Hearth restarts.")
              .arg(why);
}

Status KeyStore::write(const QString& endpoint_id, const QString& key) {
  if (backend_ == KeyBackend::SecretStore) {
    QKeychain::WritePasswordJob job(service_);
    job.setInsecureFallback(false);  // never a plain-text file
    job.setKey(entry_key(endpoint_id));
    job.setTextData(key);
    run(job);
    if (job.error() == QKeychain::NoError) return {};
    if (!no_store(job.error())) return store_error("store", endpoint_id, job.errorString());
    fall_back(job.errorString());
  }
  memory_.insert(endpoint_id, key);
  return {};
}

Result<std::optional<QString>> KeyStore::read(const QString& endpoint_id) {
  if (backend_ == KeyBackend::SecretStore) {
    QKeychain::ReadPasswordJob job(service_);
    job.setInsecureFallback(false);
    job.setKey(entry_key(endpoint_id));
    run(job);
    if (job.error() == QKeychain::NoError) return std::optional<QString>(job.textData());
    if (job.error() == QKeychain::EntryNotFound) return std::optional<QString>();
    if (!no_store(job.error())) return store_error("read", endpoint_id, job.errorString());
    fall_back(job.errorString());
  }
  auto it = memory_.constFind(endpoint_id);
  if (it == memory_.constEnd()) return std::optional<QString>();
  return std::optional<QString>(*it);
}

Status KeyStore::remove(const QString& endpoint_id) {
  memory_.remove(endpoint_id);
  if (backend_ != KeyBackend::SecretStore) return {};
  QKeychain::DeletePasswordJob job(service_);
  job.setInsecureFallback(false);
  job.setKey(entry_key(endpoint_id));
  run(job);
  if (job.error() == QKeychain::NoError || job.error() == QKeychain::EntryNotFound) return {};
  if (!no_store(job.error())) return store_error("delete", endpoint_id, job.errorString());
  fall_back(job.errorString());
  return {};
}

}  // namespace hearth::remote
