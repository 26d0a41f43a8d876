// An incremental parser of server-sent events (the text/event-stream format):
// bytes go in as they arrive, cut anywhere (inside a line, between "\r" and
// "\n"), and complete events come out. Comment lines (": keep-alive") are
// skipped; several "data:" lines of one event are joined with "\n". Plain
// C++: the network layer hands it bytes.
#pragma once

#include <hearth/core/result.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::remote {

struct SseEvent {
  std::string event;  // the "event:" field; empty for the default "message"
  std::string data;   // the joined "data:" lines
};

class SseParser {
 public:
  // A line or an event longer than this is an error (a server that never
  // ends a line or an event).
  explicit SseParser(size_t max_line_bytes = 8u << 20) : max_line_(max_line_bytes) {}

  // Parses `bytes` and appends every event completed by them to `out`.
  // An over-long line or event is an InvalidFormat error; the parser is then spent.
  Status feed(std::string_view bytes, std::vector<SseEvent>& out);
  // True when bytes of an unfinished line or event are waiting for more.
  bool has_partial() const { return !line_.empty() || has_data_; }

 private:
  Status take_line(std::vector<SseEvent>& out);

  size_t max_line_;
  std::string line_;
  bool skip_lf_ = false;  // the last byte was "\r": a following "\n" belongs to it
  bool has_data_ = false;
  SseEvent pending_;
};

}  // namespace hearth::remote
