#include <gtest/gtest.h>
#include <hearth/engine/kv/prefix_disk_cache.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <thread>

namespace hearth::kv {
namespace {

namespace fs = std::filesystem;

class PrefixDiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hearth-prefix-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    model_path_ = dir_ / "model.gguf";
    write_model("weights-v1");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_model(const std::string& content) {
    std::ofstream(model_path_, std::ios::binary) << content;
  }
  static std::vector<int32_t> iota_tokens(size_t n, int32_t start = 1) {
    std::vector<int32_t> t(n);
    std::iota(t.begin(), t.end(), start);
    return t;
  }
  static std::vector<uint8_t> payload_for(size_t n) {
    std::vector<uint8_t> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(i * 31 + 7);
    return p;
  }
  fs::path cache_dir() const { return dir_ / "cache"; }

  fs::path dir_;
  fs::path model_path_;
  const KvLayout layout_{DType::F16, 2, 2, 64};
};

TEST_F(PrefixDiskCacheTest, RoundTripsTheLongestMatchingPrefix) {
  auto model = identify_model_file(model_path_);
  ASSERT_TRUE(model.ok()) << model.error().message;
  PrefixDiskCache cache(cache_dir(), 1 << 20);
  const auto system_prompt = iota_tokens(40);
  auto longer = system_prompt;
  longer.insert(longer.end(), {900, 901, 902});
  ASSERT_TRUE(cache.save(*model, layout_, system_prompt, payload_for(1000)).ok());
  ASSERT_TRUE(cache.save(*model, layout_, longer, payload_for(1100)).ok());
  EXPECT_EQ(cache.entry_count(), 2u);

  auto request = longer;
  request.push_back(5);  // the new user turn
  auto hit = cache.load_longest_prefix(*model, layout_, request);
  ASSERT_TRUE(hit.ok());
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ((*hit)->tokens, longer);
  EXPECT_EQ((*hit)->payload, payload_for(1100));

  auto other = system_prompt;
  other.push_back(77);  // same system prompt, different conversation
  auto partial = cache.load_longest_prefix(*model, layout_, other);
  ASSERT_TRUE(partial.ok() && partial->has_value());
  EXPECT_EQ((*partial)->tokens, system_prompt);

  auto miss = cache.load_longest_prefix(*model, layout_, iota_tokens(40, 2));
  ASSERT_TRUE(miss.ok());
  EXPECT_FALSE(miss->has_value());
}

TEST_F(PrefixDiskCacheTest, SurvivesARestartAndIsRejectedAfterTheModelChanges) {
  auto before = identify_model_file(model_path_);
  ASSERT_TRUE(before.ok());
  const auto tokens = iota_tokens(64);
  {
    PrefixDiskCache cache(cache_dir(), 1 << 20);
    ASSERT_TRUE(cache.save(*before, layout_, tokens, payload_for(4096)).ok());
  }
  {
    PrefixDiskCache restarted(cache_dir(), 1 << 20);
    auto hit = restarted.load_longest_prefix(*before, layout_, tokens);
    ASSERT_TRUE(hit.ok() && hit->has_value());
    EXPECT_EQ((*hit)->payload, payload_for(4096));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  write_model("weights-v2");  // same size, new content and mtime
  auto after = identify_model_file(model_path_);
  ASSERT_TRUE(after.ok());
  EXPECT_NE(before->content_hash, after->content_hash);
  PrefixDiskCache cache(cache_dir(), 1 << 20);
  auto stale = cache.load_longest_prefix(*after, layout_, tokens);
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(stale->has_value());
}

TEST_F(PrefixDiskCacheTest, CorruptAndTruncatedFilesAreDeleted) {
  auto model = identify_model_file(model_path_);
  PrefixDiskCache cache(cache_dir(), 1 << 20);
  const auto tokens = iota_tokens(16);
  ASSERT_TRUE(cache.save(*model, layout_, tokens, payload_for(512)).ok());
  fs::path file = fs::directory_iterator(cache_dir())->path();
  {
    std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(-5, std::ios::end);
    f.put('\x42');  // flip a payload byte
  }
  auto hit = cache.load_longest_prefix(*model, layout_, tokens);
  ASSERT_TRUE(hit.ok());
  EXPECT_FALSE(hit->has_value());
  EXPECT_FALSE(fs::exists(file));

  ASSERT_TRUE(cache.save(*model, layout_, tokens, payload_for(512)).ok());
  file = fs::directory_iterator(cache_dir())->path();
  fs::resize_file(file, 60);
  hit = cache.load_longest_prefix(*model, layout_, tokens);
  ASSERT_TRUE(hit.ok());
  EXPECT_FALSE(hit->has_value());
  EXPECT_FALSE(fs::exists(file));
}

TEST_F(PrefixDiskCacheTest, OtherLayoutsAreKeptButNotUsed) {
  auto model = identify_model_file(model_path_);
  PrefixDiskCache cache(cache_dir(), 1 << 20);
  const auto tokens = iota_tokens(16);
  ASSERT_TRUE(cache.save(*model, layout_, tokens, payload_for(512)).ok());
  const KvLayout q8{DType::Q8_0, 2, 2, 64};
  auto hit = cache.load_longest_prefix(*model, q8, tokens);
  ASSERT_TRUE(hit.ok());
  EXPECT_FALSE(hit->has_value());
  EXPECT_EQ(cache.entry_count(), 1u);
}

TEST_F(PrefixDiskCacheTest, StaysWithinTheDiskBudgetDroppingLeastRecentlyUsed) {
  auto model = identify_model_file(model_path_);
  const uint64_t budget = 3 * (88 + 10 * 4 + 1000) + 100;  // room for three entries
  PrefixDiskCache cache(cache_dir(), budget);
  std::vector<std::vector<int32_t>> prefixes;
  for (int i = 0; i < 3; ++i) {
    prefixes.push_back(iota_tokens(10, 100 * (i + 1)));
    ASSERT_TRUE(cache.save(*model, layout_, prefixes.back(), payload_for(1000)).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
  }
  // Use the oldest one, so the second becomes the least recently used.
  ASSERT_TRUE(cache.load_longest_prefix(*model, layout_, prefixes[0])->has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(15));
  prefixes.push_back(iota_tokens(10, 5000));
  ASSERT_TRUE(cache.save(*model, layout_, prefixes.back(), payload_for(1000)).ok());
  EXPECT_LE(cache.bytes_on_disk(), budget);
  EXPECT_EQ(cache.entry_count(), 3u);
  EXPECT_TRUE(cache.load_longest_prefix(*model, layout_, prefixes[0])->has_value());
  EXPECT_FALSE(cache.load_longest_prefix(*model, layout_, prefixes[1])->has_value());
  EXPECT_TRUE(cache.load_longest_prefix(*model, layout_, prefixes[3])->has_value());

  auto too_big = cache.save(*model, layout_, prefixes[0], payload_for(static_cast<size_t>(budget)));
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.error().code, ErrorCode::LimitExceeded);
}

}  // namespace
}  // namespace hearth::kv
