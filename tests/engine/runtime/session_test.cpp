// Session generation on the real stories260K model against the reference's
// greedy ids and text, plus stop strings, end-of-generation and cancellation.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/session.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "../model/fixture_logits.h"

namespace hearth::runtime {
namespace {

using hearth::testing::data_path;
using hearth::testing::read_ids;

// SentencePiece pieces to text: U+2581 is a space, <0xNN> is a raw byte. This
// stands in for the tokenizer in these tests.
std::string piece_text(const std::string& piece) {
  if (piece.size() == 6 && piece.rfind("<0x", 0) == 0 && piece.back() == '>') {
    return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
  }
  std::string out;
  for (size_t i = 0; i < piece.size(); ++i) {
    if (piece.compare(i, 3, "\xE2\x96\x81") == 0) {
      out += ' ';
      i += 2;
    } else {
      out += piece[i];
    }
  }
  return out;
}

class Stories : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = model::Model::load(data_path("models/stories260K.gguf"));
    ASSERT_TRUE(m.ok()) << m.error().message;
    model_ = std::move(*m);
    auto pieces = model_->file().get_string_array("tokenizer.ggml.tokens");
    ASSERT_TRUE(pieces.ok());
    pieces_ = std::move(*pieces);
    backend_ = backend::make_cpu_backend({2});
  }
  DetokenizeFn detok() {
    return [this](int32_t t) { return piece_text(pieces_[static_cast<size_t>(t)]); };
  }
  std::unique_ptr<Session> session(int64_t n_ctx = 512) {
    auto s = Session::create(*model_, *backend_, SessionConfig{n_ctx, DType::F16, 3});
    EXPECT_TRUE(s.ok());
    return std::move(*s);
  }
  std::unique_ptr<model::Model> model_;
  std::vector<std::string> pieces_;
  std::unique_ptr<backend::Backend> backend_;
};

TEST_F(Stories, GreedyMatchesTheReferenceIdsAndText) {
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  const auto ref = read_ids(data_path("models/stories260K.gguf.greedy.txt"));
  ASSERT_GE(ref.size(), 100u);
  auto s = session();
  GenerateOptions opt;
  opt.max_tokens = 100;
  opt.sampler.temperature = 0;
  std::string streamed;
  auto r = s->generate(prompt, opt, detok(), [&](const TokenEvent& e) { streamed += e.text; });
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->tokens.size(), 100u);
  EXPECT_EQ(r->tokens, std::vector<int32_t>(ref.begin(), ref.begin() + 100));
  EXPECT_EQ(streamed, r->text);

  std::string text;
  for (size_t i = 1; i < prompt.size(); ++i) text += piece_text(pieces_[static_cast<size_t>(prompt[i])]);
  text += r->text;
  if (!text.empty() && text[0] == ' ') text.erase(0, 1);  // SentencePiece's leading space
  std::ifstream in(data_path("models/stories260K.greedy-text.txt"));
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(text.substr(0, expected.str().size()), expected.str());
  EXPECT_EQ(r->figures.prompt_tokens, 5);
  EXPECT_EQ(r->figures.generated_tokens, 100);
  EXPECT_EQ(r->figures.context_tokens, 5 + 99);  // the last sampled token is not fed back
}

TEST_F(Stories, StopsAtEndOfGenerationTokens) {
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  const auto ref = read_ids(data_path("models/stories260K.gguf.greedy.txt"));
  auto s = session();
  GenerateOptions opt;
  opt.sampler.temperature = 0;
  opt.end_of_generation = {ref[3]};
  auto r = s->generate(prompt, opt, detok(), nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reason, StopReason::EndOfGeneration);
  EXPECT_EQ(r->tokens, std::vector<int32_t>(ref.begin(), ref.begin() + 3));
}

TEST_F(Stories, StopStringEndsTheReplyBeforeIt) {
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  auto s = session();
  GenerateOptions opt;
  opt.sampler.temperature = 0;
  opt.stop_strings = {" Lily"};  // the reference story names Lily early on
  auto r = s->generate(prompt, opt, detok(), nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reason, StopReason::StopString);
  EXPECT_EQ(r->text, ", there was a little girl named");
}

TEST_F(Stories, CancellationIsHonouredBetweenTokens) {
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  auto s = session();
  std::atomic<bool> cancel{false};
  GenerateOptions opt;
  opt.sampler.temperature = 0;
  int seen = 0;
  auto r = s->generate(prompt, opt, detok(), [&](const TokenEvent&) {
    if (++seen == 5) cancel = true;
  }, &cancel);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reason, StopReason::Cancelled);
  EXPECT_EQ(r->tokens.size(), 5u);
}

TEST_F(Stories, ContextLimitIsReported) {
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  auto s = session(32);
  GenerateOptions opt;
  opt.sampler.temperature = 0;
  opt.max_tokens = 100;
  auto r = s->generate(prompt, opt, detok(), nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->reason, StopReason::ContextFull);
  EXPECT_EQ(r->figures.context_tokens, 32);
}


}  // namespace
}  // namespace hearth::runtime

namespace hearth::runtime {
namespace {

// log-softmax of a reference logits row at `token`, in double.
double reference_log_prob(const std::vector<float>& logits, size_t row, size_t n_vocab, int32_t token) {
  const float* r = logits.data() + row * n_vocab;
  double top = r[0];
  for (size_t i = 0; i < n_vocab; ++i) top = std::max(top, static_cast<double>(r[i]));
  double sum = 0;
  for (size_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(r[i]) - top);
  return static_cast<double>(r[static_cast<size_t>(token)]) - top - std::log(sum);
}

TEST_F(Stories, ScoredPromptTokensCarryTheReferencesLogProbabilities) {
  // The reference's logits after each of the 5 prompt tokens give log p of
  // the next one; the session's scored prefill (batches of 3, so the scored
  // tail spans two verify passes) must report the same, and the reply after
  // it must still be the reference's greedy continuation.
  const auto prompt = read_ids(data_path("models/stories260K.prompt-tokens.txt"));
  const auto ref_logits = hearth::testing::read_f32(data_path("models/stories260K.gguf.logits.f32"));
  const auto greedy = read_ids(data_path("models/stories260K.gguf.greedy.txt"));
  constexpr size_t kVocab = 512;
  ASSERT_EQ(ref_logits.size(), prompt.size() * kVocab);
  for (const int32_t scored : {5, 4, 2}) {
    auto s = session();
    GenerateOptions opt;
    opt.max_tokens = 20;
    opt.sampler.temperature = 0;
    opt.score_prompt_tokens = scored;
    auto r = s->generate(prompt, opt, detok(), nullptr);
    ASSERT_TRUE(r.ok()) << r.error().message;
    // Every scored token with a predecessor: the first prompt token has none.
    const size_t first = std::max<size_t>(1, prompt.size() - static_cast<size_t>(scored));
    ASSERT_EQ(r->prompt_logprobs.size(), prompt.size() - first) << "scored " << scored;
    for (size_t i = first; i < prompt.size(); ++i) {
      EXPECT_NEAR(r->prompt_logprobs[i - first], reference_log_prob(ref_logits, i - 1, kVocab, prompt[i]), 2e-3)
          << "token " << i << ", scored " << scored;
    }
    EXPECT_EQ(r->tokens, std::vector<int32_t>(greedy.begin(), greedy.begin() + 20)) << "scored " << scored;
  }
}

}  // namespace
}  // namespace hearth::runtime
