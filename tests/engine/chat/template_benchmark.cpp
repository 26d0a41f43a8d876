// Rendering speed: a 50-message conversation through the Llama 3.1 template
// (the one the app renders before every reply), parsed once and rendered
// per iteration, and parse plus render.
#include <benchmark/benchmark.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "hearth/engine/chat/chat_template.h"

namespace {

using namespace hearth::chat;

std::string llama31_source() {
  std::ifstream in(HEARTH_TEST_DATA_DIR "/templates/llama-3.1-8b-instruct.json", std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return nlohmann::ordered_json::parse(ss.str()).at("template").get<std::string>();
}

std::vector<ChatMessage> conversation(int n) {
  std::vector<ChatMessage> messages;
  messages.push_back({"system", "You are a helpful assistant. Answer briefly and precisely.", {}});
  for (int i = 1; i < n; ++i) {
    const bool user = i % 2 == 1;
    std::string content = user ? "Question " + std::to_string(i) + ": how does the cache keep the prefix warm?"
                               : "Answer " + std::to_string(i) + ": it hashes token blocks and reuses the longest "
                                 "matching prefix, so only the new turn is prefilled.";
    messages.push_back({user ? "user" : "assistant", std::move(content), {}});
  }
  return messages;
}

RenderOptions options() {
  RenderOptions o;
  o.bos_token = "<|begin_of_text|>";
  o.eos_token = "<|eot_id|>";
  return o;
}

void BM_RenderLlama31_50Messages(benchmark::State& state) {
  auto tmpl = ChatTemplate::from_source(llama31_source());
  if (!tmpl.ok()) {
    state.SkipWithError(tmpl.error().message.c_str());
    return;
  }
  const auto messages = conversation(50);
  const auto opts = options();
  size_t bytes = 0;
  for (auto _ : state) {
    auto out = render_chat(*tmpl, messages, opts);
    if (!out.ok()) {
      state.SkipWithError(out.error().message.c_str());
      return;
    }
    bytes = out->size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["prompt_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_RenderLlama31_50Messages)->Unit(benchmark::kMicrosecond);

void BM_ParseAndRenderLlama31_50Messages(benchmark::State& state) {
  const std::string source = llama31_source();
  const auto messages = conversation(50);
  const auto opts = options();
  for (auto _ : state) {
    auto tmpl = ChatTemplate::from_source(source);
    auto out = render_chat(*tmpl, messages, opts);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_ParseAndRenderLlama31_50Messages)->Unit(benchmark::kMicrosecond);

}  // namespace
