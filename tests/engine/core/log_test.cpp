#include <gtest/gtest.h>
#include <hearth/core/log.h>

#include <string>
#include <vector>

namespace hearth {
namespace {

TEST(Logger, ForwardsAtOrAboveMinimumLevel) {
  std::vector<std::pair<LogLevel, std::string>> seen;
  Logger logger([&](LogLevel level, std::string_view msg) { seen.emplace_back(level, std::string(msg)); },
                LogLevel::Info);
  logger.debug("hidden {}", 1);
  logger.info("tensor '{}' has {} rows", "blk.0.attn_q.weight", 256);
  logger.error("bad");
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, LogLevel::Info);
  EXPECT_EQ(seen[0].second, "tensor 'blk.0.attn_q.weight' has 256 rows");
  EXPECT_EQ(seen[1].first, LogLevel::Error);
}

TEST(Logger, DefaultDiscards) {
  Logger logger;
  EXPECT_FALSE(logger.enabled(LogLevel::Error));
  logger.error("nothing happens {}", 1);
}

}  // namespace
}  // namespace hearth
