// Tokenizing 1 MB of mixed English / code / CJK text on one core with the
// Llama 3 and Qwen vocabularies. "Cold" clears the word cache before every
// pass; "Warm" keeps it (a long-running app tokenizing similar text).
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "mixed_text.h"

namespace {

using namespace hearth::tokenizer;

const Tokenizer& tokenizer_for(const char* file) {
  // Loading a vocabulary takes longer than a pass; load each one once per process.
  static std::map<std::string, Tokenizer> loaded;
  auto it = loaded.find(file);
  if (it == loaded.end()) {
    auto gguf = hearth::gguf::GgufFile::open(std::filesystem::path(HEARTH_TEST_DATA_DIR) / "vocab" / file);
    if (!gguf.ok()) throw std::runtime_error(gguf.error().message);
    auto tok = Tokenizer::from_gguf(*gguf);
    if (!tok.ok()) throw std::runtime_error(tok.error().message);
    it = loaded.emplace(file, std::move(tok).value()).first;
  }
  return it->second;
}

const std::string& one_megabyte() {
  static const std::string text = testing::mixed_text(1 << 20, 1234);
  return text;
}

enum class Cache { Cold, Warm };

void run(benchmark::State& state, const char* file, Cache cache) {
  const Tokenizer& tok = tokenizer_for(file);
  const std::string& text = one_megabyte();
  size_t tokens = 0;
  if (cache == Cache::Warm) tokens = tok.tokenize(text).size();
  for (auto _ : state) {
    if (cache == Cache::Cold) {
      state.PauseTiming();
      tok.clear_cache();
      state.ResumeTiming();
    }
    auto ids = tok.tokenize(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

void BM_Llama3_Cold(benchmark::State& s) { run(s, "vocab-llama3.gguf", Cache::Cold); }
void BM_Llama3_Warm(benchmark::State& s) { run(s, "vocab-llama3.gguf", Cache::Warm); }
void BM_Qwen3_Cold(benchmark::State& s) { run(s, "vocab-qwen3.gguf", Cache::Cold); }
void BM_Qwen3_Warm(benchmark::State& s) { run(s, "vocab-qwen3.gguf", Cache::Warm); }
void BM_LlamaSpm_Cold(benchmark::State& s) { run(s, "ggml-vocab-llama-spm.gguf", Cache::Cold); }

BENCHMARK(BM_Llama3_Cold)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama3_Warm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Qwen3_Cold)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Qwen3_Warm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LlamaSpm_Cold)->Unit(benchmark::kMillisecond);

}  // namespace
