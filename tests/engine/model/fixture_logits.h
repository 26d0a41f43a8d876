// Reading the reference logits fixtures and comparing against them with the
// tolerances of tests/data/FIXTURES-README.md.
#pragma once

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace hearth::testing {

// One fixture model, the tokens it was evaluated on and the tolerances of its
// weight class (tests/data/FIXTURES-README.md).
struct FixtureCase {
  const char* model;
  const char* tokens;  // relative to tests/data/models
  double min_cosine;
  double min_top1;
};

inline constexpr double kF32Cosine = 0.99999, kF16Cosine = 0.9998, kQuantCosine = 0.998;

// Every model of tests/data/models with reference logits (the ConformanceKv
// test picks cases by index: new ones go at the end).
inline constexpr FixtureCase kFixtureCases[] = {
    {"tiny-llama-f32.gguf", "tokens.txt", kF32Cosine, 1.0},
    {"tiny-llama-f16.gguf", "tokens.txt", kF16Cosine, 0.95},
    {"tiny-llama-q8_0.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-llama-q4_0.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-llama-q4_k_m.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-llama-q6_k.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-qwen2-f16.gguf", "tokens.txt", kF16Cosine, 0.95},
    {"tiny-qwen2-q8_0.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-qwen2-q4_k_m.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"stories260K.gguf", "stories260K.prompt-tokens.txt", kF32Cosine, 1.0},
    // models2 of the fixtures (a 2026 reference build), copied into models/.
    {"tiny-gemma3-f32.gguf", "tokens.txt", kF32Cosine, 1.0},
    {"tiny-gemma3-q8_0.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-gemma3-q4_k_m.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-smollm3-f32.gguf", "tokens.txt", kF32Cosine, 1.0},
    {"tiny-smollm3-q8_0.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-smollm3-q4_k_m.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-llama31-f32.gguf", "tokens.txt", kF32Cosine, 1.0},
    {"tiny-llama31-q8_0.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-llama31-q4_k_m.gguf", "tokens.txt", kQuantCosine, 0.85},
};

// The mixture-of-experts fixtures (tests/data/FIXTURES-README.md,
// models/tiny-qwen3moe-*), kept apart so suites opt in per backend.
inline constexpr FixtureCase kMoeFixtureCases[] = {
    {"tiny-qwen3moe-f32.gguf", "tokens.txt", kF32Cosine, 1.0},
    {"tiny-qwen3moe-q8_0.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-qwen3moe-q4_k_m.gguf", "tokens.txt", kQuantCosine, 0.85},
};

// A gtest-friendly name for a case: the model file with punctuation as '_'.
inline std::string fixture_case_name(const FixtureCase& c) {
  std::string n = c.model;
  for (char& ch : n) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))) ch = '_';
  }
  return n;
}

inline std::string data_path(const std::string& rel) { return std::string(HEARTH_TEST_DATA_DIR) + "/" + rel; }

inline std::vector<int32_t> read_ids(const std::string& path) {
  std::ifstream in(path);
  std::vector<int32_t> ids;
  int32_t v;
  while (in >> v) ids.push_back(v);
  return ids;
}

inline std::vector<float> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

struct LogitsAgreement {
  double min_cosine = 1.0;
  double top1 = 0.0;  // fraction of positions whose arg-max agrees
};

inline LogitsAgreement compare_logits(const std::vector<float>& got, const std::vector<float>& ref, size_t n_vocab) {
  LogitsAgreement a;
  const size_t rows = ref.size() / n_vocab;
  size_t agree = 0;
  for (size_t r = 0; r < rows; ++r) {
    const float* x = got.data() + r * n_vocab;
    const float* y = ref.data() + r * n_vocab;
    double xy = 0, xx = 0, yy = 0;
    size_t ax = 0, ay = 0;
    for (size_t i = 0; i < n_vocab; ++i) {
      xy += double(x[i]) * y[i];
      xx += double(x[i]) * x[i];
      yy += double(y[i]) * y[i];
      if (x[i] > x[ax]) ax = i;
      if (y[i] > y[ay]) ay = i;
    }
    a.min_cosine = std::min(a.min_cosine, xy / std::sqrt(xx * yy));
    agree += ax == ay;
  }
  a.top1 = rows ? double(agree) / double(rows) : 0.0;
  return a;
}

}  // namespace hearth::testing
