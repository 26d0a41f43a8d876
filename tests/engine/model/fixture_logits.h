// Reading the reference logits fixtures and comparing against them with the
// tolerances of tests/data/FIXTURES-README.md.
#pragma once

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::testing {

// One fixture model, the tokens it was evaluated on and the tolerances of its
// weight class (tests/data/FIXTURES-README.md).
struct FixtureCase {
  const char* model;
  const char* tokens;  // relative to tests/data/models
  double min_cosine;
  double min_top1;
  // Positions that may fall below min_cosine: a mixture of experts whose
  // router has a near-tie there, so that float rounding legitimately picks
  // the other expert (FIXTURES-README.md names each one and its margin).
  int near_tie_positions = 0;
};

inline constexpr double kF32Cosine = 0.99999, kF16Cosine = 0.9998, kQuantCosine = 0.998;

// Every model of tests/data/models with reference logits (some tests pick
// cases by index: new ones go at the end).
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
// models/tiny-qwen3moe-* and models/tiny-gpt-oss-*), kept apart so suites
// opt in per backend.
inline constexpr FixtureCase kMoeFixtureCases[] = {
    {"tiny-qwen3moe-f32.gguf", "tokens.txt", kF32Cosine, 1.0},
    {"tiny-qwen3moe-q8_0.gguf", "tokens.txt", kQuantCosine, 0.85},
    {"tiny-qwen3moe-q4_k_m.gguf", "tokens.txt", kQuantCosine, 0.85},
    // The quantized ones each have one position where layer 1's router has
    // a near-tie that rounding can flip (FIXTURES-README.md, with margins).
    {"tiny-gpt-oss-f32.gguf", "tokens.txt", kF32Cosine, 1.0},
    {"tiny-gpt-oss-q8_0.gguf", "tokens.txt", kQuantCosine, 0.85, 1},
    {"tiny-gpt-oss-q4_k_m.gguf", "tokens.txt", kQuantCosine, 0.85, 1},
    // Expert tensors in MXFP4, the other matrices in Q8_0.
    {"tiny-gpt-oss-mxfp4_moe.gguf", "tokens.txt", kQuantCosine, 0.85, 1},
};

// The case of `model` (a file name of the tables above). A test that needs
// particular models names them rather than counting positions in a table;
// a name not in the tables does not compile.
consteval const FixtureCase& fixture_case(std::string_view model) {
  for (const FixtureCase& c : kFixtureCases) {
    if (model == c.model) return c;
  }
  for (const FixtureCase& c : kMoeFixtureCases) {
    if (model == c.model) return c;
  }
  throw "no fixture case for this model";
}

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
  double max_abs = 0.0;  // largest |got - ref| over every logit (reported, not a tolerance)
  size_t worst_row = 0;  // the position of min_cosine
  std::vector<double> cosines;  // per position
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
      a.max_abs = std::max(a.max_abs, std::fabs(double(x[i]) - double(y[i])));
      xx += double(x[i]) * x[i];
      yy += double(y[i]) * y[i];
      if (x[i] > x[ax]) ax = i;
      if (y[i] > y[ay]) ay = i;
    }
    const double cosine = xy / std::sqrt(xx * yy);
    a.cosines.push_back(cosine);
    if (cosine < a.min_cosine) {
      a.min_cosine = cosine;
      a.worst_row = r;
    }
    agree += ax == ay;
  }
  a.top1 = rows ? double(agree) / double(rows) : 0.0;
  return a;
}

// The cosine the case's tolerance applies to: the smallest once the case's
// near-tie positions (its lowest cosines) are set aside.
inline double checked_cosine(const LogitsAgreement& a, const FixtureCase& c) {
  std::vector<double> sorted = a.cosines;
  std::sort(sorted.begin(), sorted.end());
  const auto skip = static_cast<size_t>(std::max(0, c.near_tie_positions));
  return skip < sorted.size() ? sorted[skip] : 1.0;
}

// One line per comparison in the test log: what a reader compares across
// backends and weight types.
inline void print_agreement(const char* where, const char* model, const LogitsAgreement& a) {
  std::printf("[ logits ] %-9s %-28s min cosine %.7f (position %zu) top-1 %.3f max |diff| %.4g\n", where, model,
              a.min_cosine, a.worst_row, a.top1, a.max_abs);
}

}  // namespace hearth::testing
