// Loads the reference vocabularies of tests/data/vocab and their cases.
#pragma once

#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
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
  // Metadata keys the reference ran without: the test loads a copy of
  // `gguf` with these keys left out (e.g. a vocabulary with no
  // tokenizer.ggml.pre, as some converters write them).
  std::vector<std::string> without_keys;
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
    if (json.contains("without_keys")) f.without_keys = json.at("without_keys").get<std::vector<std::string>>();
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

// Loads a copy of the tensor-less GGUF `source` with `without_keys` left out
// and `replaced` set (added at the end, or in place of a key of that name).
// The copy is a temporary file named after the running test, removed again
// once the tokenizer is built.
inline Result<Tokenizer> load_tokenizer_variant(const std::filesystem::path& source,
                                                const std::vector<std::string>& without_keys,
                                                const std::vector<gguf::KeyValue>& replaced = {},
                                                const Logger& logger = {}) {
  HEARTH_TRY(auto original, gguf::GgufFile::open(source));
  if (!original.tensors().empty()) {
    return make_error(ErrorCode::InvalidArgument, source.string() + ": a vocabulary-only GGUF was expected");
  }
  std::vector<gguf::KeyValue> metadata;
  for (const auto& kv : original.metadata()) {
    const auto is = [&](const auto& other) { return other == kv.key; };
    const bool dropped = std::any_of(without_keys.begin(), without_keys.end(), is);
    const bool overridden =
        std::any_of(replaced.begin(), replaced.end(), [&](const gguf::KeyValue& r) { return r.key == kv.key; });
    if (!dropped && !overridden) metadata.push_back(kv);
  }
  metadata.insert(metadata.end(), replaced.begin(), replaced.end());

  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string tag = info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : "variant";
  tag += "." + source.stem().string();
  for (char& ch : tag) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '-') ch = '_';
  }
  const auto path = std::filesystem::temp_directory_path() / ("hearth_" + tag + ".gguf");
  HEARTH_CHECK(gguf::GgufWriter::write_file(path, std::move(metadata), {}, original.alignment()));
  auto copy = gguf::GgufFile::open(path);
  Result<Tokenizer> tok = copy.ok() ? Tokenizer::from_gguf(*copy, logger) : Result<Tokenizer>(copy.take_error());
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
  return tok;
}

// The tokenizer a fixture's goldens were made with.
inline Tokenizer load_fixture_tokenizer(const VocabFixture& f) {
  if (f.without_keys.empty()) return load_tokenizer(f.gguf);
  auto tok = load_tokenizer_variant(f.gguf, f.without_keys);
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
