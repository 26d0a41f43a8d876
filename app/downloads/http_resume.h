// The resume rules, as a pure function of the response status and headers
// and of what is already on disk. Appending a full (200) response, or a 206
// that starts anywhere but at the end of the partial file, to that partial
// file is the classic way downloads get corrupted; every such case restarts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::models {

// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*"), or "bytes */TOTAL" in a 416.
struct ContentRange {
  std::optional<uint64_t> first;  // absent in "bytes */TOTAL"
  std::optional<uint64_t> last;
  std::optional<uint64_t> total;  // absent when the server sent "*"
};
std::optional<ContentRange> parse_content_range(std::string_view header);

enum class ResumeAction {
  Append,             // write the body after the bytes already on disk
  TruncateAndAppend,  // empty the partial file, then write this body (a 200)
  RestartWithoutRange,  // empty the partial file and request the whole file again
  AlreadyComplete,    // the partial file already holds every byte: verify it
  Fail,               // an HTTP error: stop with `reason`
};

struct ResumeDecision {
  ResumeAction action = ResumeAction::Fail;
  std::optional<uint64_t> total_bytes;  // size of the whole file when known
  std::string reason;                   // why, for logs and error messages
};

struct ResponseInfo {
  int status = 0;
  std::string content_range;  // header text, empty when absent
  std::optional<uint64_t> content_length;
  std::string etag;           // ETag of this response, empty when absent
};

struct PartialState {
  uint64_t part_bytes = 0;    // bytes on disk
  std::string etag;           // ETag the partial bytes came with, empty when unknown
  std::optional<uint64_t> expected_total;  // from the catalog or an earlier response
};

ResumeDecision decide_resume(const ResponseInfo& response, const PartialState& partial);

// If-Range needs a strong validator; a weak one ("W/...") must not be sent.
bool is_strong_etag(std::string_view etag);

}  // namespace hearth::models
