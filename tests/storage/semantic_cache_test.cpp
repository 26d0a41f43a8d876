// The semantic cache on a real SQLite file: the nearest question within the
// threshold answers, only in its own model and context; vectors of another
// length never match; entries past the cap go least recently used first; and
// a changed model file's entries are dropped. Similarities are checked against
// dot products computed here.
#include <gtest/gtest.h>
#include <hearth/storage/semantic_cache.h>

#include <cmath>
#include <vector>

#include "storage_test_util.h"

namespace hearth::storage {
namespace {

std::vector<float> unit(std::vector<float> v) {
  double n = 0;
  for (float x : v) n += static_cast<double>(x) * x;
  for (float& x : v) x = static_cast<float>(x / std::sqrt(n));
  return v;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += static_cast<double>(a[i]) * b[i];
  return d;
}

TEST(SemanticCache, TheNearestQuestionWithinTheThresholdOfTheSameModelAndContextAnswers) {
  testing::TempDir dir;
  HEARTH_ASSERT_VALUE(Database db, Database::open(dir.file("cache.sqlite3")));
  SemanticCache cache(db, 1 << 20);
  const auto capital = unit({1, 0.1f, 0, 0});
  const auto weather = unit({0, 0, 1, 0.2f});
  HEARTH_ASSERT_OK(cache.put({"m.gguf|1:1", "ctx-a", "What is the capital of France?", capital, "Paris.", 2}));
  HEARTH_ASSERT_OK(cache.put({"m.gguf|1:1", "ctx-a", "Will it rain?", weather, "Probably.", 2}));
  HEARTH_ASSERT_OK(cache.put({"m.gguf|1:1", "ctx-b", "What is the capital of France?", capital, "Paris!", 2}));

  const auto paraphrase = unit({0.95f, 0.2f, 0.05f, 0});
  HEARTH_ASSERT_VALUE(auto hit, cache.nearest("m.gguf|1:1", "ctx-a", paraphrase, 0.95));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->reply, "Paris.");
  EXPECT_EQ(hit->question, "What is the capital of France?");
  EXPECT_NEAR(hit->similarity, dot(paraphrase, capital), 1e-6);
  // Another context (system prompt) or model: its own answer or none.
  HEARTH_ASSERT_VALUE(auto other_context, cache.nearest("m.gguf|1:1", "ctx-b", paraphrase, 0.95));
  ASSERT_TRUE(other_context.has_value());
  EXPECT_EQ(other_context->reply, "Paris!");
  HEARTH_ASSERT_VALUE(auto other_model, cache.nearest("n.gguf|1:1", "ctx-a", paraphrase, 0.95));
  EXPECT_FALSE(other_model.has_value());
  // Below the threshold: a miss.
  const auto unrelated = unit({0.5f, 0, 0.5f, 0.7f});
  ASSERT_LT(dot(unrelated, capital), 0.95);
  ASSERT_LT(dot(unrelated, weather), 0.95);
  HEARTH_ASSERT_VALUE(auto miss, cache.nearest("m.gguf|1:1", "ctx-a", unrelated, 0.95));
  EXPECT_FALSE(miss.has_value());
  // Another embedding length never matches.
  HEARTH_ASSERT_VALUE(auto short_vector, cache.nearest("m.gguf|1:1", "ctx-a", unit({1, 0.1f}), 0.0));
  EXPECT_FALSE(short_vector.has_value());
}

TEST(SemanticCache, EvictsLeastRecentlyUsedAndDropsChangedModels) {
  testing::TempDir dir;
  // A clock that moves one millisecond per reading: every use is later than the last.
  OpenOptions options;
  options.clock = [t = UnixMs{1000}]() mutable { return ++t; };
  HEARTH_ASSERT_VALUE(Database db, Database::open(dir.file("cache.sqlite3"), options));
  const std::string reply(200, 'x');
  const auto a = unit({1, 0, 0, 0}), b = unit({0, 1, 0, 0}), c = unit({0, 0, 1, 0});
  // Room for two entries of about 340 bytes, not three.
  SemanticCache cache(db, 800);
  HEARTH_ASSERT_OK(cache.put({"m|1", "ctx", "a", a, reply, 1}));
  HEARTH_ASSERT_OK(cache.put({"m|1", "ctx", "b", b, reply, 1}));
  HEARTH_ASSERT_VALUE(auto used, cache.nearest("m|1", "ctx", a, 0.99));  // "a" is now the newer use
  ASSERT_TRUE(used.has_value());
  HEARTH_ASSERT_OK(cache.put({"m|1", "ctx", "c", c, reply, 1}));
  HEARTH_ASSERT_VALUE(std::int64_t n, cache.entries());
  EXPECT_EQ(n, 2);
  HEARTH_ASSERT_VALUE(auto gone, cache.nearest("m|1", "ctx", b, 0.99));
  EXPECT_FALSE(gone.has_value());
  HEARTH_ASSERT_VALUE(auto kept, cache.nearest("m|1", "ctx", a, 0.99));
  EXPECT_TRUE(kept.has_value());
  // The model file changed: its old entries go.
  HEARTH_ASSERT_OK(cache.drop_other_versions("m|", "m|2"));
  HEARTH_ASSERT_VALUE(std::int64_t left, cache.entries());
  EXPECT_EQ(left, 0);
}

}  // namespace
}  // namespace hearth::storage
