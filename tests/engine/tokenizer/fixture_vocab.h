// Loads the reference vocabularies of tests/data/vocab and their cases.
#pragma once

#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hearth::tokenizer::testing {

inline std::filesystem::path vocab_dir() { return std::filesystem::path(HEARTH_TEST_DATA_DIR) / "vocab"; }

struct VocabCase {
  std::string text;
  std::vector<TokenId> ids;
};

struct VocabFixture {
  std::string name;  // file stem, e.g. "vocab-llama3"
  std::filesystem::path gguf;
  bool add_special = true;
  bool parse_special = false;
  std::vector<VocabCase> cases;
};

// Every `*.tokens.json` next to its `.gguf`, sorted by name.
inline std::vector<VocabFixture> all_vocab_fixtures() {
  std::vector<VocabFixture> out;
  for (const auto& entry : std::filesystem::directory_iterator(vocab_dir())) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".tokens.json";
    if (file.size() <= suffix.size() || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    std::ifstream in(entry.path(), std::ios::binary);
    const auto json = nlohmann::json::parse(in);
    VocabFixture f;
    f.name = file.substr(0, file.size() - suffix.size());
    f.gguf = vocab_dir() / json.at("vocab").get<std::string>();
    f.add_special = json.at("add_special").get<bool>();
    f.parse_special = json.at("parse_special").get<bool>();
    for (const auto& c : json.at("cases")) {
      f.cases.push_back(VocabCase{c.at("text").get<std::string>(), c.at("ids").get<std::vector<TokenId>>()});
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

inline Tokenizer load_tokenizer(const std::filesystem::path& path) {
  auto file = gguf::GgufFile::open(path);
  if (!file.ok()) throw std::runtime_error(file.error().message);
  auto tok = Tokenizer::from_gguf(*file);
  if (!tok.ok()) throw std::runtime_error(tok.error().message);
  return std::move(tok).value();
}

inline std::string ids_to_string(const std::vector<TokenId>& ids) {
  std::string s;
  for (const TokenId id : ids) {
    if (!s.empty()) s += ' ';
    s += std::to_string(id);
  }
  return s;
}

}  // namespace hearth::tokenizer::testing
