// A streamed POST /v1/completions to the app's Local API with its bearer
// token, for the tests and benchmarks that keep the API busy; the caller
// sets the content receiver that reads the stream.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <string>

namespace hearth::testing {

inline httplib::Request streamed_completion(const std::string& token, const std::string& prompt, int max_tokens,
                                            int seed) {
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.headers = {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}};
  req.body = nlohmann::json{{"prompt", prompt}, {"max_tokens", max_tokens}, {"ignore_eos", true}, {"seed", seed},
                            {"stream", true}}
                 .dump();
  return req;
}

}  // namespace hearth::testing
