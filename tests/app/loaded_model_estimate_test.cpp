// The settings page's memory estimate for models the real engine loaded: a
// mixture of experts' counts travel from the engine to the sizer, so the
// scratch bar equals what the engine reserves for that model; a draft model
// loaded beside it adds its weights and its KV cache. The expected figures are
// computed here from the model files with the engine's sizing functions.
#include <hearth/engine/kv/memory_estimate.h>
#include <hearth/engine/kv/sizing.h>
#include <hearth/engine/model/model.h>

#include <QTest>

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "engine/memory_sizer.h"
#include "engine_service/engine_service_client.h"

namespace hearth::app {
namespace {

constexpr int kContext = 512;

settings::Settings cpu_settings() {
  settings::Settings s;
  s.load.context_length = kContext;
  s.load.threads = 1;
  s.load.gpu_layers = 0;
  return s;
}

// The app's pieces around the real engine: its settings (with the engine's
// sizer) and the model controller that loads.
struct LoadedApp {
  explicit LoadedApp(const settings::Settings& s)
      : engine(std::make_unique<EngineServiceClient>(make_default_chat_engine())),
        settings(s, nullptr, &sizer),
        model(engine.get(), &settings, nullptr, QString()) {}
  ::testing::AssertionResult load(const char* path) {
    model.load(QString::fromLatin1(path));
    if (!QTest::qWaitFor([&] { return model.ready() || !model.errorMessage().isEmpty(); }, 60000)) {
      return ::testing::AssertionFailure() << "the load never ended";
    }
    if (!model.ready()) return ::testing::AssertionFailure() << model.errorMessage().toStdString();
    return ::testing::AssertionSuccess();
  }
  std::unique_ptr<EngineServiceClient> engine;
  ui::EngineMemorySizer sizer;
  ui::SettingsController settings;
  ui::ModelController model;
};

TEST(MixtureOfExpertsEstimate, ScratchIsWhatTheEngineReservesForTheExperts) {
  const char* path = HEARTH_TEST_DATA_DIR "/models/tiny-qwen3moe-f32.gguf";
  LoadedApp app(cpu_settings());
  ASSERT_TRUE(app.load(path));

  // The engine's reservation for this file: its dims, read by the model loader.
  auto loaded = model::Model::load(path, model::LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const kv::ModelDims dims = (*loaded)->memory_dims();
  ASSERT_GT(dims.n_expert, 0);  // the fixture is a mixture
  auto reserved = kv::scratch_bytes(dims, kContext);
  ASSERT_TRUE(reserved.ok()) << reserved.error().message;
  EXPECT_EQ(static_cast<uint64_t>(app.settings.scratchBytes()), *reserved);

  // Without the experts the same shape reads as a dense model of width n_ff,
  // a different figure: the check above can tell them apart.
  kv::ModelDims dense = dims;
  dense.n_expert = dense.n_expert_used = dense.n_ff_exp = 0;
  dense.expert_biases = false;
  auto dense_bytes = kv::scratch_bytes(dense, kContext);
  ASSERT_TRUE(dense_bytes.ok());
  EXPECT_NE(*dense_bytes, *reserved);
}

TEST(DraftModelEstimate, CountsTheDraftsWeightsAndItsCacheOnceLoaded) {
  const char* target = HEARTH_TEST_DATA_DIR "/models/tiny-llama-f32.gguf";
  const char* draft = HEARTH_TEST_DATA_DIR "/models/tiny-llama-q8_0.gguf";
  settings::Settings s = cpu_settings();
  s.load.speculation.mode = settings::SpeculationMode::DraftModel;
  s.load.speculation.draft_model_path = draft;
  LoadedApp app(s);
  ASSERT_TRUE(app.load(target));
  auto& settings = app.settings;
  ASSERT_TRUE(app.model.info().speculation.startsWith(QStringLiteral("draft model"))) << app.model.info().speculation.toStdString();

  // The draft session's cache: F16 at the chat's context, every layer.
  auto d = model::Model::load(draft, model::LoadOptions{});
  ASSERT_TRUE(d.ok()) << d.error().message;
  const auto& hp = (*d)->hparams();
  auto kv_bytes = kv::kv_cache_bytes(hp.n_layer, hp.n_head_kv, hp.head_dim, kContext, DType::F16);
  ASSERT_TRUE(kv_bytes.ok());
  ASSERT_GT(*kv_bytes, 0u);
  EXPECT_EQ(static_cast<uint64_t>(settings.draftBytes()), (*d)->weight_bytes() + *kv_bytes);
  EXPECT_DOUBLE_EQ(settings.totalBytes(),
                   settings.weightsBytes() + settings.kvBytes() + settings.scratchBytes() + settings.draftBytes());

  // Another draft file chosen but not loaded yet: its size alone, as before.
  const char* other = HEARTH_TEST_DATA_DIR "/models/tiny-llama-q4_0.gguf";
  settings::SpeculationSettings spec = s.load.speculation;
  spec.draft_model_path = other;
  settings.setSpeculation(spec);
  EXPECT_EQ(static_cast<uint64_t>(settings.draftBytes()), std::filesystem::file_size(other));
}

}  // namespace
}  // namespace hearth::app
