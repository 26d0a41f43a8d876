// Vector search against a float reference, rank fusion against hand-computed
// scores, and hybrid retrieval on a small library.
#include "hearth/documents/retriever.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "documents_test_util.h"
#include "hearth/documents/indexer.h"

namespace hearth::documents {
namespace {

using storage::ChunkId;

TEST(VectorIndex, TopKMatchesAFloatBruteForceReference) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  const int dim = 96, rows = 2000;
  std::vector<std::vector<float>> data(rows, std::vector<float>(dim));
  VectorIndex index(dim);
  for (int r = 0; r < rows; ++r) {
    double norm = 0;
    for (float& x : data[r]) {
      x = normal(rng);
      norm += x * x;
    }
    for (float& x : data[r]) x = static_cast<float>(x / std::sqrt(norm));
    const QuantizedVector q = quantize_vector(data[r]);
    index.add(ChunkId{r + 1}, q.scale, q.values);
  }
  // A query near row 42: the reference ranks rows by exact float cosine.
  std::vector<float> query = data[41];
  for (float& x : query) x += 0.05f * normal(rng);
  std::vector<std::pair<float, int>> reference;
  for (int r = 0; r < rows; ++r) {
    float dot = 0;
    for (int i = 0; i < dim; ++i) dot += data[r][i] * query[i];
    reference.emplace_back(dot, r + 1);
  }
  std::sort(reference.begin(), reference.end(), std::greater<>());
  auto hits = index.search(query, 10);
  ASSERT_TRUE(hits.ok());
  ASSERT_EQ(hits->size(), 10u);
  EXPECT_EQ((*hits)[0].chunk, ChunkId{42});
  for (int i = 0; i < 10; ++i) {
    // int8 components move a cosine by ~1e-2 at most; the reference's order holds
    // where its gaps are wider than that.
    EXPECT_NEAR((*hits)[i].similarity, reference[i].first, 0.02) << i;
  }
  for (int i = 0; i + 1 < 10; ++i) EXPECT_GE((*hits)[i].similarity, (*hits)[i + 1].similarity);
  EXPECT_FALSE(index.search(std::vector<float>(dim + 1), 3).ok());
}

TEST(VectorIndex, DotProductMatchesTheScalarSum) {
  std::vector<std::int8_t> a(1000), b(1000);
  std::int64_t expected = 0;
  for (int i = 0; i < 1000; ++i) {
    a[i] = static_cast<std::int8_t>((i * 37) % 255 - 127);
    b[i] = static_cast<std::int8_t>((i * 91) % 255 - 127);
    expected += static_cast<std::int64_t>(a[i]) * b[i];
  }
  for (int n : {0, 1, 15, 16, 31, 33, 999, 1000}) {
    std::int64_t partial = 0;
    for (int i = 0; i < n; ++i) partial += static_cast<std::int64_t>(a[i]) * b[i];
    EXPECT_EQ(dot_int8(a.data(), b.data(), n), partial) << n;
  }
  EXPECT_EQ(dot_int8(a.data(), b.data(), 1000), expected);
}

TEST(Retriever, ReciprocalRankFusionAddsTheListsScores) {
  const std::vector<ChunkId> keyword{ChunkId{1}, ChunkId{2}, ChunkId{3}};
  const std::vector<VectorHit> vector{{ChunkId{3}, 0.9f}, {ChunkId{4}, 0.8f}};
  const auto fused = fuse_ranks(keyword, vector, 60);
  ASSERT_EQ(fused.size(), 4u);
  // 3: 1/63 + 1/61; 1: 1/61; 4: 1/62; 2: 1/62 (ties: better single rank, then id).
  EXPECT_EQ(fused[0].chunk, ChunkId{3});
  EXPECT_DOUBLE_EQ(fused[0].score, 1.0 / 63 + 1.0 / 61);
  EXPECT_EQ(fused[0].keyword_rank, 3);
  EXPECT_EQ(fused[0].vector_rank, 1);
  EXPECT_EQ(fused[1].chunk, ChunkId{1});
  EXPECT_EQ(fused[2].chunk, ChunkId{2});
  EXPECT_EQ(fused[3].chunk, ChunkId{4});
  EXPECT_DOUBLE_EQ(fused[3].score, 1.0 / 62);
}

TEST(Retriever, HybridFindsWhatEitherListFindsAndKeywordOnlyWorksWithoutAModel) {
  storage::testing::TempDir dir;
  const auto folder = dir.file("docs");
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "boats.md") << "# Boats\n\nA sailboat uses wind in its sails.\n";
  std::ofstream(folder / "trains.md") << "# Trains\n\nThe locomotive pulls the carriages along rails.\n";
  std::ofstream(folder / "cats.md") << "# Cats\n\nCats sleep most of the day.\n";
  auto db = storage::Database::open(dir.file("hearth.db")).value();
  storage::Libraries libs(db);
  const auto library = libs.create("Docs", "hashed-words", 64).value();
  ASSERT_TRUE(libs.add_root(library, folder.string()).ok());
  const Extractors extractors = Extractors::builtin();
  auto run = IndexRun::plan(libs, library, extractors).value();
  while (!run.done()) ASSERT_TRUE(run.step(testing::embed_all).ok());

  Retriever retriever(libs, [](std::string_view q) -> Result<std::vector<float>> { return testing::hashed_words(q); });
  const std::vector<storage::LibraryId> libraries{library};
  RetrievalOptions options;
  options.top_k = 1;
  auto top = retriever.search(libraries, "what pulls carriages", options);
  ASSERT_TRUE(top.ok()) << top.error().message;
  ASSERT_EQ(top->size(), 1u);
  const auto chunk = libs.chunks(std::vector<ChunkId>{(*top)[0].chunk}).value()[0];
  EXPECT_TRUE(chunk.document_path.ends_with("trains.md"));
  EXPECT_GT((*top)[0].keyword_rank, 0);
  EXPECT_GT((*top)[0].vector_rank, 0);

  Retriever keyword_only(libs, nullptr);
  options.mode = RetrievalMode::Keyword;
  auto k = keyword_only.search(libraries, "sleep", options);
  ASSERT_TRUE(k.ok());
  ASSERT_EQ(k->size(), 1u);
  EXPECT_TRUE(libs.chunks(std::vector<ChunkId>{(*k)[0].chunk}).value()[0].document_path.ends_with("cats.md"));
  options.mode = RetrievalMode::Hybrid;
  auto refused = keyword_only.search(libraries, "sleep", options);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::Unsupported);
}

}  // namespace
}  // namespace hearth::documents
