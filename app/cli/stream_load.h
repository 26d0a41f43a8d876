// A load of concurrent streaming clients against an OpenAI-compatible
// server (Hearth's own or the reference engine's), for `bench-serve`: each
// stream posts its prompt (token ids, so both servers see the same tokens)
// to /v1/completions with stream: true and records when every token arrives.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <string>
#include <vector>

namespace hearth::cli {

struct LoadSpec {
  int port = 0;
  std::string api_key;            // sent as a bearer token when not empty
  std::vector<std::vector<int32_t>> prompts;  // one per stream
  int32_t max_tokens = 128;       // each reply runs to it (ignore_eos)
  double stagger_ms = 50;         // stream i starts i * stagger_ms after the first
  double temperature = 0;         // every request's; 0 is greedy
  int timeout_s = 600;
};

struct LoadFigures {
  int streams = 0;
  int64_t tokens = 0;       // token frames received over all streams
  double seconds = 0;       // first request sent .. last stream done
  double agg_tps = 0;       // tokens / seconds
  double ttft_p50_ms = 0, ttft_p95_ms = 0;
  double itl_p50_ms = 0, itl_p95_ms = 0;  // gaps between consecutive tokens of a stream
};

// Runs the streams and summarizes them; an error names the stream that
// failed and why (refused, HTTP status, a reply cut short).
Result<LoadFigures> run_load(const LoadSpec& spec);

// The p-th percentile (0..100) by linear interpolation between ranks; 0 when empty.
double percentile(std::vector<double> values, double p);

// Several runs of one level as one: each figure the median of the runs'
// (bench-serve --repeat; on a busy machine one run of a few seconds moves
// with whatever else ran then). `runs` must not be empty.
LoadFigures median_figures(const std::vector<LoadFigures>& runs);

}  // namespace hearth::cli
