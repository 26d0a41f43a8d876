// The resume rules (RFC 9110 Content-Range / If-Range semantics).
#include "downloads/http_resume.h"

#include <gtest/gtest.h>

namespace hearth::models {
namespace {

TEST(ContentRange, Parses) {
  auto r = parse_content_range("bytes 100-199/200");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r->first, 100u);
  EXPECT_EQ(*r->last, 199u);
  EXPECT_EQ(*r->total, 200u);
  auto star = parse_content_range("bytes 0-9/*");
  ASSERT_TRUE(star.has_value());
  EXPECT_FALSE(star->total.has_value());
  auto unsat = parse_content_range("bytes */5000");
  ASSERT_TRUE(unsat.has_value());
  EXPECT_FALSE(unsat->first.has_value());
  EXPECT_EQ(*unsat->total, 5000u);
  for (const char* bad : {"", "bytes", "items 0-1/2", "bytes 5-4/10", "bytes 0-10/10", "bytes a-b/c", "bytes */*",
                          "bytes 0-1"}) {
    EXPECT_FALSE(parse_content_range(bad).has_value()) << bad;
  }
}

ResumeDecision decide(int status, const char* range, uint64_t part, const char* etag = "", const char* stored = "",
                      std::optional<uint64_t> expected = std::nullopt) {
  ResponseInfo response;
  response.status = status;
  response.content_range = range;
  response.etag = etag;
  response.content_length = 1000;
  PartialState partial{part, stored, expected};
  return decide_resume(response, partial);
}

TEST(DecideResume, Table) {
  EXPECT_EQ(decide(200, "", 0).action, ResumeAction::Append);
  EXPECT_EQ(*decide(200, "", 0).total_bytes, 1000u);
  // A full body while bytes are on disk: never append it.
  EXPECT_EQ(decide(200, "", 400).action, ResumeAction::TruncateAndAppend);
  EXPECT_EQ(decide(206, "bytes 400-999/1000", 400).action, ResumeAction::Append);
  EXPECT_EQ(*decide(206, "bytes 400-999/1000", 400).total_bytes, 1000u);
  // Starts elsewhere than the partial size.
  EXPECT_EQ(decide(206, "bytes 0-999/1000", 400).action, ResumeAction::RestartWithoutRange);
  EXPECT_EQ(decide(206, "bytes 401-999/1000", 400).action, ResumeAction::RestartWithoutRange);
  EXPECT_EQ(decide(206, "garbage", 400).action, ResumeAction::RestartWithoutRange);
  // Changed file: different validator, or a different total than expected.
  EXPECT_EQ(decide(206, "bytes 400-999/1000", 400, "\"b\"", "\"a\"").action, ResumeAction::RestartWithoutRange);
  EXPECT_EQ(decide(206, "bytes 400-999/1000", 400, "\"a\"", "\"a\"").action, ResumeAction::Append);
  EXPECT_EQ(decide(206, "bytes 400-1099/1100", 400, "", "", 1000).action, ResumeAction::RestartWithoutRange);
  // 416: complete when the partial is exactly the whole file.
  EXPECT_EQ(decide(416, "bytes */1000", 1000).action, ResumeAction::AlreadyComplete);
  EXPECT_EQ(decide(416, "bytes */1000", 1200).action, ResumeAction::RestartWithoutRange);
  EXPECT_EQ(decide(416, "", 1000).action, ResumeAction::RestartWithoutRange);
  EXPECT_EQ(decide(404, "", 0).action, ResumeAction::Fail);
  EXPECT_EQ(decide(500, "", 400).action, ResumeAction::Fail);
}

TEST(DecideResume, WeakValidatorsAreNotUsedForIfRange) {
  EXPECT_TRUE(is_strong_etag("\"abc\""));
  EXPECT_FALSE(is_strong_etag("W/\"abc\""));
  EXPECT_FALSE(is_strong_etag(""));
}

}  // namespace
}  // namespace hearth::models
