#include "stream_load.h"

#include <fmt/format.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace hearth::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct StreamRecord {
  Clock::time_point sent;
  std::vector<Clock::time_point> token_times;
  std::string error;
};

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Splits the SSE byte stream into frames and stamps each one that carries
// text (one per token from both servers; the final frame and [DONE] carry none).
class FrameClock {
 public:
  explicit FrameClock(StreamRecord& record) : record_(record) {}
  void feed(const char* data, size_t n) {
    buffer_.append(data, n);
    size_t end = 0;
    while ((end = buffer_.find("\n\n")) != std::string::npos) {
      const std::string frame = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      if (frame.rfind("data: ", 0) != 0 || frame == "data: [DONE]") continue;
      const auto j = nlohmann::json::parse(frame.substr(6), nullptr, false);
      if (!j.is_object()) continue;
      if (j.contains("error")) {
        record_.error = j["error"].dump();
        continue;
      }
      const auto choices = j.find("choices");
      if (choices == j.end() || !choices->is_array() || choices->empty()) continue;
      const auto& c = (*choices)[0];
      const auto text = c.find("text");
      if (text != c.end() && text->is_string() && !text->get<std::string>().empty()) {
        record_.token_times.push_back(Clock::now());
      }
    }
  }

 private:
  StreamRecord& record_;
  std::string buffer_;
};

void run_stream(const LoadSpec& spec, size_t index, Clock::time_point start, StreamRecord& record) {
  std::this_thread::sleep_until(start + std::chrono::microseconds(static_cast<int64_t>(spec.stagger_ms * 1000.0 *
                                                                                         static_cast<double>(index))));
  httplib::Client client("127.0.0.1", spec.port);
  client.set_read_timeout(spec.timeout_s, 0);
  client.set_write_timeout(60, 0);
  client.set_connection_timeout(60, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.headers = {{"Content-Type", "application/json"}};
  if (!spec.api_key.empty()) req.headers.emplace("Authorization", "Bearer " + spec.api_key);
  req.body = nlohmann::json{{"prompt", spec.prompts[index]}, {"max_tokens", spec.max_tokens}, {"temperature", spec.temperature},
                            {"ignore_eos", true}, {"stream", true}}
                 .dump();
  FrameClock frames(record);
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    frames.feed(data, n);
    return true;
  };
  record.sent = Clock::now();
  auto res = client.send(req);
  if (!res) {
    record.error = fmt::format("stream {}: no response ({})", index, httplib::to_string(res.error()));
  } else if (res->status != 200) {
    record.error = fmt::format("stream {}: HTTP {} {}", index, res->status, res->body.substr(0, 200));
  } else if (record.error.empty() && record.token_times.empty()) {
    record.error = fmt::format("stream {}: no tokens arrived", index);
  } else if (!record.error.empty()) {
    record.error = fmt::format("stream {}: {}", index, record.error);
  }
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

LoadFigures median_figures(const std::vector<LoadFigures>& runs) {
  const auto median = [&](auto field) {
    std::vector<double> v;
    for (const LoadFigures& r : runs) v.push_back(static_cast<double>(r.*field));
    return percentile(std::move(v), 50);
  };
  LoadFigures m;
  m.streams = runs.front().streams;
  m.tokens = static_cast<int64_t>(std::llround(median(&LoadFigures::tokens)));
  m.seconds = median(&LoadFigures::seconds);
  m.agg_tps = median(&LoadFigures::agg_tps);
  m.ttft_p50_ms = median(&LoadFigures::ttft_p50_ms);
  m.ttft_p95_ms = median(&LoadFigures::ttft_p95_ms);
  m.itl_p50_ms = median(&LoadFigures::itl_p50_ms);
  m.itl_p95_ms = median(&LoadFigures::itl_p95_ms);
  return m;
}

Result<LoadFigures> run_load(const LoadSpec& spec) {
  std::vector<StreamRecord> records(spec.prompts.size());
  const Clock::time_point start = Clock::now() + std::chrono::milliseconds(20);
  {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < spec.prompts.size(); ++i) {
      threads.emplace_back([&, i] { run_stream(spec, i, start, records[i]); });
    }
    for (auto& t : threads) t.join();
  }
  LoadFigures f;
  f.streams = static_cast<int>(records.size());
  std::vector<double> ttft, itl;
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
  for (const auto& r : records) {
    if (!r.error.empty()) return make_error(ErrorCode::Io, r.error);
    first = std::min(first, r.sent);
    last = std::max(last, r.token_times.back());
    f.tokens += static_cast<int64_t>(r.token_times.size());
    ttft.push_back(ms(r.token_times.front() - r.sent));
    for (size_t i = 1; i < r.token_times.size(); ++i) itl.push_back(ms(r.token_times[i] - r.token_times[i - 1]));
  }
  f.seconds = std::chrono::duration<double>(last - first).count();
  f.agg_tps = f.seconds > 0 ? static_cast<double>(f.tokens) / f.seconds : 0;
  f.ttft_p50_ms = percentile(ttft, 50);
  f.ttft_p95_ms = percentile(ttft, 95);
  f.itl_p50_ms = percentile(itl, 50);
  f.itl_p95_ms = percentile(itl, 95);
  return f;
}

}  // namespace hearth::cli
