// Settings -> Speculative decoding: the draft-model chooser lists the
// downloaded models (real GGUF files) that share the loaded model's
// vocabulary and are smaller than it, says what it left out, and the
// choices persist as load settings that go with the next load request.
// Where the draft runs: the GPU only when a device is present, in the
// controller and in the settings page's chooser.
#include <QFile>
#include <QFileInfo>
#include <QQmlComponent>
#include <QQmlEngine>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

#include <gtest/gtest.h>

#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "controllers/speculation_controller.h"
#include "engine/memory_sizer.h"
#include "support/scripted_engine_client.h"

Q_IMPORT_QML_PLUGIN(Hearth_UiPlugin)

namespace hearth::ui {
namespace {

QString data(const char* rel) { return QStringLiteral(HEARTH_TEST_DATA_DIR "/") + QLatin1String(rel); }

// The controllers the settings page drives, wired as the app wires them, over
// an empty models folder (no draft candidates) and a scripted engine.
struct Controllers {
  QTemporaryDir models;
  EngineMemorySizer sizer;
  testing::ScriptedEngineClient engine;
  SettingsController settings{settings::Settings{}, nullptr, &sizer};
  ModelController model{&engine, &settings, nullptr, QString()};
  SpeculationController spec{&settings, &model, models.path()};
};

TEST(SpeculationController, ListsTheDownloadedModelsThatCanDraftForTheLoadedOne) {
  QTemporaryDir models;
  // The tiny fixtures share one vocabulary (the qwen2-shaped one too); the
  // story model and a GPT-2 vocabulary file do not.
  for (const char* f : {"models/tiny-llama-q4_0.gguf", "models/tiny-qwen2-q8_0.gguf", "models/stories260K.gguf",
                        "vocab/ggml-vocab-gpt-2.gguf"}) {
    ASSERT_TRUE(QFile::copy(data(f), models.filePath(QFileInfo(QLatin1String(f)).fileName())));
  }
  EngineMemorySizer sizer;
  testing::ScriptedEngineClient engine;
  SettingsController settings(settings::Settings{}, nullptr, &sizer);
  ModelController model(&engine, &settings, nullptr, QString());
  SpeculationController spec(&settings, &model, models.path());
  EXPECT_EQ(spec.mode(), QStringLiteral("ngram")) << "n-gram drafts are the default";
  EXPECT_TRUE(spec.draftModels().isEmpty());
  EXPECT_FALSE(spec.draftModelsNote().isEmpty()) << "says a model must be loaded first";

  // The loaded model (outside the folder): the tiny llama in F32.
  model.load(data("models/tiny-llama-f32.gguf"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return model.ready(); }, 2000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !spec.scanning(); }, 10000));
  QStringList names;
  for (const QVariant& v : spec.draftModels()) names << v.toMap().value(QStringLiteral("name")).toString();
  names.sort();
  EXPECT_EQ(names, (QStringList{QStringLiteral("tiny-llama-q4_0"), QStringLiteral("tiny-qwen2-q8_0")}));
  EXPECT_TRUE(spec.draftModelsNote().contains(QStringLiteral("2 with another vocabulary")))
      << spec.draftModelsNote().toStdString();

  // A model the same size or larger is left out: the f32 file drafting for
  // the qwen2-shaped q8_0 (1.4 MB; the q4_0 is 1.1 MB, the story model 1.2 MB).
  ASSERT_TRUE(QFile::copy(data("models/tiny-llama-f32.gguf"), models.filePath(QStringLiteral("big.gguf"))));
  model.load(models.filePath(QStringLiteral("tiny-qwen2-q8_0.gguf")));
  ASSERT_TRUE(QTest::qWaitFor([&] { return model.ready() && model.modelPath().endsWith(QStringLiteral("q8_0.gguf")); }, 2000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return !spec.scanning(); }, 10000));
  names.clear();
  for (const QVariant& v : spec.draftModels()) names << v.toMap().value(QStringLiteral("name")).toString();
  EXPECT_EQ(names, QStringList{QStringLiteral("tiny-llama-q4_0")}) << names.join(QStringLiteral(",")).toStdString() << " / " << spec.draftModelsNote().toStdString();
  // Left out: the story model (another vocabulary), the f32 file and the
  // GPT-2 vocabulary file (1.7 MB): not smaller.
  EXPECT_TRUE(spec.draftModelsNote().contains(QStringLiteral("1 with another vocabulary, 2 not smaller than the model")))
      << spec.draftModelsNote().toStdString();

  // The choice is a load setting: the next load asks the engine for it.
  QSignalSpy changed(&spec, &SpeculationController::settingsChanged);
  spec.setMode(QStringLiteral("draft"));
  spec.setDraftModelPath(models.filePath(QStringLiteral("tiny-llama-q4_0.gguf")));
  spec.setDraftMax(3);
  EXPECT_EQ(spec.draftMax(), 3);
  spec.setDraftMax(99);
  EXPECT_EQ(changed.count(), 4);
  EXPECT_EQ(spec.draftMax(), settings::SettingsLimits::kMaxDraft) << "clamped";
  EXPECT_TRUE(settings.needsReload());
  model.reload();
  ASSERT_TRUE(QTest::qWaitFor([&] { return engine.loads.size() == 3; }, 2000));
  const LoadRequest& last = engine.loads.back();
  EXPECT_EQ(last.speculation, QStringLiteral("draft"));
  EXPECT_EQ(last.draft_model_path, models.filePath(QStringLiteral("tiny-llama-q4_0.gguf")));
  EXPECT_EQ(last.draft_max, settings::SettingsLimits::kMaxDraft);
}

// Where the draft model runs: the CPU by default; the GPU is accepted only
// once a Vulkan device is known (the probe, or a model loaded on Vulkan),
// and the choice goes with the next load request.
TEST(SpeculationController, OffersTheGpuForTheDraftOnlyWhenADeviceIsPresent) {
  Controllers c;
  EXPECT_EQ(c.spec.draftBackend(), QStringLiteral("cpu")) << "the CPU is the default";
  EXPECT_FALSE(c.spec.gpuAvailable());
  EXPECT_TRUE(c.spec.gpuName().isEmpty());

  // No device: the GPU is refused and the setting stays.
  c.spec.setMode(QStringLiteral("draft"));
  c.spec.setDraftBackend(QStringLiteral("vulkan"));
  EXPECT_EQ(c.spec.draftBackend(), QStringLiteral("cpu"));
  EXPECT_EQ(c.settings.settings().load.speculation.draft_backend, settings::DraftBackend::Cpu);

  // A model loaded on the CPU says nothing of a GPU.
  c.model.load(data("models/stories260K.gguf"));
  ASSERT_TRUE(QTest::qWaitFor([&] { return c.model.ready(); }, 2000));
  EXPECT_FALSE(c.spec.gpuAvailable()) << c.model.info().backend.toStdString();

  // The probe found a device: now the GPU is offered and kept.
  QSignalSpy gpu(&c.spec, &SpeculationController::gpuChanged);
  c.spec.set_gpu_device(QStringLiteral("Vulkan: Test GPU"));
  EXPECT_EQ(gpu.count(), 1);
  EXPECT_TRUE(c.spec.gpuAvailable());
  EXPECT_EQ(c.spec.gpuName(), QStringLiteral("Vulkan: Test GPU"));
  c.spec.setDraftBackend(QStringLiteral("vulkan"));
  EXPECT_EQ(c.spec.draftBackend(), QStringLiteral("vulkan"));
  EXPECT_TRUE(c.settings.needsReload());
  c.model.reload();
  ASSERT_TRUE(QTest::qWaitFor([&] { return c.engine.loads.size() == 2; }, 2000));
  EXPECT_EQ(c.engine.loads.back().draft_backend, QStringLiteral("vulkan"));
  c.spec.setDraftBackend(QStringLiteral("cpu"));
  EXPECT_EQ(c.spec.draftBackend(), QStringLiteral("cpu"));

  // Without the probe's answer, a model loaded on Vulkan shows the device
  // (its partial-offload detail left out).
  c.spec.set_gpu_device(QString());
  EXPECT_FALSE(c.spec.gpuAvailable());
  c.engine.info.backend = QStringLiteral("Vulkan: Other GPU: 3 of 8 layers on GPU, rest on CPU");
  c.model.reload();
  ASSERT_TRUE(QTest::qWaitFor([&] { return c.engine.loads.size() == 3 && c.model.ready(); }, 2000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return c.spec.gpuAvailable(); }, 2000));
  EXPECT_EQ(c.spec.gpuName(), QStringLiteral("Vulkan: Other GPU"));
}

// The settings page's chooser lists the GPU only while the controller has a device.
TEST(SpeculationController, TheSettingsPageOffersTheGpuForTheDraftOnlyWithADevice) {
  Controllers c;
  c.spec.setMode(QStringLiteral("draft"));

  QQmlEngine qml;
  qml.addImportPath(QStringLiteral("qrc:/"));  // as the app does: the module lives in resources
  QQmlComponent component(&qml);
  component.setData(QByteArrayLiteral("import Hearth.Ui\nSpeculationSettings {}\n"), QUrl());
  ASSERT_FALSE(component.isError()) << component.errorString().toStdString();
  std::unique_ptr<QObject> page(component.createWithInitialProperties({{QStringLiteral("spec"), QVariant::fromValue(&c.spec)}}));
  ASSERT_NE(page, nullptr) << component.errorString().toStdString();
  auto* chooser = page->findChild<QObject*>(QStringLiteral("draftBackendChooser"));
  ASSERT_NE(chooser, nullptr);
  EXPECT_EQ(chooser->property("count").toInt(), 1) << "the CPU alone without a device";
  EXPECT_EQ(chooser->property("currentText").toString(), QStringLiteral("CPU"));

  c.spec.set_gpu_device(QStringLiteral("Vulkan: Test GPU"));
  EXPECT_EQ(chooser->property("count").toInt(), 2);
  // Choosing the GPU as the user would: pick the row, and its activation writes the setting.
  ASSERT_TRUE(chooser->setProperty("currentIndex", 1));
  ASSERT_TRUE(QMetaObject::invokeMethod(chooser, "activated", Q_ARG(int, 1)));
  EXPECT_EQ(c.spec.draftBackend(), QStringLiteral("vulkan"));
  EXPECT_EQ(chooser->property("currentText").toString(), QStringLiteral("GPU (Vulkan)"));

  // The device gone with the GPU still chosen: the chooser says so rather than show the CPU.
  c.spec.set_gpu_device(QString());
  EXPECT_EQ(chooser->property("count").toInt(), 1);
  EXPECT_EQ(chooser->property("currentIndex").toInt(), -1);
  EXPECT_EQ(chooser->property("displayText").toString(), QStringLiteral("GPU (Vulkan), not found"));
}

}  // namespace
}  // namespace hearth::ui
