// ConversationDriver without K-shift (a KV cache in device-only memory, as on
// a discrete GPU): evict then makes room by prefilling only the newest turns
// that fit, never moving or re-rotating cached keys, reports each dropped
// message once, and keeps answering. With K-shift the same chat re-rotates
// keys. A backend wrapper counts the graphs that are a lone RoPE (the K-shift).
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/backend/graph.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/session.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <gtest/gtest.h>

#include "engine_service/conversation_driver.h"

namespace hearth::app {
namespace {

class ShiftCountingBackend final : public backend::Backend {
 public:
  explicit ShiftCountingBackend(backend::Backend& inner) : inner_(inner) {}
  const char* name() const override { return inner_.name(); }
  backend::DeviceInfo device() const override { return inner_.device(); }
  bool supports(backend::Op op, DType type) const override { return inner_.supports(op, type); }
  Result<std::unique_ptr<backend::Buffer>> allocate(size_t bytes, backend::BufferUsage usage) override {
    return inner_.allocate(bytes, usage);
  }
  Status compute(backend::Graph& graph) override {
    if (graph.nodes().size() == 1 && graph.nodes()[0].op == backend::Op::Rope) ++shifts;
    return inner_.compute(graph);
  }
  int shifts = 0;

 private:
  backend::Backend& inner_;
};

class DriverEvict : public ::testing::TestWithParam<bool> {};

TEST_P(DriverEvict, WithoutKShiftPrefillsTheNewestTurnsInstead) {
  const bool can_shift = GetParam();
  auto model = model::Model::load(HEARTH_TEST_DATA_DIR "/models/stories260K.gguf");
  ASSERT_TRUE(model.ok()) << model.error().message;
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->file());
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  auto cpu = backend::make_cpu_backend({1});
  ShiftCountingBackend backend(*cpu);
  auto session = runtime::Session::create(**model, backend, runtime::SessionConfig{128, DType::F16, 64});
  ASSERT_TRUE(session.ok()) << session.error().message;

  ConversationDriver::Engine e;
  e.session = session->get();
  e.model = model->get();
  e.backend = &backend;
  e.can_shift = can_shift;
  e.render = [&](const QList<ui::ChatTurn>& turns, GenerationPrompt) -> Result<std::vector<int32_t>> {
    std::string text;
    for (const auto& t : turns) text += (text.empty() ? "" : "\n") + t.text.toStdString();
    return tok->tokenize(text, tokenizer::AddSpecial::AsVocab, tokenizer::ParseSpecial::No);
  };
  ConversationDriver driver(std::move(e));

  QList<ui::ChatTurn> history;
  std::vector<ui::ContextEvent> events;
  runtime::GenerateOptions opt;
  opt.max_tokens = 16;
  opt.sampler.temperature = 0;
  for (int i = 0; i < 12; ++i) {
    ui::GenerationRequest request;
    request.turns = history;
    request.turns.append({ui::ChatRole::User, QStringLiteral("The little dog number %1 ran to the park.").arg(i)});
    request.overflow_policy = QStringLiteral("evict");
    request.conversation_id = 3;
    auto prepared = driver.prepare(request, runtime::OverflowPolicy::Evict, 16,
                                   [&](const ui::ContextEvent& ev) { events.push_back(ev); });
    ASSERT_TRUE(prepared.ok()) << "turn " << i << ": " << prepared.error().message;
    ASSERT_TRUE(prepared->stopped.empty()) << prepared->stopped;
    driver.begin_reply();
    const size_t before = (*session)->context().size() + prepared->prompt.size();
    auto r = (*session)->generate(prepared->prompt, opt, [&](int32_t t) { return tok->token_to_piece(t); }, nullptr);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_GT(r->tokens.size(), 0u);
    const size_t after = (*session)->context().size();
    const QString reply = QString::fromStdString(r->text);
    driver.end_reply(reply, after - before);
    ASSERT_LE(static_cast<int64_t>(after), (*session)->n_ctx());
    history = request.turns;
    history.append({ui::ChatRole::Assistant, reply});
  }
  ASSERT_FALSE(events.empty());
  int next = 0;
  for (const auto& ev : events) {
    EXPECT_EQ(ev.kind, ui::ContextEvent::Kind::Dropped);
    EXPECT_EQ(ev.first_message, next);  // each message reported once, oldest first
    EXPECT_EQ(ev.last_message % 2, 1);
    next = ev.last_message + 1;
  }
  if (can_shift) {
    EXPECT_GT(backend.shifts, 0);
  } else {
    EXPECT_EQ(backend.shifts, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Shift, DriverEvict, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? std::string("KShift") : std::string("Reprefill");
                         });

}  // namespace
}  // namespace hearth::app
