// Helpers for the document tests: a database in a temporary folder and a small
// embedding function. The embedder is feature hashing (each lower-cased word adds
// one to a component chosen by its FNV-1a hash, then L2 normalisation): a real,
// if crude, embedding whose similarities can be worked out by hand, so storage
// and retrieval are tested without a model file.
#pragma once

#include <cctype>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "../storage_test_util.h"
#include "hearth/core/result.h"

namespace hearth::documents::testing {

inline std::vector<float> hashed_words(std::string_view text, std::size_t dim = 64) {
  std::vector<float> v(dim, 0.0f);
  std::string word;
  auto add = [&] {
    if (word.empty()) return;
    std::uint32_t h = 2166136261u;
    for (char c : word) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    v[h % dim] += 1.0f;
    word.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      add();
    }
  }
  add();
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  if (norm > 0) {
    for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
  }
  return v;
}

inline Result<std::vector<std::vector<float>>> embed_all(std::span<const std::string> texts) {
  std::vector<std::vector<float>> out;
  for (const auto& t : texts) out.push_back(hashed_words(t));
  return out;
}

}  // namespace hearth::documents::testing
