#include <gtest/gtest.h>
#include <hearth/core/result.h>

#include <memory>
#include <string>

namespace hearth {
namespace {

Result<int> parse_positive(int value) {
  if (value <= 0) return make_error(ErrorCode::InvalidArgument, "value must be positive");
  return value;
}

Result<int> doubled(int value) {
  HEARTH_TRY(int v, parse_positive(value));
  return v * 2;
}

Status check_even(int value) {
  if (value % 2 != 0) return make_error(ErrorCode::InvalidFormat, "odd");
  return {};
}

Status check_both(int a, int b) {
  HEARTH_CHECK(check_even(a));
  HEARTH_CHECK(check_even(b));
  return {};
}

TEST(Result, HoldsValueOrError) {
  auto ok = parse_positive(3);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  auto bad = parse_positive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
  EXPECT_EQ(bad.error().message, "value must be positive");
  EXPECT_EQ(bad.value_or(7), 7);
}

TEST(Result, TryPropagatesErrorsAndValues) {
  EXPECT_EQ(*doubled(21), 42);
  auto bad = doubled(0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::InvalidArgument);
}

TEST(Result, CheckPropagatesStatus) {
  EXPECT_TRUE(check_both(2, 4).ok());
  auto bad = check_both(2, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "odd");
}

TEST(Result, HoldsMoveOnlyTypes) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  auto p = std::move(r).value();
  EXPECT_EQ(*p, 5);
}

TEST(ErrorCode, HasReadableNames) {
  EXPECT_STREQ(to_string(ErrorCode::Corrupt), "corrupt");
  EXPECT_STREQ(to_string(ErrorCode::Io), "I/O error");
}

}  // namespace
}  // namespace hearth
