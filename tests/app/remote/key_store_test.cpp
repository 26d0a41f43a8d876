// API keys in a real Secret Service (gnome-keyring on a private D-Bus
// session, started by the test's ctest command with HOME and the XDG folders
// in the build tree): a key round-trips, a second store reads it, removal
// removes it, and the key never appears in the settings file or anywhere in
// the config and data folders but the secret store's own. Without any
// secret store, keys stay in memory for the session and the store says so.
#include <gtest/gtest.h>

#include <QDirIterator>
#include <QFile>
#include <QRandomGenerator>
#include <QSettings>

#include "common/settings_store.h"
#include "remote/key_store.h"

namespace hearth::remote {
namespace {

QString fresh_key() {
  return QStringLiteral("sk-hearth-test-%1%2")
      .arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'))
      .arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'));
}

// Files under `root` holding `needle`, the secret store's keyrings left out.
QStringList files_containing(const QString& root, const QByteArray& needle, int& files_read) {
  QStringList hits;
  QDirIterator it(root, QDir::Files | QDir::Hidden | QDir::NoSymLinks, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    if (path.contains(QLatin1String("/keyrings/"))) continue;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) continue;
    ++files_read;
    if (f.readAll().contains(needle)) hits << path;
  }
  return hits;
}

TEST(KeyStoreSecretService, RoundTripsAndNeverReachesTheFiles) {
  ASSERT_FALSE(qEnvironmentVariableIsEmpty("DBUS_SESSION_BUS_ADDRESS")) << "run under dbus-run-session (see CMakeLists)";
  const QString config_home = qEnvironmentVariable("XDG_CONFIG_HOME");
  const QString data_home = qEnvironmentVariable("XDG_DATA_HOME");
  ASSERT_FALSE(config_home.isEmpty() || data_home.isEmpty());

  // The app's settings file, with the endpoint, written as the app writes it.
  const QString data_dir = data_home + QStringLiteral("/hearth");
  QDir().mkpath(data_dir);
  {
    settings::Settings with_endpoint;
    with_endpoint.remote_endpoints = {{"vllm-box", "GPU box", "https://gpu-box.example/v1", false, 120}};
    QSettings settings(data_dir + QStringLiteral("/settings.ini"), QSettings::IniFormat);
    app::save_settings(settings, with_endpoint);
    settings.sync();
  }

  const QString key = fresh_key();
  KeyStore store;
  ASSERT_TRUE(store.write(QStringLiteral("vllm-box"), key).ok());
  EXPECT_EQ(store.backend(), KeyBackend::SecretStore) << store.backend_note().toStdString();
  EXPECT_TRUE(store.backend_note().isEmpty());

  KeyStore other;  // a later run of the app
  auto read = other.read(QStringLiteral("vllm-box"));
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, key);
  EXPECT_EQ(other.backend(), KeyBackend::SecretStore);
  auto none = other.read(QStringLiteral("never-stored"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());

  int files_read = 0;
  QStringList hits = files_containing(config_home, key.toUtf8(), files_read);
  hits += files_containing(data_home, key.toUtf8(), files_read);
  EXPECT_TRUE(hits.isEmpty()) << "the key is in clear in: " << hits.join(", ").toStdString();
  EXPECT_GE(files_read, 1);  // the settings file at least was looked at
  QFile settings_file(data_dir + QStringLiteral("/settings.ini"));
  ASSERT_TRUE(settings_file.open(QIODevice::ReadOnly));
  EXPECT_TRUE(settings_file.readAll().contains("gpu-box.example"));  // the endpoint is there, its key is not

  ASSERT_TRUE(store.remove(QStringLiteral("vllm-box")).ok());
  auto gone = other.read(QStringLiteral("vllm-box"));
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
}

TEST(KeyStoreNoSecretStore, KeepsKeysInMemoryAndSaysSo) {
  // No session bus to find a secret store on.
  qputenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/hearth-test-bus");
  KeyStore store;
  const QString key = fresh_key();
  ASSERT_TRUE(store.write(QStringLiteral("ollama"), key).ok());
  EXPECT_EQ(store.backend(), KeyBackend::SessionMemory);
  EXPECT_TRUE(store.backend_note().contains(QLatin1String("for this session only"))) << store.backend_note().toStdString();
  auto read = store.read(QStringLiteral("ollama"));
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ(**read, key);
  ASSERT_TRUE(store.remove(QStringLiteral("ollama")).ok());
  EXPECT_FALSE(store.read(QStringLiteral("ollama"))->has_value());
  // A new store (the next run) has nothing: the key was never written anywhere.
  KeyStore next;
  auto later = next.read(QStringLiteral("ollama"));
  ASSERT_TRUE(later.ok());
  EXPECT_FALSE(later->has_value());
}

}  // namespace
}  // namespace hearth::remote
