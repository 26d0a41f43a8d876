// The chat layer over a real model: after every turn, whatever stopped the
// reply (the token limit, a stop string, an end-of-generation token), the
// context holds exactly a fresh encoding of the transcript (the last sampled
// token, never decoded, is re-encoded with the template's end of turn) and
// its last logits equal a fresh prefill of those tokens. Cancellation takes
// effect within one prefill batch and leaves the cache consistent. Evict
// works with K-shift and without it (a device-only cache), reporting each
// dropped message once.
#include <hearth/engine/backend/graph.h>
#include <hearth/engine/runtime/chat_context.h>
#include <hearth/engine/runtime/chat_format.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "runtime_fixture.h"
#include "utf8_reference.h"

namespace hearth::runtime {
namespace {

using chat::ChatMessage;
using testing::max_rel_diff;

double cosine(std::span<const float> a, std::span<const float> b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

using hearth::testing::valid_utf8;

class ChatContextTest : public testing::ModelFixture {
 protected:
  void open(const std::string& model, int64_t n_ctx, int32_t n_batch = 64) {
    load(model);
    auto tok = tokenizer::Tokenizer::from_gguf(model_->file());
    ASSERT_TRUE(tok.ok()) << tok.error().message;
    tok_ = std::make_unique<tokenizer::Tokenizer>(std::move(tok).value());
    format_ = std::make_unique<ChatFormat>(ChatFormat::from_model(model_->file(), *tok_));
    session_ = session(n_ctx, DType::F32, n_batch);
    ASSERT_NE(session_, nullptr);
    ChatParts parts;
    parts.session = session_.get();
    parts.model = model_.get();
    parts.backend = backend_.get();
    parts.format = format_.get();
    chat_ = std::make_unique<ChatContext>(std::move(parts));
  }

  // The last logits of a new session that prefills `tokens` at once.
  std::vector<float> fresh_logits(const std::vector<int32_t>& tokens) {
    auto s = session(session_->n_ctx(), DType::F32, 512);
    EXPECT_TRUE(s->prefill(tokens).ok());
    return {s->last_logits().begin(), s->last_logits().end()};
  }

  // A greedy reply of a throwaway context to `messages` (what the real one
  // will say, since greedy decoding of the same tokens is deterministic).
  GenerateResult dry_run(const std::vector<ChatMessage>& messages, int32_t max_tokens) {
    auto s = session(session_->n_ctx(), DType::F32, 64);
    ChatParts parts;
    parts.session = s.get();
    parts.model = model_.get();
    parts.backend = backend_.get();
    parts.format = format_.get();
    ChatContext scratch(std::move(parts));
    ChatRequest r;
    r.messages = messages;
    r.options.max_tokens = max_tokens;
    r.options.sampler.temperature = 0;
    auto reply = scratch.reply(r, nullptr, nullptr);
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return reply.ok() ? reply->result : GenerateResult{};
  }

  std::unique_ptr<tokenizer::Tokenizer> tok_;
  std::unique_ptr<ChatFormat> format_;
  std::unique_ptr<Session> session_;
  std::unique_ptr<ChatContext> chat_;
};

TEST_F(ChatContextTest, EveryStopReasonLeavesAFreshEncodingOfTheTranscript) {
  open("models/tiny-llama-f32.gguf", 1024);
  ASSERT_EQ(format_->origin(), TemplateOrigin::Model) << format_->note();
  std::vector<ChatMessage> messages = {{"system", "You answer in one line.", {}}};
  const std::vector<std::string> users = {"Hello there", "Tell me a story", "Why?", "Once more", "Thanks",
                                          "Bye now"};
  int seen_max = 0, seen_stop = 0, seen_eog = 0;
  for (size_t turn = 0; turn < users.size(); ++turn) {
    messages.push_back({"user", users[turn], {}});
    ChatRequest r;
    r.messages = messages;
    r.conversation_id = 1;
    r.options.max_tokens = 10;
    r.options.sampler.temperature = 0;
    const GenerateResult dry = dry_run(messages, 10);
    switch (turn % 3) {
      case 0: break;  // the token limit
      case 1:
        // A stop string inside what the reply will say.
        if (dry.text.size() >= 6) r.options.stop_strings = {dry.text.substr(3, 2)};
        break;
      case 2:
        // An end-of-generation token the reply will sample third.
        if (dry.tokens.size() >= 3) r.options.end_of_generation = {dry.tokens[2]};
        break;
    }
    auto reply = chat_->reply(r, nullptr, nullptr);
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    ASSERT_TRUE(reply->stopped.empty()) << reply->stopped;
    seen_max += reply->result.reason == StopReason::MaxTokens;
    seen_stop += reply->result.reason == StopReason::StopString;
    seen_eog += reply->result.reason == StopReason::EndOfGeneration;

    // The context: the transcript through this user message and the
    // generation prompt, encoded afresh, then the reply's decoded tokens.
    auto fresh = format_->encode(messages, chat::GenerationPrompt::Add);
    ASSERT_TRUE(fresh.ok()) << fresh.error().message;
    const auto& ctx = session_->context();
    ASSERT_GE(ctx.size(), fresh->size()) << "turn " << turn;
    EXPECT_TRUE(std::equal(fresh->begin(), fresh->end(), ctx.begin())) << "turn " << turn;
    // Every reply token but the last was decoded into the context; an
    // end-of-generation token is not part of the reply, so then all were.
    const size_t n = reply->result.tokens.size();
    const size_t decoded = reply->result.reason == StopReason::EndOfGeneration ? n : (n == 0 ? 0 : n - 1);
    EXPECT_EQ(ctx.size(), fresh->size() + decoded) << "turn " << turn << " reason "
                                                   << to_string(reply->result.reason);

    // The next token's logits equal a fresh prefill of the context.
    const std::vector<float> expect = fresh_logits(ctx);
    const auto got = session_->last_logits();
    ASSERT_EQ(got.size(), expect.size());
    EXPECT_GE(cosine(got, expect), hearth::testing::kF32Cosine) << "turn " << turn;
    EXPECT_LT(max_rel_diff(got, expect), 1e-3) << "turn " << turn;
    messages.push_back({"assistant", reply->shown, {}});
  }
  EXPECT_GT(seen_max, 0);
  EXPECT_GT(seen_stop, 0);
  EXPECT_GT(seen_eog, 0);
}

TEST_F(ChatContextTest, ReasoningIsKeptApartFromTheAnswer) {
  // A DeepSeek-R1-style template: the generation prompt opens the reasoning,
  // and earlier replies are rendered without it.
  open("models/tiny-llama-f32.gguf", 1024);
  auto parsed = chat::ChatTemplate::from_source(
      "{% for m in messages %}{% if m.role == 'user' %}User: {{ m.content }}\n"
      "{% elif m.role == 'assistant' %}Assistant: {{ m.content }}\n{% endif %}{% endfor %}"
      "{% if add_generation_prompt %}Assistant: <think>\n{% endif %}");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  format_ = std::make_unique<ChatFormat>(ChatFormat::with_template(*tok_, std::move(parsed).value()));
  ASSERT_EQ(format_->reasoning().syntax, chat::ReasoningSyntax::ThinkTags);
  ASSERT_TRUE(format_->reasoning().prompt_opens_reasoning);
  ChatParts parts;
  parts.session = session_.get();
  parts.model = model_.get();
  parts.backend = backend_.get();
  parts.format = format_.get();
  chat_ = std::make_unique<ChatContext>(std::move(parts));

  std::vector<ChatMessage> messages;
  for (const std::string user : {"Hello there", "Tell me more"}) {
    messages.push_back({"user", user, {}});
    ChatRequest r;
    r.messages = messages;
    r.conversation_id = 1;
    r.options.max_tokens = 24;
    r.options.sampler.temperature = 0;
    std::string streamed_text, streamed_reasoning;
    ReplyStreams streams;
    streams.on_text = [&](std::string_view p) { streamed_text += p; };
    streams.on_reasoning = [&](std::string_view p) { streamed_reasoning += p; };
    auto reply = chat_->reply(r, streams);
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    // The reference split: the decoded reply tokens, reasoning up to the
    // first "</think>", the answer after it.
    // (Streamed text is whole UTF-8 characters: a stray byte shows as U+FFFD.)
    const std::string whole = valid_utf8(tok_->detokenize(reply->result.tokens));
    const size_t close = whole.find("</think>");
    auto trim = [](std::string s) {
      const size_t b = s.find_first_not_of(" \n");
      if (b == std::string::npos) return std::string();
      return s.substr(b, s.find_last_not_of(" \n") - b + 1);
    };
    const std::string want_reasoning = trim(whole.substr(0, close));
    const std::string want_answer = close == std::string::npos ? std::string() : trim(whole.substr(close + 8));
    EXPECT_FALSE(want_reasoning.empty());
    EXPECT_EQ(reply->reasoning, want_reasoning);
    EXPECT_EQ(trim(reply->shown), want_answer);
    EXPECT_EQ(trim(streamed_reasoning), want_reasoning);
    EXPECT_EQ(streamed_text, reply->shown);

    // The transcript keeps the reasoning with the reply; this template does
    // not render it again, so the next turn's prompt equals a fresh encoding
    // of the conversation with the answer alone.
    messages.push_back({"assistant", reply->shown, {}, reply->reasoning});
  }
  auto fresh = format_->encode(messages, chat::GenerationPrompt::Omit);
  ASSERT_TRUE(fresh.ok());
  const std::string text = tok_->detokenize(*fresh);
  EXPECT_EQ(text.find("<think>"), std::string::npos) << text;
}

TEST_F(ChatContextTest, ReasoningATemplateRendersAgainIsInTheNextPrompt) {
  // A template that writes an earlier reply's reasoning back (as some do for
  // the turn in progress): the caller sends the reasoning with the reply, and
  // the context equals a fresh encoding of the conversation with it.
  open("models/tiny-llama-f32.gguf", 1024);
  auto parsed = chat::ChatTemplate::from_source(
      "{% for m in messages %}{% if m.role == 'user' %}User: {{ m.content }}\n"
      "{% elif m.role == 'assistant' %}Assistant: {% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}"
      "\n</think>\n{% endif %}{{ m.content }}\n{% endif %}{% endfor %}"
      "{% if add_generation_prompt %}Assistant: <think>\n{% endif %}");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  format_ = std::make_unique<ChatFormat>(ChatFormat::with_template(*tok_, std::move(parsed).value()));
  ASSERT_TRUE(format_->reasoning().prompt_opens_reasoning);
  ChatParts parts;
  parts.session = session_.get();
  parts.model = model_.get();
  parts.backend = backend_.get();
  parts.format = format_.get();
  chat_ = std::make_unique<ChatContext>(std::move(parts));

  std::vector<ChatMessage> messages;
  std::string first_reasoning;
  for (const std::string user : {"Hello there", "Tell me more"}) {
    messages.push_back({"user", user, {}});
    ChatRequest r;
    r.messages = messages;
    r.conversation_id = 1;
    r.options.max_tokens = 16;
    r.options.sampler.temperature = 0;
    auto reply = chat_->reply(r, ReplyStreams{});
    ASSERT_TRUE(reply.ok()) << reply.error().message;
    ASSERT_FALSE(reply->reasoning.empty());
    // The context holds a fresh encoding of the conversation so far, earlier
    // reasoning included, then the reply's decoded tokens.
    auto fresh = format_->encode(messages, chat::GenerationPrompt::Add);
    ASSERT_TRUE(fresh.ok()) << fresh.error().message;
    const auto& ctx = session_->context();
    ASSERT_GE(ctx.size(), fresh->size());
    EXPECT_TRUE(std::equal(fresh->begin(), fresh->end(), ctx.begin())) << "after '" << user << "'";
    if (first_reasoning.empty()) first_reasoning = reply->reasoning;
    messages.push_back({"assistant", reply->shown, {}, reply->reasoning});
  }
  // The second prompt carried the first reply's reasoning in the template's tags.
  auto rendered = format_->render(std::vector<ChatMessage>(messages.begin(), messages.begin() + 3),
                                  chat::GenerationPrompt::Add);
  ASSERT_TRUE(rendered.ok());
  EXPECT_NE(rendered->text.find("<think>\n" + first_reasoning + "\n</think>"), std::string::npos) << rendered->text;
}

TEST_F(ChatContextTest, CancelEndsAPrefillWithinOneBatchAndTheCacheStaysConsistent) {
  open("models/tiny-llama-f32.gguf", 4096, 64);
  std::string long_message;
  for (int i = 0; i < 400; ++i) long_message += "word" + std::to_string(i % 37) + " ";
  std::vector<ChatMessage> messages = {{"system", "Be brief.", {}}, {"user", long_message, {}}};
  ChatRequest r;
  r.messages = messages;
  r.options.max_tokens = 4;
  r.options.sampler.temperature = 0;
  // Cancelled when the third batch of the message is about to start.
  int asked = 0;
  const Cancellation cancel([&] { return ++asked > 3; });
  const int64_t passes_before = session_->forward_passes();
  auto reply = chat_->reply(r, nullptr, nullptr, cancel);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::Cancelled) << reply.error().message;
  const int64_t passes = session_->forward_passes() - passes_before;
  auto prompt = format_->encode(messages, chat::GenerationPrompt::Add);
  ASSERT_TRUE(prompt.ok());
  ASSERT_GT(prompt->size(), 1000u);  // a long prefill: many batches were left
  EXPECT_EQ(passes, 3) << "the prefill ran past the batch where it was cancelled";

  // The next request (no cancel) answers as a fresh context does.
  auto again = chat_->reply(r, nullptr, nullptr);
  ASSERT_TRUE(again.ok()) << again.error().message;
  const std::vector<float> expect = fresh_logits(session_->context());
  EXPECT_GE(cosine(session_->last_logits(), expect), hearth::testing::kF32Cosine);
  EXPECT_EQ(again->result.tokens, dry_run(messages, 4).tokens);
}

// Counts the graphs that are a lone RoPE: the K-shift of an evict.
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

class ChatEvict : public testing::ModelFixture, public ::testing::WithParamInterface<bool> {};

TEST_P(ChatEvict, WithoutKShiftPrefillsTheNewestTurnsInstead) {
  const bool can_shift = GetParam();
  load("models/stories260K.gguf");
  auto tok = tokenizer::Tokenizer::from_gguf(model_->file());
  ASSERT_TRUE(tok.ok()) << tok.error().message;
  const ChatFormat format = ChatFormat::from_model(model_->file(), *tok);
  ShiftCountingBackend backend(*backend_);
  auto s = Session::create(*model_, backend, SessionConfig{128, DType::F16, 64});
  ASSERT_TRUE(s.ok()) << s.error().message;
  ChatParts parts;
  parts.session = s->get();
  parts.model = model_.get();
  parts.backend = &backend;
  parts.format = &format;
  parts.can_shift = can_shift;
  ChatContext chat(std::move(parts));

  std::vector<ChatMessage> history;
  std::vector<ChatEvent> events;
  for (int i = 0; i < 12; ++i) {
    ChatRequest r;
    r.messages = history;
    r.messages.push_back({"user", "The little dog number " + std::to_string(i) + " ran to the park.", {}});
    r.policy = OverflowPolicy::Evict;
    r.conversation_id = 3;
    r.options.max_tokens = 16;
    r.options.sampler.temperature = 0;
    auto reply = chat.reply(r, nullptr, [&](const ChatEvent& e) { events.push_back(e); });
    ASSERT_TRUE(reply.ok()) << "turn " << i << ": " << reply.error().message;
    ASSERT_TRUE(reply->stopped.empty()) << reply->stopped;
    ASSERT_GT(reply->result.tokens.size(), 0u);
    ASSERT_LE(static_cast<int64_t>((*s)->context().size()), (*s)->n_ctx());
    history = r.messages;
    history.push_back({"assistant", reply->shown, {}});
  }
  ASSERT_FALSE(events.empty());
  int64_t next = 0;
  for (const auto& e : events) {
    EXPECT_EQ(e.kind, ChatEvent::Kind::Dropped);
    EXPECT_EQ(e.conversation_id, 3);
    EXPECT_EQ(e.first_message, next);  // each message reported once, oldest first
    EXPECT_EQ(e.last_message % 2, 1);
    next = e.last_message + 1;
  }
  if (can_shift) {
    EXPECT_GT(backend.shifts, 0);
  } else {
    EXPECT_EQ(backend.shifts, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Shift, ChatEvict, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? std::string("KShift") : std::string("Reprefill");
                         });

}  // namespace
}  // namespace hearth::runtime
