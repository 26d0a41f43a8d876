// Libraries, chunks, vectors, keyword search, message sources and the response
// cache on real SQLite files.
#include "hearth/storage/libraries.h"

#include <gtest/gtest.h>

#include "documents_test_util.h"
#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "hearth/storage/response_cache.h"
#include "hearth/storage/sources.h"

namespace hearth::storage {
namespace {

using testing::TempDir;

class LibrariesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OpenOptions options;
    options.clock = clock_.function();
    auto db = Database::open(dir_.file("hearth.db"), options);
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::make_unique<Database>(std::move(db).value());
  }
  static NewChunk chunk(std::string text, std::int64_t first, std::int64_t last, std::vector<std::int8_t> v = {}) {
    NewChunk c;
    c.text = std::move(text);
    c.line_first = first;
    c.line_last = last;
    c.scale = v.empty() ? 0.0f : 0.5f;
    c.vector = std::move(v);
    return c;
  }
  testing::ManualClock clock_{1'700'000'000'000};
  TempDir dir_;
  std::unique_ptr<Database> db_;
};

TEST_F(LibrariesTest, PutDocumentReplacesItsChunksAndVectorsAsAWhole) {
  Libraries libs(*db_);
  auto id = libs.create("Notes", "model-sha", 3);
  ASSERT_TRUE(id.ok()) << id.error().message;
  DocumentInfo info{"/notes/a.md", "hash1", 10, 1000, "markdown"};
  const std::vector<NewChunk> first{chunk("apples grow on trees", 1, 2, {1, 2, 3}), chunk("pears too", 4, 4, {4, 5, 6})};
  auto doc = libs.put_document(*id, info, first);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_EQ(libs.chunk_count(*id).value(), 2);

  info.content_sha256 = "hash2";
  const std::vector<NewChunk> second{chunk("bananas are yellow", 1, 1, {7, 8, 9})};
  auto again = libs.put_document(*id, info, second);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *doc);  // the same document row, updated
  EXPECT_EQ(libs.chunk_count(*id).value(), 1);
  std::vector<std::pair<float, std::vector<std::int8_t>>> vectors;
  ASSERT_TRUE(libs.for_each_vector(*id, [&](ChunkId, float scale, std::span<const std::int8_t> v) {
                    vectors.emplace_back(scale, std::vector<std::int8_t>(v.begin(), v.end()));
                  }).ok());
  ASSERT_EQ(vectors.size(), 1u);
  EXPECT_EQ(vectors[0].first, 0.5f);
  EXPECT_EQ(vectors[0].second, (std::vector<std::int8_t>{7, 8, 9}));
  // The old words left the index with their chunks.
  EXPECT_TRUE(libs.keyword_search(std::vector<LibraryId>{*id}, "apples", 10).value().empty());
  EXPECT_EQ(libs.keyword_search(std::vector<LibraryId>{*id}, "banana", 10).value().size(), 1u);  // Porter stem

  auto stored = libs.document(*id, "/notes/a.md");
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->info.content_sha256, "hash2");
  EXPECT_EQ((*stored)->chunk_count, 1);
  EXPECT_EQ((*stored)->state, DocumentState::Indexed);
}

TEST_F(LibrariesTest, SwitchingTheEmbeddingModelEmptiesTheLibraryForAFullReindex) {
  Libraries libs(*db_);
  const LibraryId id = libs.create("L", "old-model", 3).value();
  ASSERT_TRUE(libs.add_root(id, "/notes").ok());
  ASSERT_TRUE(libs.put_document(id, {"/notes/a.txt", "h", 1, 1, "text"},
                                std::vector<NewChunk>{chunk("words", 1, 1, {1, 2, 3})}).ok());
  ASSERT_TRUE(libs.reset_for_model(id, "new-model", 5).ok());
  const Library after = libs.get(id).value();
  EXPECT_EQ(after.embedding_model, "new-model");
  EXPECT_EQ(after.embedding_dim, 5);
  EXPECT_EQ(after.roots, std::vector<std::string>{"/notes"});  // what to index stays
  EXPECT_TRUE(libs.documents(id).value().empty());
  EXPECT_EQ(libs.chunk_count(id).value(), 0);
  std::int64_t vectors = 0;
  ASSERT_TRUE(libs.for_each_vector(id, [&](ChunkId, float, std::span<const std::int8_t>) { ++vectors; }).ok());
  EXPECT_EQ(vectors, 0);
  EXPECT_EQ(testing::error_code(libs.reset_for_model(LibraryId{99}, "m", 5)), ErrorCode::NotFound);
}

TEST_F(LibrariesTest, AWrongVectorLengthIsRefusedAndChangesNothing) {
  Libraries libs(*db_);
  const LibraryId id = libs.create("L", "m", 4).value();
  auto doc = libs.put_document(id, {"/x.txt", "h", 1, 1, "text"}, std::vector<NewChunk>{chunk("x", 1, 1, {1, 2})});
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(doc.error().message.find("/x.txt"), std::string::npos);
  EXPECT_TRUE(libs.documents(id).value().empty());
}

TEST_F(LibrariesTest, FailedFilesAreRecordedWithTheirReason) {
  Libraries libs(*db_);
  const LibraryId id = libs.create("L", "", 0).value();
  ASSERT_TRUE(libs.put_document(id, {"/b.txt", "h", 1, 1, "text"}, std::vector<NewChunk>{chunk("old words", 1, 1)}).ok());
  ASSERT_TRUE(libs.put_failed(id, {"/b.txt", "h2", 2, 2, "text"}, "not UTF-8 at offset 9").ok());
  const auto docs = libs.documents(id).value();
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].state, DocumentState::Failed);
  EXPECT_EQ(docs[0].error_message, "not UTF-8 at offset 9");
  EXPECT_EQ(docs[0].chunk_count, 0);
}

TEST_F(LibrariesTest, KeywordSearchRanksByBm25AcrossLibrariesAndIgnoresOperators) {
  Libraries libs(*db_);
  const LibraryId a = libs.create("A", "", 0).value();
  const LibraryId b = libs.create("B", "", 0).value();
  ASSERT_TRUE(libs.put_document(a, {"/a.txt", "h", 1, 1, "text"},
                                std::vector<NewChunk>{chunk("the kernel module loads firmware", 1, 1),
                                                      chunk("the weather is mild", 3, 3)})
                  .ok());
  ASSERT_TRUE(libs.put_document(b, {"/b.txt", "h", 1, 1, "text"},
                                std::vector<NewChunk>{chunk("firmware firmware firmware update", 1, 1)})
                  .ok());
  const std::vector<LibraryId> both{a, b};
  auto hits = libs.keyword_search(both, "firmware\" OR NOT (", 10);
  ASSERT_TRUE(hits.ok()) << hits.error().message;
  ASSERT_EQ(hits->size(), 2u);
  auto chunks = libs.chunks(std::vector<ChunkId>{(*hits)[0].chunk, (*hits)[1].chunk}).value();
  EXPECT_EQ(chunks[0].document_path, "/b.txt");  // three occurrences beat one
  EXPECT_EQ(chunks[1].document_path, "/a.txt");
  EXPECT_EQ(chunks[1].line_first, 1);
  EXPECT_EQ(libs.keyword_search(std::vector<LibraryId>{a}, "firmware", 10).value().size(), 1u);
  EXPECT_TRUE(libs.keyword_search(both, "\"\" ((", 10).value().empty());
}

TEST_F(LibrariesTest, SourcesOutliveTheLibraryTheyCameFrom) {
  Libraries libs(*db_);
  const LibraryId lib = libs.create("Manuals", "", 0).value();
  ASSERT_TRUE(libs.put_document(lib, {"/m.txt", "h", 1, 1, "text"}, std::vector<NewChunk>{chunk("press reset", 5, 6)}).ok());
  const ChunkId chunk_id = libs.keyword_search(std::vector<LibraryId>{lib}, "reset", 1).value().at(0).chunk;
  const ConversationId conversation = Conversations(*db_).create({}).value();
  Sources sources(*db_);
  ASSERT_TRUE(sources.attach(conversation, lib).ok());
  ASSERT_TRUE(sources.attach(conversation, lib).ok());  // twice is once
  EXPECT_EQ(sources.attached(conversation).value(), std::vector<LibraryId>{lib});
  EXPECT_EQ(testing::error_code(sources.attach(conversation, LibraryId{99})), ErrorCode::NotFound);

  const MessageId question =
      Messages(*db_).append(conversation, MessageId{}, {Role::User, "How do I reset?", 4, "", std::nullopt}).value();
  const std::vector<MessageSource> stored{{1, chunk_id, "Manuals", "/m.txt", std::nullopt, 5, 6, "press reset", 0.03},
                                          {2, ChunkId{}, "Manuals", "/n.pdf", 3, 1, 2, "page three", 0.01}};
  ASSERT_TRUE(sources.put(question, stored).ok());
  ASSERT_TRUE(libs.remove(lib).ok());
  EXPECT_TRUE(sources.attached(conversation).value().empty());
  auto after = sources.of(question).value();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_FALSE(after[0].chunk.valid());  // the chunk is gone, the passage is not
  after[0].chunk = chunk_id;
  EXPECT_EQ(after, stored);
}

TEST_F(LibrariesTest, ResponseCacheEvictsLeastRecentlyUsedAndDropsAChangedModel) {
  ResponseCache cache(*db_, 400);
  ASSERT_TRUE(cache.put("k1", "model-a", {std::string(100, 'a'), "", 10}).ok());
  clock_.advance(1000);
  ASSERT_TRUE(cache.put("k2", "model-a", {std::string(100, 'b'), "", 10}).ok());
  clock_.advance(1000);
  // k1 is used (and k2 not) before a third entry needs room: k2 goes.
  ASSERT_EQ(cache.get("k1").value()->reply, std::string(100, 'a'));
  clock_.advance(1000);
  ASSERT_TRUE(cache.put("k3", "model-b", {std::string(150, 'c'), "r", 12}).ok());
  EXPECT_TRUE(cache.get("k1").value().has_value());
  EXPECT_FALSE(cache.get("k2").value().has_value());
  auto k3 = cache.get("k3").value();
  ASSERT_TRUE(k3.has_value());
  EXPECT_EQ(k3->reasoning, "r");
  EXPECT_EQ(k3->token_count, 12);
  EXPECT_LE(cache.size_bytes().value(), 400);
  ASSERT_TRUE(cache.drop_model("model-a").ok());
  EXPECT_FALSE(cache.get("k1").value().has_value());
  EXPECT_EQ(cache.entries().value(), 1);
  ASSERT_TRUE(cache.put("huge", "model-b", {std::string(1000, 'x'), "", 1}).ok());
  EXPECT_FALSE(cache.get("huge").value().has_value());  // larger than the whole cache
}

TEST(LibrariesMigration, TheVersion3FixtureKeepsItsValuesAndGainsLibraries) {
  TempDir dir;
  const auto path = dir.file("v3.db");
  std::filesystem::copy_file(std::filesystem::path(HEARTH_TEST_DATA_DIR) / "storage" / "v3.db", path);
  auto db = Database::open(path);
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_EQ(db->open_report().schema_version_found, 3);
  EXPECT_EQ(db->open_report().schema_version, Database::kSchemaVersion);
  EXPECT_EQ(db->open_report().interrupted_replies, 1);
  ASSERT_TRUE(db->integrity_check().ok());
  // Values as written in tests/data/storage/v3.sql.
  auto conversation = Conversations(*db).get(ConversationId{1});
  ASSERT_TRUE(conversation.ok());
  EXPECT_EQ(conversation->reasoning, ReasoningSetting::High);
  EXPECT_EQ(Conversations(*db).get(ConversationId{2}).value().reasoning, ReasoningSetting::Off);
  auto reply = Messages(*db).get(MessageId{3});
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->content, "Eight of them: 2, 3, 5, 7, 11, 13, 17, 19.");
  EXPECT_EQ(reply->reasoning, "Primes have exactly two divisors; list them up to 19.");
  EXPECT_EQ(reply->reasoning_ms, 812.5);
  // The new tables work on the migrated file.
  Libraries libs(*db);
  const LibraryId lib = libs.create("After migration", "", 0).value();
  ASSERT_TRUE(libs.put_document(lib, {"/a.txt", "h", 1, 1, "text"}, std::vector<NewChunk>{NewChunk{"", "divisors of primes", {}, 1, 1, 4, 0, {}}}).ok());
  EXPECT_EQ(libs.keyword_search(std::vector<LibraryId>{lib}, "divisor", 5).value().size(), 1u);
  ASSERT_TRUE(Sources(*db).attach(ConversationId{1}, lib).ok());
}

}  // namespace
}  // namespace hearth::storage
