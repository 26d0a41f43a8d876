#include "remote/sse_parser.h"

namespace hearth::remote {

Status SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  for (const char c : bytes) {
    if (skip_lf_) {
      skip_lf_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r' || c == '\n') {
      skip_lf_ = c == '\r';
      HEARTH_CHECK(take_line(out));
      continue;
    }
    if (line_.size() >= max_line_) {
      return make_error(ErrorCode::InvalidFormat,
                        "event stream line longer than " + std::to_string(max_line_) + " bytes");
    }
    line_.push_back(c);
  }
  return {};
}

Status SseParser::take_line(std::vector<SseEvent>& out) {
  if (line_.empty()) {
    // A blank line ends the event; one without data is dropped.
    if (has_data_) out.push_back(std::move(pending_));
    pending_ = {};
    has_data_ = false;
    return {};
  }
  if (line_.front() == ':') {  // a comment: keep-alives
    line_.clear();
    return {};
  }
  const size_t colon = line_.find(':');
  std::string_view field(line_);
  std::string_view value;
  if (colon != std::string::npos) {
    field = std::string_view(line_).substr(0, colon);
    value = std::string_view(line_).substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) pending_.data.push_back('\n');
    pending_.data.append(value);
    has_data_ = true;
    if (pending_.data.size() > max_line_) {
      return make_error(ErrorCode::InvalidFormat,
                        "event stream event longer than " + std::to_string(max_line_) + " bytes");
    }
  } else if (field == "event") {
    pending_.event.assign(value);
  }
  // "id" and "retry" matter to reconnecting browsers only.
  line_.clear();
  return {};
}

}  // namespace hearth::remote
