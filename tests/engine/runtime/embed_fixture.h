// The sentence-embedding fixtures of tests/data/embeddings (FIXTURES-README.md):
// the texts, the reference token ids of each text and the reference
// pooled, normalized embeddings, with the tolerances of their weight class.
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/runtime/embedder.h>

#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "../model/fixture_logits.h"

namespace hearth::testing {

struct EmbedCase {
  const char* model;   // in tests/data/embeddings
  const char* tokens;  // the reference ids, one line per text
  double min_cosine;
};

// gtest prints a parameter with this (the model's file name).
inline void PrintTo(const EmbedCase& c, std::ostream* os) { *os << c.model; }

inline constexpr EmbedCase kEmbedCases[] = {
    {"tiny-bert-f32.gguf", "tiny-bert.tokens.txt", 0.9999},
    {"tiny-bert-q8_0.gguf", "tiny-bert.tokens.txt", 0.999},
    {"tiny-qwen3emb-f32.gguf", "tiny-qwen3emb.tokens.txt", 0.9999},
    {"tiny-qwen3emb-q8_0.gguf", "tiny-qwen3emb.tokens.txt", 0.999},
};

inline std::string embed_path(const std::string& file) { return data_path("embeddings/" + file); }

// texts.txt: each text is followed by a line `__case__`.
inline std::vector<std::string> read_embed_texts() {
  std::ifstream in(embed_path("texts.txt"), std::ios::binary);
  std::vector<std::string> texts;
  std::string line, text;
  bool open = false;
  while (std::getline(in, line)) {
    if (line == "__case__") {
      texts.push_back(text);
      text.clear();
      open = false;
    } else {
      if (open) text += '\n';
      text += line;
      open = true;
    }
  }
  return texts;
}

inline std::vector<std::vector<int32_t>> read_token_lines(const std::string& file) {
  std::ifstream in(embed_path(file));
  std::vector<std::vector<int32_t>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::vector<int32_t> ids;
    int32_t v;
    while (s >> v) ids.push_back(v);
    out.push_back(ids);
  }
  return out;
}

inline double cosine(const float* a, const float* b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

// Every vector of `got` against the reference rows of `c`, starting at
// reference row `first`; reports the worst cosine.
inline void expect_matches_reference(const EmbedCase& c, const runtime::Embeddings& got, size_t first = 0,
                                     const char* how = "") {
  const auto ref = read_f32(embed_path(std::string(c.model) + ".emb.f32"));
  const auto dim = static_cast<size_t>(got.dim);
  ASSERT_GT(dim, 0u);
  ASSERT_LE((first + got.vectors.size()) * dim, ref.size()) << c.model;
  double worst = 1.0;
  for (size_t i = 0; i < got.vectors.size(); ++i) {
    ASSERT_EQ(got.vectors[i].size(), dim);
    double norm = 0;
    for (const float x : got.vectors[i]) norm += double(x) * x;
    EXPECT_NEAR(norm, 1.0, 1e-4) << c.model << " text " << first + i;
    const double cos = cosine(got.vectors[i].data(), ref.data() + (first + i) * dim, dim);
    worst = std::min(worst, cos);
    EXPECT_GE(cos, c.min_cosine) << c.model << " text " << first + i << " " << how;
  }
  std::printf("[embed] %-26s %-10s worst cosine %.7f over %zu texts\n", c.model, how, worst, got.vectors.size());
}

}  // namespace hearth::testing
