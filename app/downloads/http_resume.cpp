#include "downloads/http_resume.h"

#include <fmt/format.h>

#include <charconv>

namespace hearth::models {
namespace {

std::optional<uint64_t> parse_u64(std::string_view text) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<ContentRange> parse_content_range(std::string_view header) {
  header = trim(header);
  constexpr std::string_view kUnit = "bytes ";
  if (header.substr(0, kUnit.size()) != kUnit) return std::nullopt;
  header.remove_prefix(kUnit.size());
  const auto slash = header.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view range = trim(header.substr(0, slash));
  const std::string_view total = trim(header.substr(slash + 1));
  ContentRange out;
  if (total != "*") {
    out.total = parse_u64(total);
    if (!out.total) return std::nullopt;
  }
  if (range == "*") {
    if (!out.total) return std::nullopt;  // "bytes */*" says nothing
    return out;
  }
  const auto dash = range.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  out.first = parse_u64(range.substr(0, dash));
  out.last = parse_u64(range.substr(dash + 1));
  if (!out.first || !out.last || *out.last < *out.first) return std::nullopt;
  if (out.total && *out.last >= *out.total) return std::nullopt;
  return out;
}

bool is_strong_etag(std::string_view etag) {
  return !etag.empty() && etag.substr(0, 2) != "W/";
}

ResumeDecision decide_resume(const ResponseInfo& response, const PartialState& partial) {
  ResumeDecision d;
  switch (response.status) {
    case 200: {
      d.total_bytes = response.content_length;
      if (partial.part_bytes == 0) {
        d.action = ResumeAction::Append;
        d.reason = "full response";
      } else {
        d.action = ResumeAction::TruncateAndAppend;
        d.reason = fmt::format("server sent the whole file (200) instead of bytes from {}; starting over",
                               partial.part_bytes);
      }
      return d;
    }
    case 206: {
      auto range = parse_content_range(response.content_range);
      if (!range || !range->first) {
        d.action = ResumeAction::RestartWithoutRange;
        d.reason = fmt::format("206 with an unusable Content-Range '{}'; starting over", response.content_range);
        return d;
      }
      if (*range->first != partial.part_bytes) {
        d.action = ResumeAction::RestartWithoutRange;
        d.reason = fmt::format("206 starts at byte {} but {} bytes are on disk; starting over", *range->first,
                               partial.part_bytes);
        return d;
      }
      if (!partial.etag.empty() && !response.etag.empty() && partial.etag != response.etag) {
        d.action = ResumeAction::RestartWithoutRange;
        d.reason = fmt::format("the file changed on the server (ETag {} -> {}); starting over", partial.etag,
                               response.etag);
        return d;
      }
      if (partial.expected_total && range->total && *partial.expected_total != *range->total) {
        d.action = ResumeAction::RestartWithoutRange;
        d.reason = fmt::format("the file is now {} bytes, was {}; starting over", *range->total,
                               *partial.expected_total);
        return d;
      }
      d.action = ResumeAction::Append;
      d.total_bytes = range->total;
      d.reason = fmt::format("resuming at byte {}", partial.part_bytes);
      return d;
    }
    case 416: {
      auto range = parse_content_range(response.content_range);
      if (range && range->total && *range->total == partial.part_bytes && partial.part_bytes > 0 &&
          (!partial.expected_total || *partial.expected_total == partial.part_bytes)) {
        d.action = ResumeAction::AlreadyComplete;
        d.total_bytes = range->total;
        d.reason = "the partial file already holds the whole file";
        return d;
      }
      d.action = ResumeAction::RestartWithoutRange;
      d.reason = fmt::format("server cannot send bytes from {} (416); starting over", partial.part_bytes);
      return d;
    }
    default:
      d.action = ResumeAction::Fail;
      d.reason = fmt::format("HTTP status {}", response.status);
      return d;
  }
}

}  // namespace hearth::models
