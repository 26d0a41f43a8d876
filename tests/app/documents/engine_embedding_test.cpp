// The document libraries' embedding model through the engine: the passages'
// vectors match the reference engine's embeddings of the fixture texts (BERT
// takes documents as they are), a passage longer than the model's context is
// cut instead of failing, and a library indexed with the model stores one vector
// per passage and answers by hybrid retrieval.
#include "documents/engine_embedding.h"

#include <hearth/documents/indexer.h>
#include <hearth/documents/retriever.h>
#include <hearth/storage/libraries.h>

#include <QTemporaryDir>

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

namespace hearth::app {
namespace {

const QString kBert = QStringLiteral(HEARTH_TEST_DATA_DIR "/embeddings/tiny-bert-f32.gguf");

std::vector<std::string> fixture_texts() {
  std::ifstream in(HEARTH_TEST_DATA_DIR "/embeddings/texts.txt");
  std::vector<std::string> texts;
  std::string line, current;
  bool first = true;
  while (std::getline(in, line)) {
    if (line == "__case__") {
      texts.push_back(current);
      current.clear();
      first = true;
      continue;
    }
    if (!first) current += '\n';
    current += line;
    first = false;
  }
  return texts;
}

std::vector<float> reference(std::size_t index, std::int64_t dim) {
  std::ifstream in(HEARTH_TEST_DATA_DIR "/embeddings/tiny-bert-f32.gguf.emb.f32", std::ios::binary);
  std::vector<float> v(static_cast<std::size_t>(dim));
  in.seekg(static_cast<std::streamoff>(index * static_cast<std::size_t>(dim) * sizeof(float)));
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  return v;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  return dot / std::sqrt(na * nb);
}

TEST(EngineEmbedding, PassagesMatchTheReferenceEmbeddings) {
  auto loaded = load_engine_embedding(kBert);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ui::PassageEmbedding& e = **loaded;
  EXPECT_NE(e.identity().find("tiny-bert-f32.gguf:"), std::string::npos);
  const auto texts = fixture_texts();
  ASSERT_EQ(texts.size(), 12u);
  auto vectors = e.embed_passages(texts);
  ASSERT_TRUE(vectors.ok()) << vectors.error().message;
  ASSERT_EQ(vectors->size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    ASSERT_EQ(static_cast<std::int64_t>((*vectors)[i].size()), e.dim());
    EXPECT_GE(cosine((*vectors)[i], reference(i, e.dim())), 0.9999) << "text " << i;
  }
  // A passage far past the model's context is cut, not refused.
  std::string long_text;
  for (int i = 0; i < 3000; ++i) long_text += "the little girl went to the park ";
  auto cut = e.embed_passages(std::vector<std::string>{long_text});
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  EXPECT_EQ(static_cast<std::int64_t>(cut->front().size()), e.dim());
  auto query = e.embed_query("the park");
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(static_cast<std::int64_t>(query->size()), e.dim());
}

TEST(EngineEmbedding, ALibraryIndexedWithTheModelAnswersByHybridRetrieval) {
  QTemporaryDir dir;
  ASSERT_TRUE(dir.isValid());
  const std::string folder = dir.filePath(QStringLiteral("docs")).toStdString();
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/a.md") << "# Park\n\nThe little girl went to the park.\n";
  std::ofstream(folder + "/b.md") << "# Cats\n\nA cat and a dog play with a ball.\n";
  auto embedding = load_engine_embedding(kBert);
  ASSERT_TRUE(embedding.ok());
  auto db = storage::Database::open(dir.filePath(QStringLiteral("hearth.db")).toStdString());
  ASSERT_TRUE(db.ok());
  storage::Libraries libs(*db);
  const auto library = libs.create("Docs", (*embedding)->identity(), (*embedding)->dim()).value();
  ASSERT_TRUE(libs.add_root(library, folder).ok());
  const documents::Extractors extractors = documents::Extractors::builtin();
  auto run = documents::IndexRun::plan(libs, library, extractors).value();
  ui::PassageEmbedding* e = embedding->get();
  while (!run.done()) {
    ASSERT_TRUE(run.step([e](std::span<const std::string> t) { return e->embed_passages(t); }).ok());
  }
  std::int64_t vectors = 0;
  ASSERT_TRUE(libs.for_each_vector(library, [&](storage::ChunkId, float, std::span<const std::int8_t> v) {
                    EXPECT_EQ(static_cast<std::int64_t>(v.size()), e->dim());
                    ++vectors;
                  }).ok());
  EXPECT_EQ(vectors, libs.chunk_count(library).value());
  EXPECT_EQ(vectors, 2);
  documents::Retriever retriever(libs, [e](std::string_view q) { return e->embed_query(q); });
  auto hits = retriever.search(std::vector<storage::LibraryId>{library}, "where did the girl go", {});
  ASSERT_TRUE(hits.ok()) << hits.error().message;
  ASSERT_FALSE(hits->empty());
  // Both lists ranked: every passage is in the vector list, the park one also in BM25.
  const auto top = libs.chunks(std::vector<storage::ChunkId>{hits->front().chunk}).value().front();
  EXPECT_TRUE(top.document_path.ends_with("a.md")) << top.document_path;
  EXPECT_GT(hits->front().keyword_rank, 0);
  EXPECT_GT(hits->front().vector_rank, 0);
}

}  // namespace
}  // namespace hearth::app
