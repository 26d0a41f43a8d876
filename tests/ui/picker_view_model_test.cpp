// The picker's view model (filters, fit roles, installed files) and a
// screenshot of the picker page with the catalog loaded, rendered offscreen.
#include "picker/picker_view_model.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQmlComponent>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QtQml/qqmlextensionplugin.h>

#include <hearth/models/catalog.h>

Q_IMPORT_QML_PLUGIN(Hearth_UiPlugin)

namespace hearth::ui {
namespace {

QGuiApplication* app() {
  static int argc = 1;
  static char name[] = "picker_test";
  static char* argv[] = {name, nullptr};
  static QGuiApplication* instance = [] {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    return new QGuiApplication(argc, argv);
  }();
  return instance;
}

int row_of(const PickerViewModel& vm, const QString& id) {
  for (int r = 0; r < vm.rowCount(); ++r) {
    if (vm.data(vm.index(r), PickerViewModel::IdRole).toString() == id) return r;
  }
  return -1;
}

TEST(PickerViewModel, ListsTheCatalogAndFilters) {
  app();
  QTemporaryDir dir;
  PickerViewModel vm;
  vm.setModelsDir(dir.path());
  const auto catalog = models::load_builtin_catalog();
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(vm.rowCount(), static_cast<int>(catalog->models.size()));

  vm.setFilterText(QStringLiteral("qwen3"));
  // Qwen3 0.6B, 1.7B, 4B, 8B and 30B-A3B, and Qwen3-Embedding 0.6B (an
  // embedding model, catalog `kind` embedding, listed until the picker reads
  // that field).
  EXPECT_EQ(vm.rowCount(), 6);
  vm.setFilterText(QString());

  // Size filter: the 8B and 7B models have no variant under 1 GB.
  vm.setMaxSizeBytes(1e9);
  EXPECT_EQ(row_of(vm, QStringLiteral("llama-3.1-8b-instruct")), -1);
  EXPECT_GE(row_of(vm, QStringLiteral("qwen2.5-0.5b-instruct")), 0);
  vm.setMaxSizeBytes(0);

  // A machine with 2 GiB of RAM and no GPU: a 7B model fits nowhere; with the
  // 1 GiB reserve the budget is 1 GiB, which the 0.5B Q4_0 fits.
  vm.setRamAvailableBytes(2.0 * (1 << 30));
  vm.setVramFreeBytes(0);
  vm.setContextLength(2048);
  const int big = row_of(vm, QStringLiteral("qwen2.5-7b-instruct"));
  ASSERT_GE(big, 0);
  EXPECT_EQ(vm.data(vm.index(big), PickerViewModel::BestFitRole).toString(), QStringLiteral("no"));
  EXPECT_EQ(vm.data(vm.index(big), PickerViewModel::RecommendedQuantRole).toString(), QString());
  vm.setFitsOnly(true);
  EXPECT_EQ(row_of(vm, QStringLiteral("qwen2.5-7b-instruct")), -1);
  const int small = row_of(vm, QStringLiteral("qwen2.5-0.5b-instruct"));
  ASSERT_GE(small, 0);
  const QVariantList variants = vm.data(vm.index(small), PickerViewModel::VariantsRole).toList();
  ASSERT_EQ(variants.size(), 5);
  for (const QVariant& v : variants) {
    const QVariantMap map = v.toMap();
    EXPECT_DOUBLE_EQ(map[QStringLiteral("totalBytes")].toDouble(),
                     map[QStringLiteral("weightsBytes")].toDouble() + map[QStringLiteral("kvBytes")].toDouble() +
                         map[QStringLiteral("scratchBytes")].toDouble());
    EXPECT_EQ(map[QStringLiteral("installed")].toBool(), false);
  }

  // The local API on, 4 slots of 2048 tokens: each slot holds as much KV as
  // the chat's 2048-token cache (2 * 24 layers * 128 * 2048 * 2 bytes =
  // 24 MiB), and the fits count it in RAM. 64 slots (1.5 GiB) leave no level
  // of the 0.5B model inside the 1 GiB budget.
  vm.setApiContextLength(2048);
  vm.setApiSlots(4);
  const int small_api = row_of(vm, QStringLiteral("qwen2.5-0.5b-instruct"));
  ASSERT_GE(small_api, 0);
  for (const QVariant& v : vm.data(vm.index(small_api), PickerViewModel::VariantsRole).toList()) {
    const QVariantMap map = v.toMap();
    EXPECT_DOUBLE_EQ(map[QStringLiteral("apiKvBytes")].toDouble(), 4 * map[QStringLiteral("kvBytes")].toDouble());
    EXPECT_DOUBLE_EQ(map[QStringLiteral("kvBytes")].toDouble(), 2.0 * 24 * 128 * 2048 * 2);
  }
  vm.setApiSlots(64);
  EXPECT_EQ(row_of(vm, QStringLiteral("qwen2.5-0.5b-instruct")), -1);  // fits-only hides it now
  vm.setApiSlots(0);
  EXPECT_GE(row_of(vm, QStringLiteral("qwen2.5-0.5b-instruct")), 0);
}

// A mixture of experts shows its active parameters, and each variant how much
// of it one token reads (what speed follows), while the fit counts the file.
TEST(PickerViewModel, AMixtureOfExpertsShowsItsActiveShare) {
  app();
  QTemporaryDir dir;
  PickerViewModel vm;
  vm.setModelsDir(dir.path());
  const int moe = row_of(vm, QStringLiteral("qwen3-30b-a3b"));
  const int dense = row_of(vm, QStringLiteral("qwen3-8b"));
  ASSERT_GE(moe, 0);
  ASSERT_GE(dense, 0);
  const double total = vm.data(vm.index(moe), PickerViewModel::ParametersRole).toDouble();
  const double active = vm.data(vm.index(moe), PickerViewModel::ActiveParametersRole).toDouble();
  EXPECT_GT(active, 0);
  EXPECT_LT(active, total / 4);
  EXPECT_EQ(vm.data(vm.index(dense), PickerViewModel::ActiveParametersRole).toDouble(), 0.0);
  for (const QVariant& v : vm.data(vm.index(moe), PickerViewModel::VariantsRole).toList()) {
    const QVariantMap map = v.toMap();
    EXPECT_DOUBLE_EQ(map[QStringLiteral("weightsBytes")].toDouble(), map[QStringLiteral("sizeBytes")].toDouble());
    EXPECT_LT(map[QStringLiteral("bytesPerToken")].toDouble(), map[QStringLiteral("sizeBytes")].toDouble() / 4);
  }
  for (const QVariant& v : vm.data(vm.index(dense), PickerViewModel::VariantsRole).toList()) {
    const QVariantMap map = v.toMap();
    EXPECT_DOUBLE_EQ(map[QStringLiteral("bytesPerToken")].toDouble(), map[QStringLiteral("sizeBytes")].toDouble());
  }
}

// Every variant says how its download is checked, following the catalog:
// an estimated size is "verified at download", a missing catalog SHA-256 is
// replaced by the one Hugging Face publishes.
TEST(PickerViewModel, SaysWhatIsEstimatedAndHowDownloadsAreVerified) {
  app();
  QTemporaryDir dir;
  PickerViewModel vm;
  vm.setModelsDir(dir.path());
  const auto catalog = models::load_builtin_catalog();
  ASSERT_TRUE(catalog.ok());
  int checked = 0;
  for (const auto& model : catalog->models) {
    const int row = row_of(vm, QString::fromStdString(model.id));
    ASSERT_GE(row, 0);
    const QVariantList variants = vm.data(vm.index(row), PickerViewModel::VariantsRole).toList();
    ASSERT_EQ(variants.size(), static_cast<qsizetype>(model.variants.size()));
    for (size_t i = 0; i < model.variants.size(); ++i) {
      const auto& v = model.variants[i];
      const QVariantMap map = variants[static_cast<qsizetype>(i)].toMap();
      const QString note = map[QStringLiteral("verifyNote")].toString();
      EXPECT_EQ(map[QStringLiteral("sizeIsEstimate")].toBool(), v.size_is_estimate);
      EXPECT_EQ(note.contains(QStringLiteral("verified at download")), v.size_is_estimate) << note.toStdString();
      const bool hf = v.url.rfind("https://huggingface.co/", 0) == 0;
      EXPECT_EQ(note.contains(QStringLiteral("SHA-256 Hugging Face publishes")), !v.sha256 && hf) << note.toStdString();
      EXPECT_EQ(note.contains(QStringLiteral("catalog's SHA-256")), v.sha256.has_value()) << note.toStdString();
      ++checked;
    }
  }
  EXPECT_GE(checked, 30);
}

TEST(PickerViewModel, SeesInstalledFilesAndImportsLocalGguf) {
  app();
  QTemporaryDir dir;
  // A file named like a catalog URL counts as installed.
  QFile file(dir.filePath(QStringLiteral("SmolLM2-360M-Instruct-Q8_0.gguf")));
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  file.write("GGUF");
  file.close();
  PickerViewModel vm;
  vm.setModelsDir(dir.path());
  const int row = row_of(vm, QStringLiteral("smollm2-360m-instruct"));
  ASSERT_GE(row, 0);
  EXPECT_EQ(vm.data(vm.index(row), PickerViewModel::InstalledQuantsRole).toStringList(),
            QStringList{QStringLiteral("Q8_0")});
  QString loaded;
  QObject::connect(&vm, &PickerViewModel::loadRequested, [&](const QString& path, bool) { loaded = path; });
  vm.load(QStringLiteral("smollm2-360m-instruct"), QStringLiteral("Q8_0"));
  EXPECT_EQ(loaded, file.fileName());

  const int before = vm.totalCount();
  ASSERT_TRUE(vm.importLocalFile(QStringLiteral(HEARTH_TEST_DATA_DIR "/models/tiny-qwen2-q8_0.gguf")))
      << vm.lastError().toStdString();
  EXPECT_EQ(vm.totalCount(), before + 1);
  EXPECT_FALSE(vm.importLocalFile(QStringLiteral("/nonexistent/model.gguf")));
  EXPECT_FALSE(vm.lastError().isEmpty());
  EXPECT_FALSE(vm.addFromUrl(QStringLiteral("http://example.com/model.gguf")));
  EXPECT_TRUE(vm.addFromUrl(QStringLiteral("https://example.com/some/Model-Q5_K_M.gguf")));
}


// Hashing runs on a worker: verify() returns before the outcome, progress climbs to
// 100 % in steps, and the digest matches one computed independently (Python's
// hashlib over the same bytes).
TEST(PickerViewModel, VerifiesOffTheGuiThreadWithProgress) {
  app();
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("SmolLM2-360M-Instruct-Q8_0.gguf"));
  {
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    QByteArray bytes(10 * 1024 * 1024 + 123, Qt::Uninitialized);
    for (qsizetype i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7 + 3) % 251);
    ASSERT_EQ(file.write(bytes), bytes.size());
  }
  const std::string reference = "98c3ca37405b427e4dafb90f2b7180ef18c27a8d5b6e94159ade47fc2fb49df5";
  {
    // The sidecar records the digest of a different file: a mismatch must be reported.
    QFile meta(path + QStringLiteral(".hearth.json"));
    ASSERT_TRUE(meta.open(QIODevice::WriteOnly));
    meta.write(R"({"catalog_id":"smollm2-360m-instruct","quant":"Q8_0","source_url":"","sha256":")"
               "0000000000000000000000000000000000000000000000000000000000000000\"}");
  }
  PickerViewModel vm;
  vm.setModelsDir(dir.path());
  std::vector<double> progress;
  QObject::connect(&vm, &PickerViewModel::verifyProgressChanged, [&] {
    if (!vm.verifying().isEmpty()) progress.push_back(vm.verifyProgress());
  });
  QSignalSpy verified(&vm, &PickerViewModel::verified);
  vm.verify(QStringLiteral("smollm2-360m-instruct"), QStringLiteral("Q8_0"));
  // Nothing was hashed inline: the outcome arrives later, through the event loop.
  EXPECT_EQ(verified.count(), 0);
  EXPECT_EQ(vm.verifying(), QStringLiteral("smollm2-360m-instruct:Q8_0"));
  ASSERT_TRUE(verified.wait(60000));
  EXPECT_TRUE(vm.verifying().isEmpty());
  EXPECT_FALSE(verified.at(0).at(2).toBool());
  EXPECT_TRUE(verified.at(0).at(3).toString().contains(QString::fromStdString(reference)))
      << verified.at(0).at(3).toString().toStdString();
  // 4 MiB pieces of a 10 MiB file: 0 %, 39 %, 79 %, 100 %.
  EXPECT_EQ(progress, (std::vector<double>{0.0, 0.39, 0.79, 1.0}));
}

TEST(PickerPage, ScreenshotWithTheCatalogLoaded) {
  app();
  QTemporaryDir dir;
  QQmlApplicationEngine engine;
  engine.addImportPath(QStringLiteral("qrc:/"));  // as the app does: the module lives in resources
  {
    // Compile the page alone first so QML errors show up by file and line.
    QQmlComponent page_component(&engine, QUrl(QStringLiteral("qrc:/Hearth/Ui/qml/picker/PickerPage.qml")));
    ASSERT_FALSE(page_component.isError()) << page_component.errorString().toStdString();
  }
  engine.loadData(QByteArrayLiteral(R"(
import QtQuick
import QtQuick.Controls
import Hearth.Ui
ApplicationWindow {
    width: 1100; height: 900; visible: true
    PickerPage { objectName: "picker"; anchors.fill: parent }
}
)"));
  ASSERT_EQ(engine.rootObjects().size(), 1);
  auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().first());
  ASSERT_NE(window, nullptr);
  auto* page = window->findChild<QQuickItem*>(QStringLiteral("picker"));
  ASSERT_NE(page, nullptr);
  auto* vm = qvariant_cast<PickerViewModel*>(page->property("picker"));
  ASSERT_NE(vm, nullptr);
  vm->setModelsDir(dir.path());
  vm->setVramFreeBytes(6.0 * (1 << 30));  // a 6 GiB GPU, for a varied picture
  EXPECT_EQ(vm->rowCount(), vm->totalCount());
  EXPECT_GE(vm->rowCount(), 15);
  ASSERT_TRUE(QTest::qWaitForWindowExposed(window));
  QTest::qWait(200);
  const QImage shot = window->grabWindow();
  ASSERT_FALSE(shot.isNull());
  EXPECT_EQ(shot.width(), static_cast<int>(1100 * window->devicePixelRatio()));
  // A rendered page, not a blank one: many distinct colours.
  QSet<QRgb> colours;
  for (int y = 0; y < shot.height(); y += 7) {
    for (int x = 0; x < shot.width(); x += 7) colours.insert(shot.pixel(x, y));
  }
  EXPECT_GT(colours.size(), 20);
  const QString out = QStringLiteral(HEARTH_BINARY_DIR "/picker-screenshot.png");
  ASSERT_TRUE(shot.save(out)) << out.toStdString();
}

}  // namespace
}  // namespace hearth::ui
