// Compare levels in the app, offscreen: the real window (AppContext and its
// QML), the real engine thread and the fixture models. The table's figures
// are checked against the reference engine's (tests/data/quality/expected.json),
// the chart PNG is decoded, the recommendation follows its rule, a level the
// quantizer makes appears and is used. On the EngineService itself: a chat
// message that arrives while a job step runs starts before the next step
// (counted in steps, never in time), and a cancelled job leaves no files.
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickItemGrabResult>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <hearth/engine/gguf/reader.h>
#include <hearth/models/model_registry.h>

#include "compare/compare_controller.h"
#include "compare/compare_job.h"
#include "compare/recommend.h"
#include "engine_service/engine_service.h"
#include "gui/app_context.h"
#include "store/sqlite_conversation_store.h"

namespace hearth::app {
namespace {

namespace fs = std::filesystem;

QString data(const QString& rel) { return QStringLiteral(HEARTH_TEST_DATA_DIR "/") + rel; }

nlohmann::json expected() {
  QFile f(data(QStringLiteral("quality/expected.json")));
  EXPECT_TRUE(f.open(QIODevice::ReadOnly));
  return nlohmann::json::parse(f.readAll().toStdString());
}

QVariantMap level(const QString& quant, const QString& path) {
  return {{QStringLiteral("quant"), quant}, {QStringLiteral("path"), path}, {QStringLiteral("make"), false}};
}

// Waits for the controller's run to end (a long time budget: the figure is
// never asserted, it only bounds a hung test).
bool wait_done(CompareController* c) {
  return QTest::qWaitFor([&] { return !c->running(); }, 600000);
}

TEST(CompareFlow, TwoFixtureLevelsGiveTheTableTheChartAndTheRecommendation) {
  QTemporaryDir dir;
  AppOptions options;
  options.data_dir = dir.path();
  AppContext context(options);
  QQmlApplicationEngine qml;
  ASSERT_TRUE(context.show(qml));
  CompareController* c = context.compare();
  ASSERT_NE(c, nullptr);
  c->setFloorKind(QStringLiteral("top1"));
  c->setFloorValue(90);
  EXPECT_TRUE(c->floorText().contains(QStringLiteral("90 % of the time"))) << c->floorText().toStdString();

  const auto exp = expected();
  const auto& q8 = exp["kl_divergence"][0];
  ASSERT_NE(q8["model"].get<std::string>().find("q8_0"), std::string::npos);
  const QVariantList levels = {level(QStringLiteral("Q8_0"), data(QString::fromStdString(q8["model"]))),
                               level(QStringLiteral("F32"), data(QString::fromStdString(q8["base"])))};
  // A text is scored in the reference's windows (ctx 128, as expected.json).
  ASSERT_EQ(exp["ctx"].get<int>(), 128);
  ASSERT_TRUE(c->start(QStringLiteral("tiny-llama"), QStringLiteral("tiny llama"), levels, data(QString::fromStdString(q8["text"]))))
      << c->error().toStdString();
  EXPECT_TRUE(c->running());
  ASSERT_TRUE(wait_done(c));
  ASSERT_TRUE(c->error().isEmpty()) << c->error().toStdString();

  // The table: the reference (the highest level, F32) first.
  const QVariantList rows = c->results();
  ASSERT_EQ(rows.size(), 2);
  const auto base = rows[0].toMap(), q8row = rows[1].toMap();
  EXPECT_EQ(base[QStringLiteral("quant")].toString(), QStringLiteral("F32"));
  EXPECT_TRUE(base[QStringLiteral("isBase")].toBool());
  EXPECT_EQ(q8row[QStringLiteral("quant")].toString(), QStringLiteral("Q8_0"));
  const double kld = q8["kld_mean"];
  EXPECT_NEAR(q8row[QStringLiteral("kldMean")].toDouble(), kld, std::max(0.02 * kld, 2e-5));
  EXPECT_NEAR(100.0 * q8row[QStringLiteral("top1")].toDouble(), q8["top1_percent"].get<double>(), 1.0);
  for (const auto& r : {base, q8row}) {
    EXPECT_GT(r[QStringLiteral("tgTps")].toDouble(), 0.0);
    EXPECT_GT(r[QStringLiteral("ppTps")].toDouble(), 0.0);
    EXPECT_EQ(r[QStringLiteral("fileBytes")].toDouble(),
              static_cast<double>(fs::file_size(r[QStringLiteral("path")].toString().toStdString())));
    EXPECT_GT(r[QStringLiteral("memoryBytes")].toDouble(), r[QStringLiteral("fileBytes")].toDouble());
    EXPECT_EQ(r[QStringLiteral("answers")].toStringList().size(), c->prompts().size());
  }
  EXPECT_FALSE(c->prompts().isEmpty());

  // The chart: a PNG at the known place that decodes to a drawn picture.
  const QString png = c->chartPath();
  ASSERT_FALSE(png.isEmpty());
  EXPECT_TRUE(png.startsWith(dir.path()));
  EXPECT_GT(QFileInfo(png).size(), 5000);
  QImage image(png);
  ASSERT_FALSE(image.isNull());
  EXPECT_EQ(image.width(), 900);
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 4) {
    for (int x = 0; x < image.width(); x += 4) colours.insert(image.pixel(x, y));
  }
  EXPECT_GT(colours.size(), 8);  // axes, text, two markers: not a blank image

  // The recommendation follows "smallest level within the floor that fits":
  // Q8_0 agrees 95.5 % (reference) >= 90 % and is smaller than F32.
  QString want;
  double want_bytes = 0;
  for (const auto& v : rows) {
    const auto r = v.toMap();
    if (100.0 * r[QStringLiteral("top1")].toDouble() < 90.0 || r[QStringLiteral("fits")].toString() == "no") continue;
    if (want.isEmpty() || r[QStringLiteral("memoryBytes")].toDouble() < want_bytes) {
      want = r[QStringLiteral("quant")].toString();
      want_bytes = r[QStringLiteral("memoryBytes")].toDouble();
    }
  }
  EXPECT_EQ(want, QStringLiteral("Q8_0"));
  EXPECT_EQ(c->recommended(), want);
  EXPECT_TRUE(c->recommendation().startsWith(QStringLiteral("Q8_0"))) << c->recommendation().toStdString();
  // A floor Q8_0 does not meet leaves the reference itself. It is set here
  // on the Settings page, which edits the same setting.
  QObject* window = qml.rootObjects().first();
  QObject* settings_floor = window->findChild<QObject*>(QStringLiteral("settingsQualityFloor"));
  ASSERT_NE(settings_floor, nullptr);
  QObject* floor_field = settings_floor->findChild<QObject*>(QStringLiteral("qualityFloorValue"));
  ASSERT_NE(floor_field, nullptr);
  EXPECT_EQ(floor_field->property("text").toString(), QStringLiteral("90"));
  floor_field->setProperty("text", QStringLiteral("99.9"));
  ASSERT_TRUE(QMetaObject::invokeMethod(floor_field, "editingFinished"));
  EXPECT_DOUBLE_EQ(c->floorValue(), 99.9);
  EXPECT_EQ(c->recommended(), QStringLiteral("F32"));

  // The page in the window: its ChartView draws a series per level and grabs
  // to an image (what Save chart writes).
  QObject* root = qml.rootObjects().first();
  QObject* picker = root->findChild<QObject*>(QStringLiteral("pickerPage"));
  ASSERT_NE(picker, nullptr);
  const QVariantList variants = {QVariantMap{{"quant", "F32"}}, QVariantMap{{"quant", "Q8_0"}}};
  ASSERT_TRUE(QMetaObject::invokeMethod(picker, "openCompare", Q_ARG(QVariant, QStringLiteral("tiny")),
                                        Q_ARG(QVariant, QStringLiteral("tiny llama")), Q_ARG(QVariant, variants)));
  QObject* page = root->findChild<QObject*>(QStringLiteral("compareLevels"));
  ASSERT_NE(page, nullptr);
  ASSERT_TRUE(QMetaObject::invokeMethod(page, "drawChart"));
  auto* chart = page->findChild<QQuickItem*>(QStringLiteral("compareChart"));
  ASSERT_NE(chart, nullptr);
  EXPECT_EQ(chart->property("count").toInt(), 2);
  auto grab = chart->grabToImage(QSize(640, 360));
  ASSERT_TRUE(grab);
  QSignalSpy ready(grab.data(), &QQuickItemGrabResult::ready);
  ASSERT_TRUE(ready.wait(60000));
  EXPECT_FALSE(grab->image().isNull());
  const QString saved = dir.filePath(QStringLiteral("saved-chart.png"));
  EXPECT_TRUE(grab->saveToFile(saved));
  EXPECT_FALSE(QImage(saved).isNull());
}

// The questions the user asked, as the compared prompts: the branch last
// looked at only, the chosen conversations only, long pastes left out, and
// each prompt labelled with its conversation's title.
TEST(CompareFlow, QuestionsFromChosenConversationsAreTheComparedPrompts) {
  QTemporaryDir dir;
  int64_t trip = 0, german = 0;
  {
    auto opened = ui::SqliteConversationStore::open(fs::path(dir.filePath(QStringLiteral("hearth.sqlite3")).toStdString()));
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    auto& store = **opened;
    const auto user = ui::StoredRole::User, assistant = ui::StoredRole::Assistant;
    const auto done = ui::MessageState::Complete;
    auto c1 = store.create_conversation("Trip planning");
    ASSERT_TRUE(c1.ok());
    trip = c1->id.value;
    auto u1 = store.append_message(c1->id, std::nullopt, user, "Where should I go in May?", done);
    ASSERT_TRUE(u1.ok());
    auto a1 = store.append_message(c1->id, u1->id, assistant, "Lisbon is mild then.", done);
    ASSERT_TRUE(a1.ok());
    // An edit made a second branch; the user went back to the first.
    auto first = store.append_message(c1->id, a1->id, user, "And in June?", done);
    ASSERT_TRUE(first.ok());
    ASSERT_TRUE(store.append_message(c1->id, a1->id, user, "And what about Porto?", done).ok());
    ASSERT_TRUE(store.set_active_leaf(c1->id, first->id).ok());
    auto c2 = store.create_conversation("Deutsch");
    ASSERT_TRUE(c2.ok());
    german = c2->id.value;
    auto g1 = store.append_message(c2->id, std::nullopt, user, "Wie spät ist es in Tokio?", done);
    ASSERT_TRUE(g1.ok());
    auto g2 = store.append_message(c2->id, g1->id, assistant, "Neun Stunden später.", done);
    ASSERT_TRUE(g2.ok());
    auto g3 = store.append_message(c2->id, g2->id, user, std::string(2500, 'x'), done);  // a paste
    ASSERT_TRUE(g3.ok());
    auto g4 = store.append_message(c2->id, g3->id, assistant, "Das ist lang.", done);
    ASSERT_TRUE(g4.ok());
    ASSERT_TRUE(store.append_message(c2->id, g4->id, user, "Danke!", done).ok());
    auto c3 = store.create_conversation("Not chosen");
    ASSERT_TRUE(c3.ok());
    ASSERT_TRUE(store.append_message(c3->id, std::nullopt, user, "Never compared", done).ok());
  }
  AppOptions options;
  options.data_dir = dir.path();
  AppContext context(options);
  QQmlApplicationEngine qml;
  ASSERT_TRUE(context.show(qml));
  CompareController* c = context.compare();
  QSignalSpy listed(c, &CompareController::conversationsChanged);
  c->refreshConversations();
  ASSERT_TRUE(listed.wait(60000));
  QStringList titles;
  for (const auto& v : c->conversations()) titles << v.toMap()[QStringLiteral("title")].toString();
  EXPECT_EQ(titles.size(), 3);
  EXPECT_TRUE(titles.contains(QStringLiteral("Trip planning")));

  const QVariantList levels = {level(QStringLiteral("Q8_0"), data(QStringLiteral("models/tiny-llama-q8_0.gguf"))),
                               level(QStringLiteral("F32"), data(QStringLiteral("models/tiny-llama-f32.gguf")))};
  EXPECT_FALSE(c->startOnConversations(QStringLiteral("tiny-llama"), QStringLiteral("tiny llama"), levels, {}));
  EXPECT_FALSE(c->error().isEmpty());
  ASSERT_TRUE(c->startOnConversations(QStringLiteral("tiny-llama"), QStringLiteral("tiny llama"), levels,
                                      {QVariant::fromValue<qlonglong>(trip), QVariant::fromValue<qlonglong>(german)}))
      << c->error().toStdString();
  EXPECT_TRUE(c->running());
  ASSERT_TRUE(wait_done(c));
  ASSERT_TRUE(c->error().isEmpty()) << c->error().toStdString();
  const QStringList want = {QStringLiteral("Where should I go in May?"), QStringLiteral("And in June?"),
                            QStringLiteral("Wie spät ist es in Tokio?"), QStringLiteral("Danke!")};
  EXPECT_EQ(c->prompts(), want);
  EXPECT_EQ(c->promptCategories(), (QStringList{QStringLiteral("Trip planning"), QStringLiteral("Trip planning"),
                                                QStringLiteral("Deutsch"), QStringLiteral("Deutsch")}));
  const QVariantList rows = c->results();
  ASSERT_EQ(rows.size(), 2);
  for (const auto& r : rows) {
    const QStringList answers = r.toMap()[QStringLiteral("answers")].toStringList();
    ASSERT_EQ(answers.size(), want.size());
    for (const auto& a : answers) EXPECT_FALSE(a.isEmpty());
  }
}

TEST(CompareFlow, ALevelMadeInTheFlowAppearsAndIsUsed) {
  QTemporaryDir dir;
  AppOptions options;
  options.data_dir = dir.path();
  AppContext context(options);
  QQmlApplicationEngine qml;
  ASSERT_TRUE(context.show(qml));
  CompareController* c = context.compare();
  // The user's models folder: the F32 file only.
  const QString models = dir.filePath(QStringLiteral("models"));
  QDir().mkpath(models);
  const QString f32 = models + QStringLiteral("/tiny-llama-f32.gguf");
  ASSERT_TRUE(QFile::copy(data(QStringLiteral("models/tiny-llama-f32.gguf")), f32));
  const QVariantList choices = c->levelChoices({QVariantMap{{"quant", "F32"}, {"path", f32}}},
                                               {QStringLiteral("F32"), QStringLiteral("Q8_0"), QStringLiteral("Q4_0")});
  ASSERT_EQ(choices.size(), 3);
  QVariantMap q4;
  for (const auto& v : choices) {
    if (v.toMap()[QStringLiteral("quant")] == QStringLiteral("Q4_0")) q4 = v.toMap();
  }
  ASSERT_TRUE(q4[QStringLiteral("make")].toBool());
  const QString made = q4[QStringLiteral("path")].toString();
  EXPECT_EQ(QFileInfo(made).absolutePath(), QFileInfo(f32).absolutePath());  // beside the others
  QSignalSpy made_spy(c, &CompareController::levelMade);
  ASSERT_TRUE(c->start(QStringLiteral("tiny-llama"), QStringLiteral("tiny llama"), {choices[0], q4}, QStringLiteral("builtin")))
      << c->error().toStdString();
  ASSERT_TRUE(wait_done(c));
  ASSERT_TRUE(c->error().isEmpty()) << c->error().toStdString();
  ASSERT_TRUE(QFileInfo::exists(made));
  ASSERT_EQ(made_spy.size(), 1);
  EXPECT_EQ(made_spy[0][0].toString(), made);
  // Made with an importance matrix from the shipped calibration text (on by default).
  auto made_file = hearth::gguf::GgufFile::open(made.toStdString());
  ASSERT_TRUE(made_file.ok()) << made_file.error().message;
  auto dataset = made_file->get_string("quantize.imatrix.dataset");
  ASSERT_TRUE(dataset.ok()) << dataset.error().message;
  EXPECT_EQ(*dataset, "calibration/default.txt");
  const QVariantList rows = c->results();
  ASSERT_EQ(rows.size(), 2);
  EXPECT_TRUE(rows[1].toMap()[QStringLiteral("made")].toBool());
  EXPECT_EQ(rows[1].toMap()[QStringLiteral("path")].toString(), made);
  EXPECT_GT(rows[1].toMap()[QStringLiteral("kldMean")].toDouble(), 0.0);
  // The built-in set: 8 prompts (chat, code, summary, non-English), each answered.
  EXPECT_EQ(c->prompts().size(), 8);
  EXPECT_EQ(rows[1].toMap()[QStringLiteral("answers")].toStringList().size(), 8);
  // Registered under the card's model: the picker's registry finds it.
  const auto found = models::ModelRegistry(QFileInfo(made).absolutePath().toStdString()).find("tiny-llama", "Q4_0");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(QString::fromStdString(found->path.string()), made);
  // Next time the level is offered as one Hearth has.
  const QVariantList again = c->levelChoices({QVariantMap{{"quant", "F32"}, {"path", f32}}}, {QStringLiteral("Q4_0")});
  ASSERT_EQ(again.size(), 2);
  EXPECT_FALSE(again[1].toMap()[QStringLiteral("make")].toBool());
}

// The job as the service runs it, with a log of what ran in which order.
class LoggedJob final : public BackgroundJob {
 public:
  LoggedJob(std::unique_ptr<compare::CompareJob> job, std::vector<std::string>& log, std::function<void(int)> on_step)
      : job_(std::move(job)), log_(log), on_step_(std::move(on_step)) {}
  Result<bool> step() override {
    log_.push_back("step");
    on_step_(++steps_);
    return job_->step();
  }
  double progress() const override { return 0; }
  std::string activity() const override { return job_->activity(); }

 private:
  std::unique_ptr<compare::CompareJob> job_;
  std::vector<std::string>& log_;
  std::function<void(int)> on_step_;
  int steps_ = 0;
};

// Forwards to the real engine and logs when a reply starts.
class LoggedEngine final : public ChatEngine {
 public:
  LoggedEngine(std::unique_ptr<ChatEngine> inner, std::vector<std::string>& log) : inner_(std::move(inner)), log_(log) {}
  Result<ui::ModelInfo> load(const ui::LoadRequest& r, const ProgressFn& p, const CancelledFn& c) override {
    return inner_->load(r, p, c);
  }
  void unload() override { inner_->unload(); }
  Result<ui::GenerationStats> generate(const ui::GenerationRequest& r, const PieceFn& piece, const PieceFn& reasoning,
                                       const ContextEventFn& event, const CancelledFn& cancelled) override {
    log_.push_back("generate");
    return inner_->generate(r, piece, reasoning, event, cancelled);
  }
  bool has_background_work() const override { return inner_->has_background_work(); }
  Status background_step(const ContextEventFn& e) override { return inner_->background_step(e); }

 private:
  std::unique_ptr<ChatEngine> inner_;
  std::vector<std::string>& log_;
};

compare::JobOptions fixture_job(const fs::path& work) {
  compare::JobOptions o;
  o.base = {"F32", data(QStringLiteral("models/tiny-llama-f32.gguf")).toStdString(), std::nullopt, {}};
  o.levels = {{"Q8_0", data(QStringLiteral("models/tiny-llama-q8_0.gguf")).toStdString(), std::nullopt, {}}};
  o.inputs.prompts = {"Once upon a time", "The girl saw a big dog", "Mom said"};
  o.greedy_tokens = 8;
  o.speed = {16, 4, 1};
  o.machine.ram_available_bytes = 64ull << 30;
  o.work_dir = work;
  return o;
}

// The service on the test's thread: steps and replies are queued calls on one
// event loop, the engine thread's discipline, so the order is observable.
struct ServiceRig {
  std::vector<std::string> log;
  std::unique_ptr<EngineService> service;

  ServiceRig() {
    service = std::make_unique<EngineService>(std::make_unique<LoggedEngine>(make_default_chat_engine(), log));
    QSignalSpy loaded(service.get(), &EngineService::modelLoaded);
    ui::LoadRequest load;
    load.model_path = data(QStringLiteral("models/stories260K.gguf"));
    load.context_length = 256;
    load.gpu_layers = 0;
    load.threads = 2;
    service->load(load);
    EXPECT_EQ(loaded.size(), 1);
  }
};

TEST(CompareJobOnTheEngine, AChatMessageStartsWithinOneStep) {
  QTemporaryDir dir;
  ServiceRig rig;
  EngineService* service = rig.service.get();
  auto& log = rig.log;
  ui::GenerationRequest request;
  request.turns.append({ui::ChatRole::User, QStringLiteral("Once upon a time")});
  request.sampling.temperature = 0;
  request.max_new_tokens = 8;
  // While step 3 runs, a message arrives: queued behind the step in flight.
  auto on_step = [&](int n) {
    if (n != 3) return;
    log.push_back("message");
    QMetaObject::invokeMethod(service, [service, request] { service->generate(1, request); }, Qt::QueuedConnection);
  };
  auto job = compare::CompareJob::create(fixture_job(dir.path().toStdString()));
  ASSERT_TRUE(job.ok()) << job.error().message;
  QSignalSpy finished(service, &EngineService::jobFinished);
  QSignalSpy replied(service, &EngineService::finished);
  service->start_job(1, std::make_shared<LoggedJob>(std::move(*job), log, on_step));
  ASSERT_TRUE(QTest::qWaitFor([&] { return finished.size() == 1; }, 600000));
  ASSERT_EQ(replied.size(), 1);
  // Steps begun between the message's arrival and its start: none (the step
  // it arrived during had already begun), so it waited at most one step.
  const auto message = std::find(log.begin(), log.end(), "message");
  const auto generate = std::find(log.begin(), log.end(), "generate");
  ASSERT_NE(message, log.end());
  ASSERT_NE(generate, log.end());
  ASSERT_LT(message, generate);
  EXPECT_EQ(std::count(message, generate, std::string("step")), 0);
  // And the job went on afterwards.
  EXPECT_GT(std::count(generate, log.end(), std::string("step")), 0);
}

TEST(CompareJobOnTheEngine, CancelStopsTheJobAndRemovesItsFiles) {
  QTemporaryDir dir;
  ServiceRig rig;
  EngineService* service = rig.service.get();
  int steps_seen = 0;
  auto job = compare::CompareJob::create(fixture_job(dir.path().toStdString()));
  ASSERT_TRUE(job.ok());
  QSignalSpy cancelled(service, &EngineService::jobCancelled);
  QSignalSpy finished(service, &EngineService::jobFinished);
  service->start_job(7, std::make_shared<LoggedJob>(std::move(*job), rig.log, [&](int n) {
    steps_seen = n;
    if (n == 5) service->cancel_job(7);  // thread-safe; takes effect before the next step
  }));
  ASSERT_TRUE(QTest::qWaitFor([&] { return cancelled.size() == 1; }, 600000));
  EXPECT_EQ(cancelled[0][0].toLongLong(), 7);
  EXPECT_EQ(steps_seen, 5);  // no step after the cancel
  EXPECT_EQ(finished.size(), 0);
  // The job's folder is gone: nothing left in the work directory.
  EXPECT_TRUE(QDir(dir.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).isEmpty());
}

}  // namespace
}  // namespace hearth::app

// Qt Charts draws through Graphics View, which needs a QApplication.
int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
