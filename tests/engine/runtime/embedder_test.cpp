// Sentence embeddings on the CPU against the reference engine's pooled,
// normalized vectors (tests/data/embeddings): the tokenizer's ids exactly,
// every text within the weight class's cosine, whether the texts run in
// one batched pass, in several passes or one at a time; and the errors of
// texts that do not fit, models that do not embed and hostile input.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/embedder.h>

#include <numeric>

#include "embed_fixture.h"

namespace hearth::runtime {
namespace {

using hearth::testing::EmbedCase;
using hearth::testing::embed_path;
using hearth::testing::expect_matches_reference;
using hearth::testing::kEmbedCases;

std::unique_ptr<Embedder> load(backend::Backend& be, const std::string& file) {
  auto e = Embedder::load(embed_path(file), be);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message);
  return e.ok() ? std::move(e).value() : nullptr;
}

class EmbedderCpu : public ::testing::TestWithParam<EmbedCase> {};

TEST_P(EmbedderCpu, TokenizesEveryTextAsTheReference) {
  auto be = backend::make_cpu_backend({2});
  auto e = load(*be, GetParam().model);
  ASSERT_TRUE(e);
  const auto texts = hearth::testing::read_embed_texts();
  const auto ref = hearth::testing::read_token_lines(GetParam().tokens);
  ASSERT_EQ(texts.size(), 12u);
  ASSERT_EQ(ref.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(e->tokenize(texts[i]), ref[i]) << "text " << i << ": " << texts[i];
}

TEST_P(EmbedderCpu, AllTextsInOneBatchedPassMatchTheReference) {
  auto be = backend::make_cpu_backend({2});
  auto e = load(*be, GetParam().model);
  ASSERT_TRUE(e);
  const auto texts = hearth::testing::read_embed_texts();
  auto got = e->embed(texts);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_EQ(got->vectors.size(), texts.size());
  const auto ref = hearth::testing::read_token_lines(GetParam().tokens);
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(got->token_counts[i], static_cast<int64_t>(ref[i].size()));
  expect_matches_reference(GetParam(), *got, 0, "batched");
}

TEST_P(EmbedderCpu, SeveralPassesAndOneTextAtATimeMatchTheReference) {
  auto be = backend::make_cpu_backend({2});
  auto e = load(*be, GetParam().model);
  ASSERT_TRUE(e);
  const auto texts = hearth::testing::read_embed_texts();
  // Passes of at most 30 tokens: several texts per pass, several passes.
  EmbedOptions small;
  small.max_batch_tokens = 30;
  auto passes = e->embed(texts, small);
  ASSERT_TRUE(passes.ok()) << passes.error().message;
  expect_matches_reference(GetParam(), *passes, 0, "passes");
  for (size_t i = 0; i < texts.size(); ++i) {
    auto one = e->embed(std::span(texts).subspan(i, 1));
    ASSERT_TRUE(one.ok()) << one.error().message;
    expect_matches_reference(GetParam(), *one, i, "single");
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, EmbedderCpu, ::testing::ValuesIn(kEmbedCases),
                         [](const auto& p) {
                           std::string n = p.param.model;
                           for (char& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

TEST(Embedder, ATextLongerThanTheContextIsAnErrorNamingIt) {
  auto be = backend::make_cpu_backend({2});
  auto e = load(*be, "tiny-bert-f32.gguf");
  ASSERT_TRUE(e);
  std::string longest;
  for (int i = 0; i < 200; ++i) longest += "the ";
  const std::vector<std::string> texts{"a dog", longest};
  auto r = e->embed(texts);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::LimitExceeded);
  EXPECT_NE(r.error().message.find("text 1 is 202 tokens"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("at most 128"), std::string::npos) << r.error().message;
}

TEST(Embedder, AModelWithoutPoolingIsRefused) {
  auto be = backend::make_cpu_backend({2});
  auto e = Embedder::load(hearth::testing::data_path("models/tiny-llama-f32.gguf"), *be);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::Unsupported);
  EXPECT_NE(e.error().message.find("not an embedding model"), std::string::npos) << e.error().message;
}

TEST(Embedder, AnEncoderCannotGenerate) {
  auto be = backend::make_cpu_backend({2});
  auto m = model::Model::load(embed_path("tiny-bert-f32.gguf"));
  ASSERT_TRUE(m.ok()) << m.error().message;
  auto cache = kv::KvCache::create(*be, (*m)->kv_config(8, DType::F16));
  ASSERT_TRUE(cache.ok());
  const std::vector<int32_t> ids{2, 97, 3}, pos{0, 1, 2};
  std::vector<float> logits;
  auto st = (*m)->forward(*be, **cache, model::Batch{ids, pos}, model::LogitsRows::Last, logits);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::Unsupported);
}

// Invalid UTF-8, NUL and control bytes, lone combining marks and a text of
// nothing but punctuation are embedded (they tokenize to something, at
// worst [CLS] [SEP]); a very long text is a clean error; nothing crashes.
TEST(Embedder, HostileTextsGiveVectorsOrErrors) {
  auto be = backend::make_cpu_backend({2});
  for (const char* file : {"tiny-bert-f32.gguf", "tiny-qwen3emb-f32.gguf"}) {
    auto e = load(*be, file);
    ASSERT_TRUE(e);
    const std::vector<std::string> texts{std::string("\xff\xfe\x80 bad", 7), std::string("nul\0inside", 10),
                                         "\x01\x02\x1b[31m", "\xcc\x81\xcc\x81", "?!...,,;;", "", "Ünïcödé Straße ΑΒΓ 漢字"};
    auto r = e->embed(texts);
    ASSERT_TRUE(r.ok()) << file << ": " << r.error().message;
    for (const auto& v : r->vectors) {
      for (const float x : v) ASSERT_TRUE(std::isfinite(x)) << file;
    }
    const std::vector<std::string> huge{std::string(1 << 20, 'x') + " " + std::string(1 << 16, '.')};
    auto big = e->embed(huge);
    ASSERT_FALSE(big.ok()) << file;
    EXPECT_EQ(big.error().code, ErrorCode::LimitExceeded);
    const std::vector<std::vector<int32_t>> bad_ids{{1, 2, 1 << 30}};
    auto ids = e->embed_tokens(bad_ids);
    ASSERT_FALSE(ids.ok()) << file;
    EXPECT_EQ(ids.error().code, ErrorCode::InvalidArgument);
  }
}

TEST(Embedder, QueriesTakeQwen3EmbeddingsInstructionFormat) {
  EXPECT_EQ(format_query("Find the story", "a dog"), "Instruct: Find the story\nQuery: a dog");
  auto be = backend::make_cpu_backend({2});
  auto e = load(*be, "tiny-qwen3emb-f32.gguf");
  ASSERT_TRUE(e);
  EmbedOptions q;
  q.query_instruction = "Find the story";
  EXPECT_EQ(e->tokenize("a dog", q), e->tokenize("Instruct: Find the story\nQuery: a dog"));
  EXPECT_GT(e->tokenize("a dog", q).size(), e->tokenize("a dog").size());
}

TEST(Embedder, RolesWriteTheModelsRetrievalFormat) {
  auto be = backend::make_cpu_backend({2});
  auto qwen = load(*be, "tiny-qwen3emb-f32.gguf");
  auto bert = load(*be, "tiny-bert-f32.gguf");
  ASSERT_TRUE(qwen && bert);
  EmbedOptions query, document, task;
  query.role = TextRole::Query;
  document.role = TextRole::Document;
  task.role = TextRole::Query;
  task.query_instruction = "Find the story";
  // Last-token pooling (Qwen3-Embedding): queries in the instruction format, documents as they are.
  EXPECT_EQ(qwen->prepare("a dog", query),
            "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: a dog");
  EXPECT_EQ(qwen->prepare("a dog", task), "Instruct: Find the story\nQuery: a dog");
  EXPECT_EQ(qwen->prepare("a dog", document), "a dog");
  // A BERT encoder has no format of its own.
  EXPECT_EQ(bert->prepare("a dog", query), "a dog");
  EXPECT_EQ(bert->prepare("a dog", document), "a dog");
  EXPECT_EQ(qwen->tokenize("a dog", query), qwen->tokenize(qwen->prepare("a dog", query)));
}

}  // namespace
}  // namespace hearth::runtime
