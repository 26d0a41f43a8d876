#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include "common/load_marker.h"
#include "gui/file_load_marker.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "support/scripted_engine_client.h"

namespace hearth::ui {
namespace {

ModelShape small_shape() {
  ModelShape s;
  s.n_layer = 4;
  s.n_head_kv = 2;
  s.head_dim = 32;
  s.n_embd = 64;
  s.n_vocab = 100;
  s.weights_bytes = 10'000'000;
  return s;
}

TEST(SettingsController, SettersPersistAndClamp) {
  EngineMemorySizer sizer;
  std::vector<settings::Settings> saved;
  SettingsController c(settings::Settings{}, [&](const settings::Settings& s) { saved.push_back(s); }, &sizer);
  c.setTemperature(0.3);
  c.setContextLength(10);  // below the minimum
  c.setOverflowPolicy(QStringLiteral("summarize"));
  c.setOverflowPolicy(QStringLiteral("nonsense"));  // ignored
  ASSERT_EQ(saved.size(), 3u);
  EXPECT_DOUBLE_EQ(saved.back().sampling.temperature, 0.3);
  EXPECT_EQ(saved.back().load.context_length, settings::SettingsLimits::kMinContext);
  EXPECT_EQ(c.overflowPolicy(), QStringLiteral("summarize"));
}

TEST(SettingsController, BreakdownFollowsContextAndTurnsRedOverBudget) {
  EngineMemorySizer sizer;
  settings::Settings initial;
  initial.load.context_length = 1024;
  initial.load.memory_budget_mib = 1024;
  SettingsController c(initial, nullptr, &sizer);
  c.set_available_bytes_for_testing(8ull << 30);
  EXPECT_FALSE(c.hasModelShape());
  c.set_loaded_model(small_shape(), 4096, initial.load);
  // 2 * 4 layers * 2 heads * 32 dims * 1024 positions * 2 bytes
  EXPECT_DOUBLE_EQ(c.kvBytes(), 2.0 * 4 * 2 * 32 * 1024 * 2);
  EXPECT_FALSE(c.overLimit());
  c.setContextLength(2048);
  EXPECT_DOUBLE_EQ(c.kvBytes(), 2.0 * 4 * 2 * 32 * 2048 * 2);
  EXPECT_TRUE(c.needsReload());
  EXPECT_EQ(c.maxContext(), 4096);

  c.set_available_bytes_for_testing(1'000'000);  // less than the weights
  EXPECT_TRUE(c.overLimit());
  EXPECT_FALSE(c.memoryExplanation().isEmpty());
}

TEST(SettingsController, ADraftModelsWeightsJoinTheEstimate) {
  EngineMemorySizer sizer;
  SettingsController c(settings::Settings{}, nullptr, &sizer);
  c.set_available_bytes_for_testing(8ull << 30);
  c.set_loaded_model(small_shape(), 4096, settings::Settings{}.load);
  const double without = c.totalBytes();
  EXPECT_DOUBLE_EQ(c.draftBytes(), 0.0);
  const QString draft = QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-llama-q4_0.gguf");
  c.setSpeculation({settings::SpeculationMode::DraftModel, draft.toStdString(), 4});
  EXPECT_DOUBLE_EQ(c.draftBytes(), static_cast<double>(QFileInfo(draft).size()));
  EXPECT_DOUBLE_EQ(c.totalBytes(), without + c.draftBytes());
  c.setSpeculation({settings::SpeculationMode::Ngram, draft.toStdString(), 4});
  EXPECT_DOUBLE_EQ(c.draftBytes(), 0.0) << "n-gram drafts need no model";
}

TEST(SettingsController, PresetSetsSystemPrompt) {
  EngineMemorySizer sizer;
  SettingsController c(settings::Settings{}, nullptr, &sizer);
  ASSERT_GE(c.presetNames().size(), 2);
  c.applyPreset(1);
  EXPECT_NE(c.systemPrompt(), QString::fromStdString(settings::Settings{}.system_prompt));
}

TEST(ModelController, CrashedLoadIsNotRetriedAtStart) {
  QTemporaryDir dir;
  const std::string marker_file = dir.filePath(QStringLiteral("load.marker")).toStdString();
  // The previous run began loading this model and never finished.
  ASSERT_TRUE(app::LoadMarker(marker_file).begin("/models/huge.gguf"));

  EngineMemorySizer sizer;
  settings::Settings s;
  s.last_model_path = dir.filePath(QStringLiteral("huge.gguf")).toStdString();
  SettingsController settings(s, nullptr, &sizer);
  testing::ScriptedEngineClient engine;
  ModelController model(&engine, &settings, std::make_shared<app::FileLoadMarker>(marker_file), QString());
  model.start(QString());
  EXPECT_TRUE(engine.loads.isEmpty());
  EXPECT_TRUE(model.notice().contains(QStringLiteral("huge.gguf")));
  EXPECT_FALSE(app::LoadMarker(marker_file).interrupted_model().has_value());
}

TEST(ModelController, MarkerExistsOnlyWhileLoading) {
  QTemporaryDir dir;
  const std::string marker_file = dir.filePath(QStringLiteral("load.marker")).toStdString();
  EngineMemorySizer sizer;
  SettingsController settings(settings::Settings{}, nullptr, &sizer);
  testing::ScriptedEngineClient engine;
  // What the marker file held when the engine was asked to load.
  std::optional<std::string> marker_at_load;
  engine.on_load = [&](const LoadRequest&) {
    marker_at_load = app::LoadMarker(marker_file).interrupted_model().value_or("(none)");
  };
  ModelController model(&engine, &settings, std::make_shared<app::FileLoadMarker>(marker_file), QString());
  model.load(QStringLiteral("/m/a.gguf"));
  // The marker is written by the marker thread; the engine is not asked until then.
  EXPECT_TRUE(engine.loads.isEmpty());
  EXPECT_TRUE(model.loading());
  ASSERT_TRUE(QTest::qWaitFor([&] { return model.ready(); }, 10000));
  EXPECT_EQ(marker_at_load, std::optional<std::string>("/m/a.gguf"));
  // Removed by the marker thread after the load finished.
  ASSERT_TRUE(QTest::qWaitFor([&] { return !app::LoadMarker(marker_file).interrupted_model().has_value(); }, 10000));
  EXPECT_EQ(settings.settings().last_model_path, "/m/a.gguf");
  EXPECT_FALSE(settings.needsReload());
}

}  // namespace
}  // namespace hearth::ui
