#include "common/settings_store.h"

#include <QSettings>
#include <QTemporaryDir>

#include <gtest/gtest.h>

namespace hearth::app {

using namespace hearth::settings;
namespace {

TEST(SettingsStore, EmptyFileGivesDefaults) {
  QTemporaryDir dir;
  QSettings store(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
  EXPECT_EQ(load_settings(store), Settings{});
}

TEST(SettingsStore, EveryFieldRoundTrips) {
  QTemporaryDir dir;
  Settings s;
  s.system_prompt = "Be brief. Ünïcode ✓";
  s.sampling = {0.25, 7, 0.5, 0.1, 1.3, 1234567890123};
  s.load.context_length = 8192;
  s.load.memory_budget_mib = 12000;
  s.load.kv_cache_type = KvCacheType::Q8_0;
  s.load.threads = 3;
  s.load.gpu_device = "Radeon 780M";
  s.load.gpu_layers = 12;
  s.overflow_policy = OverflowPolicy::Summarize;
  s.theme = Theme::Dark;
  s.font_point_size = 15;
  s.last_model_path = "/models/a b.gguf";
  s.log_level = "debug";
  s.local_api = {true, "::1", 18080, 6, 4096};
  // The draft on Vulkan: not the default, so a lost field fails the round trip.
  s.load.speculation = {SpeculationMode::DraftModel, "/models/draft b.gguf", 5, DraftBackend::Vulkan};
  s.documents = {"/models/embed é.gguf", 3000};
  s.response_cache = true;
  s.remote_endpoints = {{"vllm-box", "GPU box", "https://gpu-box.example/v1", false, 300},
                        {"ollama", "Ollama ✓", "http://192.168.1.20:11434/v1", true, 60}};
  {
    QSettings store(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
    save_settings(store, s);
  }
  QSettings reread(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
  EXPECT_EQ(load_settings(reread), s);
}

TEST(SettingsStore, MalformedValuesFallBackOrClamp) {
  QTemporaryDir dir;
  QSettings store(dir.filePath(QStringLiteral("s.ini")), QSettings::IniFormat);
  store.setValue(QStringLiteral("sampling/temperature"), QStringLiteral("hot"));
  store.setValue(QStringLiteral("model/context_length"), 99999999);
  store.setValue(QStringLiteral("model/kv_cache_type"), QStringLiteral("q3"));
  store.setValue(QStringLiteral("appearance/font_point_size"), 2);
  store.setValue(QStringLiteral("local_api/port"), 80);
  store.setValue(QStringLiteral("local_api/parallel"), 1000);
  store.setValue(QStringLiteral("documents/source_budget_tokens"), 5);
  store.setValue(QStringLiteral("speculation/draft_backend"), QStringLiteral("metal"));
  const Settings s = load_settings(store);
  EXPECT_EQ(s.load.speculation.draft_backend, DraftBackend::Cpu) << "an unknown backend falls back to the CPU";
  EXPECT_EQ(s.documents.source_budget_tokens, SettingsLimits::kMinSourceBudget);
  EXPECT_FALSE(s.local_api.enabled);  // off unless the user turned it on
  EXPECT_EQ(s.local_api.port, SettingsLimits::kMinPort);
  EXPECT_EQ(s.local_api.parallel, SettingsLimits::kMaxParallel);
  EXPECT_DOUBLE_EQ(s.sampling.temperature, Settings{}.sampling.temperature);
  EXPECT_EQ(s.load.context_length, SettingsLimits::kMaxContext);
  EXPECT_EQ(s.load.kv_cache_type, KvCacheType::F16);
  EXPECT_EQ(s.font_point_size, SettingsLimits::kMinFontPoint);
}

TEST(SettingsStore, RemoteEndpointsAreCheckedAndFewerLeaveNoStaleEntries) {
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("s.ini"));
  Settings s;
  s.remote_endpoints = {{"a", "", "https://a.example/v1", false, 1},        // timeout clamped, name filled
                        {"", "no id", "https://b.example/v1", false, 120},  // dropped
                        {"c", "no url", "", false, 120},                    // dropped
                        {"a", "same id", "https://d.example/v1", false, 120}};  // dropped: id taken
  {
    QSettings store(path, QSettings::IniFormat);
    save_settings(store, s);
  }
  {
    QSettings store(path, QSettings::IniFormat);
    const Settings read = load_settings(store);
    ASSERT_EQ(read.remote_endpoints.size(), 1u);
    EXPECT_EQ(read.remote_endpoints[0].id, "a");
    EXPECT_EQ(read.remote_endpoints[0].name, "https://a.example/v1");
    EXPECT_EQ(read.remote_endpoints[0].inactivity_timeout_s, SettingsLimits::kMinRemoteTimeoutS);
    // The endpoint list shrinks to nothing: nothing of it stays in the file.
    save_settings(store, Settings{});
  }
  QSettings reread(path, QSettings::IniFormat);
  EXPECT_TRUE(load_settings(reread).remote_endpoints.empty());
  EXPECT_FALSE(reread.contains(QStringLiteral("remote_endpoints/1/url")));
}

}  // namespace
}  // namespace hearth::app
