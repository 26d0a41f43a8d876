// A reasoning model in the app: the real engine on its thread, the real SQLite
// store and the controllers the window binds to, on a fixture model given a
// chat template that thinks (the fixtures' own templates are plain ChatML).
//
// The reference is the engine's chat layer driven directly, as the app loads
// the model (CPU, F16 cache, greedy), with the reply's decoded tokens split at
// the first "</think>": what the app streams, stores and shows must be that
// reasoning and that answer, apart. With a template that opens the reasoning
// in its generation prompt and never renders it back, the second turn also
// shows that the first reply's reasoning stayed out of the prompt. With a
// template that has a thinking switch, the conversation's choice is stored
// and reaches the template.
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/backend_choice.h>
#include <hearth/engine/runtime/chat_context.h>
#include <hearth/engine/runtime/chat_format.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "controllers/chat_controller.h"
#include "controllers/model_controller.h"
#include "controllers/settings_controller.h"
#include "engine/memory_sizer.h"
#include "engine_service/engine_service_client.h"
#include "store/sqlite_conversation_store.h"
#include "store/storage_executor.h"
#include "../engine/runtime/utf8_reference.h"

namespace hearth::app {
namespace {

constexpr int kContext = 1024;
constexpr int kThreads = 1;

// DeepSeek-R1 style: the generation prompt opens the reasoning, earlier
// replies are rendered without theirs, and there is no switch.
const char* kOpensThinking =
    "{% for m in messages %}{% if m.role == 'user' %}User: {{ m.content }}\n"
    "{% elif m.role == 'assistant' %}Assistant: {{ m.content }}\n{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}Assistant: <think>\n{% endif %}";

// Qwen3 style: the model opens the reasoning itself; enable_thinking=false
// writes an empty block into the generation prompt.
const char* kThinkingSwitch =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}";

// `from` with its chat template replaced: metadata, tensor declarations and
// data copied as they are.
void write_with_template(const std::filesystem::path& from, const std::filesystem::path& to,
                         const std::string& chat_template) {
  auto file = gguf::GgufFile::open(from);
  ASSERT_TRUE(file.ok()) << file.error().message;
  std::vector<gguf::KeyValue> metadata;
  for (const auto& kv : file->metadata()) {
    if (kv.key != "tokenizer.chat_template") metadata.push_back(kv);
  }
  metadata.push_back({"tokenizer.chat_template", gguf::make_string(chat_template)});
  std::vector<std::pair<gguf::TensorSpec, std::vector<uint8_t>>> tensors;
  for (const auto& t : file->tensors()) {
    gguf::TensorSpec spec{t.name, t.type, {t.dims.begin(), t.dims.begin() + t.n_dims}};
    const auto bytes = file->tensor_data(t);
    tensors.emplace_back(std::move(spec), std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }
  const Status st = gguf::GgufWriter::write_file(to, std::move(metadata), tensors, file->alignment());
  ASSERT_TRUE(st.ok()) << st.error().message;
}

settings::SamplingSettings greedy() {
  settings::SamplingSettings s;
  s.temperature = 0;
  s.repeat_penalty = 1.0;
  s.seed = 1;
  return s;
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \n");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \n") - b + 1);
}

using hearth::testing::valid_utf8;

struct Split {
  std::string reasoning;
  std::string answer;
  std::string shown;  // the chat layer's answer, as the next turn sends it back
};

// The engine's chat layer on `path`, loaded as the app loads it.
class Reference {
 public:
  explicit Reference(const std::filesystem::path& path) {
    runtime::BackendRequest request;
    request.preference = runtime::BackendPreference::Cpu;
    request.cpu_threads = kThreads;
    auto choice = runtime::choose_backend(request);
    model::LoadOptions options;
    options.weights = model::weights_for(options.weights, choice.cpu_computes);
    auto m = model::Model::load(path, options);
    EXPECT_TRUE(m.ok()) << m.error().message;
    if (!m.ok()) return;
    model_ = std::move(m).value();
    backend_ = std::move(choice.backend);
    auto tok = tokenizer::Tokenizer::from_gguf(model_->file());
    EXPECT_TRUE(tok.ok());
    tok_.emplace(std::move(tok).value());
    format_.emplace(runtime::ChatFormat::from_model(model_->file(), *tok_));
    // As the app's engine: the context setting, capped at the trained length when known.
    const int64_t train = model_->hparams().n_ctx_train;
    const int64_t n_ctx = train > 0 ? std::min<int64_t>(kContext, train) : kContext;
    auto s = runtime::Session::create(*model_, *backend_, runtime::SessionConfig{n_ctx, DType::F16, 256});
    EXPECT_TRUE(s.ok());
    session_ = std::move(s).value();
    runtime::ChatParts parts;
    parts.session = session_.get();
    parts.model = model_.get();
    parts.backend = backend_.get();
    parts.format = &*format_;
    chat_ = std::make_unique<runtime::ChatContext>(std::move(parts));
  }

  const runtime::ChatFormat& format() const { return *format_; }

  // The reply to `messages` (no system prompt: the test's settings have none),
  // split at the first "</think>" of its decoded tokens; a reply whose prompt
  // opened the reasoning starts inside it.
  Split reply(const std::vector<chat::ChatMessage>& messages, chat::ReasoningChoice choice) {
    runtime::ChatRequest r;
    r.messages = messages;
    r.conversation_id = 1;
    r.reasoning = choice;
    r.options.max_tokens = 1024;  // the app's default reply limit (the context caps it alike)
    const auto s = greedy();
    r.options.sampler.temperature = static_cast<float>(s.temperature);
    r.options.sampler.top_k = s.top_k;
    r.options.sampler.top_p = static_cast<float>(s.top_p);
    r.options.sampler.min_p = static_cast<float>(s.min_p);
    r.options.sampler.repeat_penalty = static_cast<float>(s.repeat_penalty);
    r.options.sampler.seed = static_cast<uint64_t>(s.seed);
    auto reply = chat_->reply(r, runtime::ReplyStreams{});
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    if (!reply.ok()) return {};
    const std::string whole = valid_utf8(tok_->detokenize(reply->result.tokens));
    const size_t close = whole.find("</think>");
    Split out;
    out.shown = reply->shown;
    if (format_->reasoning().prompt_opens_reasoning) {
      out.reasoning = trimmed(whole.substr(0, close));
      out.answer = close == std::string::npos ? std::string() : trimmed(whole.substr(close + 8));
    } else {
      out.answer = trimmed(whole);  // the model opened no reasoning of its own (checked below)
    }
    return out;
  }

 private:
  std::unique_ptr<model::Model> model_;
  std::unique_ptr<backend::Backend> backend_;
  std::optional<tokenizer::Tokenizer> tok_;
  std::optional<runtime::ChatFormat> format_;
  std::unique_ptr<runtime::Session> session_;
  std::unique_ptr<runtime::ChatContext> chat_;
};

class AppReasoning : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.isValid());
    auto opened = ui::SqliteConversationStore::open(std::filesystem::path(dir_.filePath("hearth.db").toStdString()));
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    storage_ = std::make_unique<ui::StorageExecutor>(std::move(opened).value());
    engine_ = std::make_unique<EngineServiceClient>(make_default_chat_engine());
    settings::Settings s;
    s.system_prompt.clear();
    s.sampling = greedy();
    s.load.context_length = kContext;
    s.load.threads = kThreads;
    s.load.gpu_layers = 0;  // the reference runs on the CPU
    settings_ = std::make_unique<ui::SettingsController>(s, nullptr, &sizer_);
    model_ = std::make_unique<ui::ModelController>(engine_.get(), settings_.get(), nullptr, QString());
    chat_ = std::make_unique<ui::ChatController>(storage_.get(), engine_.get(), model_.get(), settings_.get());
  }
  void TearDown() override {
    chat_.reset();
    model_.reset();
    settings_.reset();
    engine_.reset();
    storage_.reset();
  }

  std::filesystem::path model_with(const char* name, const char* chat_template) {
    const std::filesystem::path path = dir_.filePath(QString::fromLatin1(name)).toStdString();
    write_with_template(HEARTH_TEST_DATA_DIR "/models/tiny-llama-f32.gguf", path, chat_template);
    return path;
  }

  void load(const std::filesystem::path& path) {
    model_->load(QString::fromStdString(path.string()));
    ASSERT_TRUE(QTest::qWaitFor([&] { return model_->ready() || !model_->errorMessage().isEmpty(); }, 30000));
    ASSERT_TRUE(model_->ready()) << model_->errorMessage().toStdString();
  }

  void send_and_wait(const QString& text) {
    QSignalSpy done(chat_.get(), &ui::ChatController::replyFinished);
    chat_->send(text);
    ASSERT_TRUE(done.wait(60000));
  }

  QVariant row(int r, int role) { return chat_->messages()->data(chat_->messages()->index(r), role); }

  // Reads through the store on the storage thread, after every earlier write.
  template <typename T, typename Job>
  T stored(Job job) {
    std::optional<T> out;
    storage_->run(std::move(job), chat_.get(), [&](Result<T> r) {
      EXPECT_TRUE(r.ok()) << r.error().message;
      if (r.ok()) out = std::move(r).value();
    });
    EXPECT_TRUE(QTest::qWaitFor([&] { return out.has_value(); }, 5000));
    return out.value_or(T{});
  }
  ui::MessageTree stored_tree() {
    return stored<ui::MessageTree>(
        [id = chat_->currentConversationId()](ui::ConversationStore& s) { return s.load_messages(ui::ConversationKey{id}); });
  }
  ui::ConversationRecord stored_conversation() {
    return stored<ui::ConversationRecord>(
        [id = chat_->currentConversationId()](ui::ConversationStore& s) { return s.get_conversation(ui::ConversationKey{id}); });
  }
  static const ui::MessageRecord* find(const ui::MessageTree& tree, qint64 id) {
    for (const auto& m : tree.messages) {
      if (m.id.value == id) return &m;
    }
    return nullptr;
  }

  QTemporaryDir dir_;
  ui::EngineMemorySizer sizer_;
  std::unique_ptr<ui::StorageExecutor> storage_;
  std::unique_ptr<EngineServiceClient> engine_;
  std::unique_ptr<ui::SettingsController> settings_;
  std::unique_ptr<ui::ModelController> model_;
  std::unique_ptr<ui::ChatController> chat_;
};

using Role = ui::MessageListModel::Role;

TEST_F(AppReasoning, ThinkingIsStreamedStoredAndShownApartFromTheAnswer) {
  const auto path = model_with("opens-thinking.gguf", kOpensThinking);
  Reference reference(path);
  ASSERT_TRUE(reference.format().reasoning().prompt_opens_reasoning);
  load(path);
  // This template has no switch: the composer shows none.
  EXPECT_TRUE(model_->reasoningChoices().isEmpty());

  std::vector<chat::ChatMessage> messages;
  for (const QString& user : {QStringLiteral("Hello there"), QStringLiteral("Tell me more")}) {
    messages.push_back({"user", user.toStdString(), {}});
    const Split want = reference.reply(messages, chat::ReasoningChoice::Default);
    ASSERT_FALSE(want.reasoning.empty());

    send_and_wait(user);
    const int last = chat_->messages()->rowCount() - 1;
    const qint64 reply_id = row(last, Role::IdRole).toLongLong();
    // The view: reasoning and answer in their own roles, the thinking timed.
    EXPECT_EQ(trimmed(row(last, Role::ReasoningRole).toString().toStdString()), want.reasoning);
    EXPECT_EQ(row(last, Role::TextRole).toString().trimmed().toStdString(), want.answer);
    EXPECT_GE(row(last, Role::ReasoningMsRole).toDouble(), 0.0);
    // The database: the same two texts in their own columns.
    const ui::MessageTree tree = stored_tree();
    const ui::MessageRecord* stored_reply = find(tree, reply_id);
    ASSERT_NE(stored_reply, nullptr);
    EXPECT_EQ(stored_reply->reasoning, want.reasoning);
    EXPECT_EQ(trimmed(stored_reply->content), want.answer);
    EXPECT_EQ(stored_reply->state, ui::MessageState::Complete);
    ASSERT_TRUE(stored_reply->figures.reasoning_ms.has_value());
    EXPECT_GE(*stored_reply->figures.reasoning_ms, 0.0);
    if (!want.answer.empty()) {
      EXPECT_EQ(stored_reply->content.find(want.reasoning), std::string::npos);
    }
    // The next turn sends the reply with its reasoning; this template leaves
    // the reasoning out, and the reference's next turn (which equals the
    // app's only if the prompts are equal) is built the same way.
    messages.push_back({"assistant", want.shown, {}, want.reasoning});
  }

  // Reopened from storage: the reasoning is back, with its duration.
  const qint64 conversation = chat_->currentConversationId();
  const std::string first_reasoning = messages[1].reasoning;
  chat_->newConversation();
  chat_->openConversation(conversation);
  ASSERT_TRUE(QTest::qWaitFor([&] { return chat_->messages()->rowCount() == 4; }, 5000));
  EXPECT_EQ(trimmed(row(1, Role::ReasoningRole).toString().toStdString()), first_reasoning);
  EXPECT_GE(row(1, Role::ReasoningMsRole).toDouble(), 0.0);
  EXPECT_TRUE(row(0, Role::ReasoningRole).toString().isEmpty());
}

TEST_F(AppReasoning, TheConversationsThinkingSwitchIsStoredAndReachesTheTemplate) {
  const auto path = model_with("thinking-switch.gguf", kThinkingSwitch);
  Reference reference(path);
  ASSERT_TRUE(reference.format().reasoning().thinking_switch);
  ASSERT_FALSE(reference.format().reasoning().prompt_opens_reasoning);
  const std::vector<chat::ChatMessage> messages = {{"user", "Hello there", {}}};
  const Split want_off = reference.reply(messages, chat::ReasoningChoice::Off);
  {
    // The two choices render different prompts, so the reply tells which one was used.
    Reference other(path);
    ASSERT_NE(other.reply(messages, chat::ReasoningChoice::Default).answer, want_off.answer);
  }
  load(path);
  EXPECT_EQ(model_->reasoningChoices(), (QStringList{QStringLiteral("off"), QStringLiteral("on")}));

  // Chosen before the conversation exists: it goes with the one the message creates.
  EXPECT_EQ(chat_->conversationReasoning(), QStringLiteral("default"));
  chat_->setConversationReasoning(QStringLiteral("off"));
  chat_->setConversationReasoning(QStringLiteral("sideways"));  // not a choice: ignored
  EXPECT_EQ(chat_->conversationReasoning(), QStringLiteral("off"));
  send_and_wait(QStringLiteral("Hello there"));
  EXPECT_EQ(stored_conversation().reasoning, "off");
  EXPECT_EQ(row(1, Role::TextRole).toString().trimmed().toStdString(), want_off.answer);
  EXPECT_TRUE(row(1, Role::ReasoningRole).toString().isEmpty());
  EXPECT_LT(row(1, Role::ReasoningMsRole).toDouble(), 0.0);  // no thinking, no duration

  // Another conversation starts at the default; reopening restores the choice.
  const qint64 conversation = chat_->currentConversationId();
  chat_->newConversation();
  EXPECT_EQ(chat_->conversationReasoning(), QStringLiteral("default"));
  chat_->openConversation(conversation);
  EXPECT_EQ(chat_->conversationReasoning(), QStringLiteral("off"));
  chat_->setConversationReasoning(QStringLiteral("on"));
  EXPECT_EQ(stored_conversation().reasoning, "on");
}

}  // namespace
}  // namespace hearth::app
