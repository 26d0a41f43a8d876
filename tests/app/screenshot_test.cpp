// Renders the main window (a conversation with Markdown, a code block and a
// table) and the settings page offscreen and keeps them as PNG files under
// <build>/test-output/screenshots for reviewers. The checks compare pixels
// with the design's colours, so a window that fails to render is caught. The
// same window also checks that the overflow policy control under the composer
// drives the chat controller, and that a stored reply's thinking opens folded
// under a "Thought for N s" header above the answer.
#include <QDir>
#include <QImage>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <set>

#include "controllers/chat_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "gui/app_context.h"
#include "store/memory_conversation_store.h"
#include "store/sqlite_conversation_store.h"

namespace hearth::app {
namespace {

// A ChatEngine double that "loads" instantly and describes a 1B-class model,
// so the status line and the memory bar show realistic figures.
class PictureEngine final : public ChatEngine {
 public:
  // The reasoning switch the "model" offers (none by default).
  QStringList reasoning_choices;

  Result<ui::ModelInfo> load(const ui::LoadRequest& request, const ProgressFn&, const CancelledFn&) override {
    ui::ModelInfo info;
    info.path = request.model_path;
    info.name = QStringLiteral("Llama 3.2 1B Instruct");
    info.quant = QStringLiteral("Q4_K_M");
    info.backend = QStringLiteral("Vulkan: AMD Radeon 780M");
    info.context_max = 8192;
    info.context_train = 131072;
    info.shape.n_layer = 16;
    info.shape.n_head_kv = 8;
    info.shape.head_dim = 64;
    info.shape.n_embd = 2048;
    info.shape.n_vocab = 128256;
    info.shape.weights_bytes = 807'694'464;
    info.reasoning_choices = reasoning_choices;
    return info;
  }
  void unload() override {}
  Result<ui::GenerationStats> generate(const ui::GenerationRequest&, const PieceFn&, const PieceFn&,
                                       const ContextEventFn&, const CancelledFn&) override {
    return ui::GenerationStats{};
  }
};

std::unique_ptr<ui::ConversationStore> sample_store() {
  auto store = std::make_unique<ui::MemoryConversationStore>();
  auto add = [&](const char* title) { return store->create_conversation(title).value().id; };
  add("Trip ideas for the Alps");
  add("Sourdough starter troubleshooting");
  const auto pinned = add("Weekly meal plan");
  (void)store->set_pinned(pinned, true);
  add("Explain Rust lifetimes");
  const auto c = add("Parsing CSV in Python");
  auto user = store->append_message(c, std::nullopt, ui::StoredRole::User,
                                    "How do I read a CSV file and sum a column in Python?",
                                    ui::MessageState::Complete).value();
  auto reply = store->append_message(
      c, user.id, ui::StoredRole::Assistant,
      "Use the standard **csv** module; no extra packages needed:\n\n"
      "```python\nimport csv\n\nwith open(\"sales.csv\", newline=\"\") as f:\n"
      "    total = sum(float(row[\"amount\"]) for row in csv.DictReader(f))\nprint(total)\n```\n\n"
      "A few things to keep in mind:\n\n"
      "- `DictReader` uses the first row as column names.\n"
      "- Pass `newline=\"\"` so quoted fields with line breaks are read correctly.\n\n"
      "| Approach | Best for |\n|---|---|\n| `csv` | small files, no dependencies |\n"
      "| `pandas` | analysis, large files |",
      ui::MessageState::Complete).value();
  ui::ReplyFigures figures{182, 38.4, 96, "Vulkan: AMD Radeon 780M"};
  (void)store->update_message(reply.id, reply.content, ui::MessageState::Complete, figures, {});
  return store;
}

QString output_dir() {
  const QString dir = QStringLiteral(HEARTH_BINARY_DIR "/test-output/screenshots");
  QDir().mkpath(dir);
  return dir;
}

// How many distinct colours an image has: a blank or failed render has few.
size_t colour_count(const QImage& image) {
  std::set<QRgb> colours;
  for (int y = 0; y < image.height(); y += 3) {
    for (int x = 0; x < image.width(); x += 3) colours.insert(image.pixel(x, y));
  }
  return colours.size();
}

TEST(Screenshots, MainWindowAndSettingsPage) {
  QTemporaryDir dir;
  AppOptions options;
  options.data_dir = dir.path();
  options.model_path = QStringLiteral("/models/Llama-3.2-1B-Instruct-Q4_K_M.gguf");
  AppContext context(options, std::make_unique<PictureEngine>(), sample_store());
  context.settings()->setTheme(QStringLiteral("light"));
  context.settings()->setContextLength(8192);
  context.settings()->setMemoryBudgetMib(4096);
  QQmlApplicationEngine qml;
  ASSERT_TRUE(context.show(qml));
  auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().value(0));
  ASSERT_NE(window, nullptr);
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.model()->ready(); }, 5000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.chat()->conversations()->rowCount() == 5; }, 5000));
  const qint64 csv = context.chat()->conversations()->data(
      context.chat()->conversations()->index(1), ui::ConversationListModel::IdRole).toLongLong();
  context.chat()->openConversation(csv);
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.chat()->messages()->rowCount() == 2; }, 5000));
  QTest::qWait(300);  // let the view lay out and render

  const QImage main = window->grabWindow();
  ASSERT_FALSE(main.isNull());
  EXPECT_TRUE(main.save(output_dir() + QStringLiteral("/main-window.png")));
  EXPECT_GT(colour_count(main), 50u);
  // The sidebar (left edge, below the header) has the light theme's sidebar colour.
  EXPECT_EQ(QColor(main.pixel(4, main.height() / 2)).name(), QStringLiteral("#f3eee7"));

  window->setProperty("page", QStringLiteral("settings"));
  QTest::qWait(300);
  const QImage settings = window->grabWindow();
  EXPECT_TRUE(settings.save(output_dir() + QStringLiteral("/settings.png")));
  EXPECT_GT(colour_count(settings), 50u);
  EXPECT_NE(main, settings);

  context.settings()->setTheme(QStringLiteral("dark"));
  window->setProperty("page", QStringLiteral("chat"));
  QTest::qWait(300);
  const QImage dark = window->grabWindow();
  EXPECT_TRUE(dark.save(output_dir() + QStringLiteral("/main-window-dark.png")));
  EXPECT_EQ(QColor(dark.pixel(4, dark.height() / 2)).name(), QStringLiteral("#161310"));
}

// The control under the composer shows the open conversation's policy and changes it.
TEST(Screenshots, OverflowControlDrivesTheOpenConversation) {
  QTemporaryDir dir;
  AppOptions options;
  options.data_dir = dir.path();
  options.model_path = QStringLiteral("/models/Llama-3.2-1B-Instruct-Q4_K_M.gguf");
  AppContext context(options, std::make_unique<PictureEngine>(), sample_store());
  context.settings()->setOverflowPolicy(QStringLiteral("evict"));
  QQmlApplicationEngine qml;
  ASSERT_TRUE(context.show(qml));
  auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().value(0));
  ASSERT_NE(window, nullptr);
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.chat()->conversations()->rowCount() == 5; }, 5000));
  const qint64 csv = context.chat()->conversations()->data(
      context.chat()->conversations()->index(1), ui::ConversationListModel::IdRole).toLongLong();
  context.chat()->openConversation(csv);
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.chat()->messages()->rowCount() == 2; }, 5000));

  auto* box = window->findChild<QQuickItem*>(QStringLiteral("overflowPolicyBox"));
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(box->isVisible());
  EXPECT_EQ(box->property("displayText").toString(), QStringLiteral("Use default (Drop oldest turns)"));

  // The user steps to the next entry ("Stop") with the keyboard.
  box->forceActiveFocus();
  ASSERT_TRUE(QTest::qWaitFor([&] { return box->hasActiveFocus(); }, 2000));
  QTest::keyClick(window, Qt::Key_Down);
  EXPECT_EQ(context.chat()->conversationOverflow(), QStringLiteral("stop"));
  EXPECT_EQ(box->property("displayText").toString(), QStringLiteral("Stop"));

  // Another conversation has no choice of its own: the box follows the controller.
  context.chat()->newConversation();
  EXPECT_EQ(box->property("displayText").toString(), QStringLiteral("Use default (Drop oldest turns)"));
  context.settings()->setOverflowPolicy(QStringLiteral("summarize"));
  EXPECT_EQ(box->property("displayText").toString(), QStringLiteral("Use default (Summarize oldest turns)"));
  context.chat()->openConversation(csv);
  EXPECT_EQ(box->property("displayText").toString(), QStringLiteral("Stop"));
}

// The item named `name` under `item` in the visual tree (view delegates are
// not QObject children of the window), or null.
QQuickItem* find_item(QQuickItem* item, const QString& name) {
  if (item->objectName() == name) return item;
  for (QQuickItem* child : item->childItems()) {
    if (QQuickItem* found = find_item(child, name)) return found;
  }
  return nullptr;
}

// A conversation in the real SQLite store (in memory) whose reply carries the
// model's thinking and how long it took.
std::unique_ptr<ui::ConversationStore> reasoning_store() {
  auto opened = ui::SqliteConversationStore::open_in_memory();
  EXPECT_TRUE(opened.ok());
  std::unique_ptr<ui::ConversationStore> store = std::move(opened).value();
  const auto c = store->create_conversation("Counting the r's").value().id;
  auto user = store->append_message(c, std::nullopt, ui::StoredRole::User, "How many r's are in \"strawberry\"?",
                                    ui::MessageState::Complete).value();
  auto reply = store->append_message(c, user.id, ui::StoredRole::Assistant, "", ui::MessageState::Streaming).value();
  ui::ReplyFigures figures{95, 41.7, 180, "Vulkan: AMD Radeon 780M"};
  figures.reasoning_ms = 4200;
  EXPECT_TRUE(store->update_message(reply.id, "There are **three** r's in \"strawberry\".", ui::MessageState::Complete,
                                    figures,
                                    "The user asks about the letters of \"strawberry\". Spelling it out: s, t, r, a, "
                                    "w, b, e, r, r, y. The r's are at positions 3, 8 and 9, so three.")
                  .ok());
  return store;
}

TEST(Screenshots, StoredThinkingOpensFoldedAboveTheAnswer) {
  QTemporaryDir dir;
  AppOptions options;
  options.data_dir = dir.path();
  options.model_path = QStringLiteral("/models/Qwen3-4B-Q4_K_M.gguf");
  auto engine = std::make_unique<PictureEngine>();
  engine->reasoning_choices = {QStringLiteral("off"), QStringLiteral("on")};
  AppContext context(options, std::move(engine), reasoning_store());
  context.settings()->setTheme(QStringLiteral("light"));
  QQmlApplicationEngine qml;
  ASSERT_TRUE(context.show(qml));
  auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().value(0));
  ASSERT_NE(window, nullptr);
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.model()->ready(); }, 5000));
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.chat()->conversations()->rowCount() == 1; }, 5000));
  context.chat()->openConversation(context.chat()->conversations()->data(
      context.chat()->conversations()->index(0), ui::ConversationListModel::IdRole).toLongLong());
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.chat()->messages()->rowCount() == 2; }, 5000));

  QQuickItem* root = window->contentItem();
  QQuickItem* block = nullptr;
  ASSERT_TRUE(QTest::qWaitFor([&] { return (block = find_item(root, QStringLiteral("thinkingBlock"))) != nullptr; }, 5000));
  QQuickItem* header = find_item(block, QStringLiteral("thinkingHeader"));
  QQuickItem* label = find_item(block, QStringLiteral("thinkingHeaderLabel"));
  QQuickItem* body = find_item(block, QStringLiteral("thinkingBody"));
  ASSERT_TRUE(header && label && body);
  QTest::qWait(300);  // let the view lay out and render

  // Reloaded from storage: folded, with how long the model thought.
  EXPECT_TRUE(block->isVisible());
  EXPECT_EQ(block->state(), QStringLiteral("collapsed"));
  EXPECT_FALSE(block->property("expanded").toBool());
  EXPECT_EQ(label->property("text").toString(), QStringLiteral("Thought for 4 s"));
  EXPECT_FALSE(body->isVisible());
  const QImage folded = window->grabWindow();
  ASSERT_FALSE(folded.isNull());
  EXPECT_TRUE(folded.save(output_dir() + QStringLiteral("/thinking-folded.png")));
  EXPECT_GT(colour_count(folded), 50u);

  // The header sits above the answer, inside the reply's column.
  QQuickItem* answer = find_item(root, QStringLiteral("answerText"));
  ASSERT_NE(answer, nullptr);
  EXPECT_LT(header->mapToScene(QPointF(0, header->height())).y(), answer->mapToScene(QPointF(0, 0)).y());

  // This model has a thinking switch: it shows under the composer.
  auto* reasoning_box = find_item(root, QStringLiteral("reasoningBox"));
  ASSERT_NE(reasoning_box, nullptr);
  EXPECT_TRUE(reasoning_box->isVisible());
  EXPECT_EQ(reasoning_box->property("displayText").toString(), QStringLiteral("Model default"));

  // A click opens the thinking.
  const QPointF centre = header->mapToScene(QPointF(header->width() / 2, header->height() / 2));
  QTest::mouseClick(window, Qt::LeftButton, Qt::NoModifier, centre.toPoint());
  ASSERT_TRUE(QTest::qWaitFor([&] { return block->state() == QStringLiteral("expanded"); }, 2000));
  EXPECT_TRUE(body->isVisible());
  EXPECT_GT(body->height(), 0);
  QTest::qWait(200);
  const QImage open = window->grabWindow();
  EXPECT_TRUE(open.save(output_dir() + QStringLiteral("/thinking-open.png")));
  EXPECT_EQ(open.size(), folded.size());
}

// A model without a switch shows none.
TEST(Screenshots, NoThinkingSwitchForAModelWithout) {
  QTemporaryDir dir;
  AppOptions options;
  options.data_dir = dir.path();
  options.model_path = QStringLiteral("/models/Llama-3.2-1B-Instruct-Q4_K_M.gguf");
  AppContext context(options, std::make_unique<PictureEngine>(), sample_store());
  QQmlApplicationEngine qml;
  ASSERT_TRUE(context.show(qml));
  auto* window = qobject_cast<QQuickWindow*>(qml.rootObjects().value(0));
  ASSERT_NE(window, nullptr);
  ASSERT_TRUE(QTest::qWaitFor([&] { return context.model()->ready(); }, 5000));
  auto* control = find_item(window->contentItem(), QStringLiteral("reasoningControl"));
  ASSERT_NE(control, nullptr);
  EXPECT_FALSE(control->isVisible());
}

}  // namespace
}  // namespace hearth::app
